// Event delivery (replication/event_delivery.hpp): an event about an entity reaches
// exactly the clients that hold it (and its own player), never before its spawn, narrowed
// by the kind's audience; direct routes reach their players; a client's per-tick bound
// drops game events, never chat; and the bytes do not depend on the number of workers.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "loopback.hpp"

using namespace zone;
using test::Loopback;
using test::LoopClient;

namespace {

// The test world with three game events: hit (everyone), xp (owner), whisper-like mana
// (party).
world::WorldParams params_with_events() {
  world::WorldParams p = test::small_world(0);
  p.player_view_radius = 30.0;
  REQUIRE_FALSE(
      p.game.schema.add_event({"hit", protocol::Audience::kEveryone, {"amount"}, false, ""}));
  REQUIRE_FALSE(p.game.schema.add_event({"xp", protocol::Audience::kOwner, {"amount"}, false, ""}));
  REQUIRE_FALSE(p.game.schema.add_event({"mana", protocol::Audience::kParty, {}, false, ""}));
  p.parties.enabled = true;
  p.parties.max_size = 5;
  p.parties.full_range = false;
  return p;
}
constexpr std::uint16_t kHit = 1, kXp = 2, kMana = 3;

// Walks a player to (x, y) at full speed, then stops it.
void walk_to(Loopback& lb, const LoopClient& c, double x, double y) {
  for (int t = 0; t < 2000; ++t) {
    const world::Entity& me = lb.world.entity(c.slot);
    const double dx = x - me.x, dy = y - me.y;
    const double len = std::hypot(dx, dy);
    if (len < 0.3) break;
    lb.world.set_intent(c.slot, dx / std::max(1.0, len), dy / std::max(1.0, len));
    lb.step();
  }
  lb.world.set_intent(c.slot, 0, 0);
}

void emit(world::World& w, std::uint16_t kind, world::EntityId about, std::int32_t arg = 0,
          world::EventRoute route = world::EventRoute::kEntity,
          world::EntityId target = world::kNoEntity, world::GroupId group = world::kNoGroup) {
  const std::array<std::int32_t, 1> args = {arg};
  world::EventDraft d;
  d.kind = kind;
  d.route = route;
  d.entity = about;
  d.target = target;
  d.group = group;
  d.args = kind == kMana ? std::span<const std::int32_t>() : std::span<const std::int32_t>(args);
  if (kind == protocol::kChatEvent) d.text = "hello";
  REQUIRE_FALSE(w.events().emit(w.game().schema, d));
}

// The sequences a client received of events of `kind`.
std::vector<std::uint32_t> received(const LoopClient& c, std::uint16_t kind) {
  std::vector<std::uint32_t> out;
  for (const test::ReceivedEvent& e : c.events) {
    if (e.kind == kind) out.push_back(e.sequence);
  }
  return out;
}

// alice and bob 10 m apart in the middle, carol in a far corner.
struct Scene {
  Loopback lb;
  LoopClient* alice;
  LoopClient* bob;
  LoopClient* carol;
  explicit Scene(const world::WorldParams& p) : lb(p, test::rparams(64000)) {
    alice = &lb.connect("alice");
    bob = &lb.connect("bob");
    carol = &lb.connect("carol");
    walk_to(lb, *alice, 100, 100);
    walk_to(lb, *bob, 110, 100);
    walk_to(lb, *carol, 10, 10);
    lb.run(5);
    REQUIRE(alice->replica.find(bob->entity) != nullptr);
    REQUIRE(carol->replica.find(bob->entity) == nullptr);
  }
  // Emits `fn`'s events in the next tick (between the world's step and the AOI update, as
  // the rules do), then runs a few ticks.
  template <typename Fn>
  void tick_with(Fn&& fn) {
    lb.before_aoi = [&] { fn(lb.world); };
    lb.step();
    lb.before_aoi = nullptr;
    lb.run(2);
  }
};

}  // namespace

TEST_CASE("events: an event about an entity reaches exactly the clients that hold it") {
  Scene s(params_with_events());
  s.tick_with([&](world::World& w) { emit(w, kHit, s.bob->entity, 12); });
  CHECK(received(*s.alice, kHit).size() == 1);
  CHECK(received(*s.bob, kHit).size() == 1);  // its own player
  CHECK(received(*s.carol, kHit).empty());    // far away: never
  const test::ReceivedEvent& e = s.alice->events.back();
  CHECK(e.entity == s.bob->entity);
  REQUIRE(e.args.size() == 1);
  CHECK(e.args[0] == 12);
  CHECK(e.held);
  CHECK(s.lb.rep.stats().event_deliveries == 2);
}

TEST_CASE("events: never before the client has the entity's spawn") {
  Scene s(params_with_events());
  // dave arrives next to bob; events about bob every tick from his first tick on.
  LoopClient& dave = s.lb.connect("dave");
  s.lb.before_aoi = [&] { emit(s.lb.world, kHit, s.bob->entity, 1); };
  for (int t = 0; t < 200 && dave.replica.find(s.bob->entity) == nullptr; ++t) {
    if (t == 0) walk_to(s.lb, dave, 112, 100);
    s.lb.step();
  }
  for (int t = 0; t < 10; ++t) s.lb.step();
  s.lb.before_aoi = nullptr;
  REQUIRE(dave.replica.find(s.bob->entity) != nullptr);
  const auto got = received(dave, kHit);
  CHECK_FALSE(got.empty());
  for (const test::ReceivedEvent& e : dave.events) CHECK(e.held);
  // And every event he got was one alice (who held bob all along) got too.
  const auto alice_got = received(*s.alice, kHit);
  for (const std::uint32_t q : got) {
    CHECK(std::find(alice_got.begin(), alice_got.end(), q) != alice_got.end());
  }
  CHECK(got.size() < alice_got.size());  // the first ticks' were not his
}

TEST_CASE("events: the owner audience reaches its player alone, the party audience its party") {
  Scene s(params_with_events());
  s.lb.world.join_party(s.bob->slot, 5);
  s.lb.world.join_party(s.carol->slot, 5);  // far away: holds nothing of bob
  s.lb.run(3);
  s.tick_with([&](world::World& w) {
    emit(w, kXp, s.bob->entity, 30);
    emit(w, kMana, s.bob->entity);
  });
  CHECK(received(*s.bob, kXp).size() == 1);
  CHECK(received(*s.alice, kXp).empty());
  CHECK(received(*s.bob, kMana).size() == 1);
  CHECK(received(*s.alice, kMana).empty());  // holds bob, not of his party
  CHECK(received(*s.carol, kMana).empty());  // of his party, does not hold bob
  // alice joins: now she receives his party events.
  s.lb.world.join_party(s.alice->slot, 5);
  s.lb.run(3);
  s.tick_with([&](world::World& w) { emit(w, kMana, s.bob->entity); });
  CHECK(received(*s.alice, kMana).size() == 1);
}

TEST_CASE("events: direct routes reach their players whatever they hold") {
  Scene s(params_with_events());
  s.lb.world.join_party(s.alice->slot, 9);
  s.lb.world.join_party(s.carol->slot, 9);
  s.lb.run(3);
  const world::GroupId party = s.lb.world.entity(s.alice->slot).party;
  s.tick_with([&](world::World& w) {
    emit(w, protocol::kChatEvent, s.bob->entity, 3, world::EventRoute::kPlayer, s.carol->entity);
    emit(w, protocol::kChatEvent, s.alice->entity, 1, world::EventRoute::kParty, 0, party);
    emit(w, protocol::kChatEvent, s.bob->entity, 4, world::EventRoute::kZone);
  });
  const auto chat = [](const LoopClient& c) { return received(c, protocol::kChatEvent).size(); };
  CHECK(chat(*s.carol) == 3);  // whisper, party, zone
  CHECK(chat(*s.alice) == 2);  // party, zone
  CHECK(chat(*s.bob) == 1);    // zone
}

TEST_CASE("events: a client's per-tick bound drops game events, never chat lines") {
  Scene s(params_with_events());
  s.lb.rep.set_max_events_per_client(3);
  s.tick_with([&](world::World& w) {
    for (int i = 0; i < 5; ++i) emit(w, kHit, s.bob->entity, i);
    for (int i = 0; i < 5; ++i) emit(w, protocol::kChatEvent, s.bob->entity, 0);
  });
  CHECK(received(*s.alice, kHit).size() == 3);
  CHECK(received(*s.alice, protocol::kChatEvent).size() == 5);
  CHECK(s.lb.rep.stats().events_over_budget == 4);  // 2 for alice, 2 for bob
  // In the order they happened.
  const auto got = received(*s.alice, kHit);
  CHECK(std::is_sorted(got.begin(), got.end()));
}

TEST_CASE("events: more than 64 in a tick go as several messages, in order") {
  Scene s(params_with_events());
  s.tick_with([&](world::World& w) {
    for (int i = 0; i < 150; ++i) emit(w, kHit, s.bob->entity, i);
  });
  const auto got = received(*s.alice, kHit);
  REQUIRE(got.size() == 150);
  CHECK(std::is_sorted(got.begin(), got.end()));
  CHECK(s.alice->event_bytes.size() == 3);
}

TEST_CASE("events: the bytes each client receives do not depend on the number of workers") {
  auto run = [](std::size_t workers) {
    Scene s(params_with_events());
    s.lb.workers.resize(workers);
    for (int t = 0; t < 40; ++t) {
      s.tick_with([&](world::World& w) {
        emit(w, kHit, s.bob->entity, t);
        emit(w, kHit, s.alice->entity, -t);
        emit(w, protocol::kChatEvent, s.carol->entity, 4, world::EventRoute::kZone);
      });
    }
    std::vector<std::vector<test::Bytes>> out;
    for (const LoopClient& c : s.lb.clients) out.push_back(c.event_bytes);
    return out;
  };
  const auto one = run(0);
  CHECK(one == run(1));
  CHECK(one == run(3));
  CHECK_FALSE(one[0].empty());
}
