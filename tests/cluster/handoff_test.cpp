// Handoff between two zones of a world, at the level of their worlds, ghosts and
// replication (the bus and the sessions are the end-to-end tests' part): a player who
// walks into the neighbour's rectangle stops there, the neighbour turns its ghost of the
// player into its own entity, the old zone turns its entity into a ghost of the new one,
// and the client reconnects to the new zone under the same id. Every client of either
// zone sees one entity all along: no leave, no duplicate, no jump.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <thread>

#include "../replication/loopback.hpp"
#include "cluster/ghost_exchange.hpp"
#include "memory_bus.hpp"
#include "world/ghosts.hpp"

using namespace zone;
using namespace std::chrono_literals;
using test::Loopback;
using test::LoopClient;

namespace {

constexpr std::uint64_t kEpoch = 1'700'000'000'000'000;
constexpr double kGhostDistance = 40.0;
const aoi::Bounds kWest{{0.0, 0.0}, {200.0, 200.0}};
const aoi::Bounds kEast{{200.0, 0.0}, {400.0, 200.0}};

// The game of these zones: health and max_health, as the zone's built-in game has them.
world::GameTypes health_game() {
  world::GameTypes game;
  for (const char* name : {"health", "max_health"}) {
    protocol::FieldSpec f;
    f.name = name;
    f.bits = 16;
    game.schema.add_field(f);
  }
  game.defaults = {{{100, 100}}, {{100, 100}}};
  // One action that names an entity, for the actions forwarded across a border.
  protocol::ActionSpec strike;
  strike.name = "strike";
  strike.target = protocol::ActionTarget::kEntity;
  strike.args = 1;
  game.schema.add_action(strike);
  return game;
}

world::PropertyValues health(std::uint16_t type, std::int32_t now, std::int32_t max) {
  world::PropertyValues p;
  p.type = type;
  p.assign(std::vector<std::int32_t>{now, max});
  return p;
}

world::WorldParams zone_params(std::uint32_t index) {
  world::WorldParams p = test::small_world(0);
  p.game = health_game();
  p.zone_index = index;
  p.grid.bounds = index == 0 ? kWest : kEast;
  p.ghost_margin = kGhostDistance;
  p.open_areas = {index == 0 ? kEast : kWest};
  p.spawn_seed = 11 + index;
  return p;
}

// Steers `slot` towards (x, y) at up to full speed; true once within 0.1 m.
bool steer(world::World& w, std::uint32_t slot, double x, double y) {
  const world::Entity& e = w.entity(slot);
  const double dx = x - e.x, dy = y - e.y;
  const double len = std::hypot(dx, dy);
  if (len < 0.1) {
    w.set_intent(slot, 0, 0);
    return true;
  }
  const double scale = std::min(1.0, len / (w.params().player_max_speed * 0.05)) / len;
  w.set_intent(slot, dx * scale, dy * scale);
  return false;
}

// The entity as its zone offers it (the handoff's offer carries these fields).
world::World::Arrival arrival_of(const world::World& w, const world::Entity& e) {
  return {.id = e.id,
          .kind = e.kind,
          .x = e.x,
          .y = e.y,
          .heading = e.heading,
          .properties = w.property_values(w.find(e.id)->aoi.index),
          .name = e.name};
}

// How many live entities of `w` have `id`, and whether one of them is owned (no ghost).
struct Holding {
  int entities = 0;
  bool owned = false;
};
Holding holding(const world::World& w, world::EntityId id) {
  Holding h;
  w.for_each_entity([&](std::uint32_t, const world::Entity& e) {
    if (e.id != id) return;
    ++h.entities;
    h.owned = h.owned || !e.ghost;
  });
  return h;
}

// Two zones side by side, exchanging ghost lists every tick as the bus would (each
// zone's list of the tick before).
struct TwoZones {
  Loopback west{zone_params(0), test::rparams(64000)};
  Loopback east{zone_params(1), test::rparams(64000)};
  world::Ghosts west_ghosts{west.world, 4};
  world::Ghosts east_ghosts{east.world, 4};
  std::vector<world::GhostState> west_list, east_list;
  world::Ghosts::Clock::time_point now = world::Ghosts::Clock::now();
  std::function<void()> west_extra, east_extra;  // the handoff steps of a test

  TwoZones() {
    west.before_aoi = [this] {
      west_ghosts.apply(1, kEpoch, east_list, now);
      west_ghosts.follow(0.35);
      if (west_extra) west_extra();
      west_list.clear();
      world::collect_near(west.world, kEast, kGhostDistance, west_list);
    };
    east.before_aoi = [this] {
      east_ghosts.apply(0, kEpoch, west_list, now);
      east_ghosts.follow(0.35);
      if (east_extra) east_extra();
      east_list.clear();
      world::collect_near(east.world, kWest, kGhostDistance, east_list);
    };
  }
  void step() {
    now += 50ms;
    west.step();
    east.step();
  }
};

}  // namespace

TEST_CASE("handoff: a player walks into the next zone and every client sees one entity all along") {
  TwoZones z;
  LoopClient& alice = z.west.connect("alice");  // stays in the west, near the border
  LoopClient& bob = z.west.connect("bob");      // walks east
  LoopClient& carol = z.east.connect("carol");  // stays in the east, near the border
  const world::EntityId bob_id = bob.entity;
  for (int t = 0; t < 800; ++t) {
    const bool ready = steer(z.west.world, alice.slot, 185, 100) &
                       steer(z.west.world, bob.slot, 196, 110) &
                       steer(z.east.world, carol.slot, 215, 100);
    z.step();
    if (ready) break;
  }
  REQUIRE(z.west.world.entity(bob.slot).x == doctest::Approx(196).epsilon(0.001));
  REQUIRE(alice.replica.find(bob_id) != nullptr);
  REQUIRE(carol.replica.find(bob_id) != nullptr);  // as a ghost, across the border

  // The handoff, as the zones' exchanges run it: west offers the crossing player, east
  // takes it over at once and answers, west gets the answer a tick later.
  std::optional<std::uint32_t> offered;      // west's slot of bob, offered
  std::optional<std::uint32_t> taken;        // east's slot of bob, answered
  std::optional<std::uint32_t> answer_seen;  // east's slot, once west has the answer
  LoopClient* bob_east = nullptr;
  double offered_x = 0.0, offered_y = 0.0;
  z.west_extra = [&] {
    if (taken && !answer_seen) {
      answer_seen = taken;
      z.west.disconnect(bob);  // the Transfer; the session ends
      z.west.world.release(*offered);
      z.west_ghosts.adopt(1, *offered, z.now);
      return;
    }
    for (const std::uint32_t slot : z.west.world.crossings()) {
      CHECK(slot == bob.slot);
      offered = slot;
      offered_x = z.west.world.entity(slot).x;
      offered_y = z.west.world.entity(slot).y;
    }
  };
  z.east_extra = [&] {
    if (offered && !taken) {
      const world::Entity& e = z.west.world.entity(*offered);
      z.east_ghosts.release(bob_id);
      const std::uint32_t slot = z.east.world.adopt(arrival_of(z.west.world, e));
      REQUIRE(slot != world::World::kNoSlot);
      taken = slot;
    }
    if (answer_seen && bob_east == nullptr) {
      // The client reconnects with its token a few ticks after the Transfer.
      z.east.world.attach_player(*answer_seen);
      bob_east = &z.east.attach(*answer_seen);
    }
  };

  for (int t = 0; t < 300; ++t) {
    if (bob_east == nullptr) {
      if (bob.connected) steer(z.west.world, bob.slot, 206, 110);
    } else {
      steer(z.east.world, bob_east->slot, 206, 110);
    }
    z.step();
    // Never lost, never two of it in one zone; while the answer travels both zones hold
    // it (standing still), then only the east owns it.
    const Holding w = holding(z.west.world, bob_id), e = holding(z.east.world, bob_id);
    CHECK(w.entities == 1);
    CHECK(e.entities == 1);
    CHECK((w.owned || e.owned));
    if (answer_seen) CHECK_FALSE(w.owned);
    // The clients on both sides see it all along, exactly as their zone has it.
    CHECK(alice.replica.find(bob_id) != nullptr);
    CHECK(carol.replica.find(bob_id) != nullptr);
    CHECK_MESSAGE(z.west.diff(alice).empty(), z.west.diff(alice));
    CHECK_MESSAGE(z.east.diff(carol).empty(), z.east.diff(carol));
  }
  REQUIRE(offered.has_value());
  REQUIRE(bob_east != nullptr);
  // It left the west one step beyond the edge, and the east took it over there.
  CHECK(offered_x > 200.0);
  CHECK(offered_x <= 200.0 + 7.0 * 0.05 + 1e-9);
  CHECK(offered_y == doctest::Approx(110).epsilon(0.01));
  // Same id, and it walked on in the east (in alice's and carol's view all the way); its
  // new client is exact.
  CHECK(bob_east->entity == bob_id);
  CHECK(z.east.world.entity(bob_east->slot).x == doctest::Approx(206).epsilon(0.001));
  CHECK(z.east.world.player_count() == 2);
  CHECK(z.west.world.player_count() == 1);
  CHECK_MESSAGE(z.east.diff(*bob_east).empty(), z.east.diff(*bob_east));
  // Nobody saw bob leave or arrive again: alice and carol each saw it enter once.
  CHECK_MESSAGE(alice.replica.violations().empty(), test::violations_of(alice));
  CHECK_MESSAGE(carol.replica.violations().empty(), test::violations_of(carol));
  CHECK_MESSAGE(bob_east->replica.violations().empty(), test::violations_of(*bob_east));
  CHECK(alice.replica.leaves() == 0);
  CHECK(carol.replica.leaves() == 0);
}

TEST_CASE("handoff: a player taken back steps inside and may not cross again for a while") {
  world::World w(zone_params(0));
  const std::uint32_t slot = w.spawn_player("bob");
  // Walk east until the player crosses.
  std::optional<int> crossed_at;
  for (int t = 0; t < 2000 && !crossed_at; ++t) {
    w.set_intent(slot, 1.0, 0.0);
    w.step(0.05);
    w.update_aoi();
    if (!w.crossings().empty()) crossed_at = t;
  }
  REQUIRE(crossed_at.has_value());
  const world::Entity& e = w.entity(slot);
  CHECK(w.crossing(slot));
  CHECK(w.handoff_rows() == 1);
  CHECK(e.x > 200.0);
  CHECK(e.x <= 200.0 + 7.0 * 0.05 + 1e-9);
  // Standing still while crossing, whatever the client asks.
  const double x = e.x;
  w.set_intent(slot, 1.0, 0.0);
  w.step(0.05);
  CHECK(e.x == x);
  CHECK(w.crossings().empty());  // offered once, not every tick
  CHECK(e.vx == 0.0);

  // Refused: back at the edge (less than a step away), and no crossing for 10 ticks.
  w.take_back(slot, 10);
  CHECK_FALSE(w.crossing(slot));
  CHECK(w.handoff_rows() == 1);  // its wait before it may cross again
  CHECK(e.x == 200.0);
  for (int t = 0; t < 10; ++t) {
    w.set_intent(slot, 1.0, 0.0);
    w.step(0.05);
    w.update_aoi();
    CHECK(w.crossings().empty());
    CHECK(e.x == 200.0);  // stopped by the edge meanwhile
  }
  CHECK(w.handoff_rows() == 0);  // the wait is over: nothing left in the table
  w.set_intent(slot, 1.0, 0.0);
  w.step(0.05);
  CHECK(w.crossings().size() == 1);
}

TEST_CASE("handoff: a zone alone, or an edge with no neighbour, stops players as before") {
  world::WorldParams p = zone_params(0);
  p.open_areas.clear();
  world::World alone(p);
  const std::uint32_t a = alone.spawn_player("a");
  world::World west(zone_params(0));
  const std::uint32_t b = west.spawn_player("b");
  for (int t = 0; t < 2000; ++t) {
    alone.set_intent(a, 1.0, 0.0);
    west.set_intent(b, 0.0, 1.0);  // north: no zone there
    alone.step(0.05);
    west.step(0.05);
    CHECK(alone.crossings().empty());
    CHECK(west.crossings().empty());
  }
  // Nobody stepping out into a neighbour's rectangle: the handoff table stays empty.
  CHECK(alone.handoff_rows() == 0);
  CHECK(west.handoff_rows() == 0);
  CHECK(alone.entity(a).x == 200.0);
  CHECK(west.entity(b).y == 200.0);
}

TEST_CASE("handoff: adopt refuses an id the zone owns, and closes a ghost's gap by one step") {
  world::World east(zone_params(1));
  const std::uint32_t own = east.spawn_player("own");
  CHECK(east.adopt({.id = east.entity(own).id,
                    .kind = world::EntityKind::kPlayer,
                    .x = 250,
                    .y = 50,
                    .properties = health(0, 1, 1),
                    .name = "x"}) == world::World::kNoSlot);
  // NPCs only to a zone whose NPCs wander (these stand).
  CHECK(east.adopt({.id = 77,
                    .kind = world::EntityKind::kNpc,
                    .x = 250,
                    .y = 50,
                    .heading = 0,
                    .properties = health(0, 1, 1),
                    .name = "npc"}) == world::World::kNoSlot);
  east.step(0.05);  // sets the AOI's per-tick bound (7 m/s * 0.05 s)
  const std::uint32_t g =
      east.spawn_ghost(42, world::EntityKind::kPlayer, "bob", health(0, 100, 100));
  east.set_ghost_state(g, 201.0, 50.0, 0.0, 0.0, 0.0, health(0, 100, 100));
  const std::uint32_t slot = east.adopt({.id = 42,
                                         .kind = world::EntityKind::kPlayer,
                                         .x = 202.0,
                                         .y = 50.0,
                                         .properties = health(0, 90, 100),
                                         .name = "bob"});
  REQUIRE(slot == g);  // the ghost itself: same slot, so no AOI event anywhere
  const world::Entity& e = east.entity(slot);
  CHECK_FALSE(e.ghost);
  // It trailed its owner by a metre: it walks there at the speed bound, no jump.
  CHECK(e.x == 201.0);
  east.step(0.05);
  CHECK(e.x == doctest::Approx(201.35));
  east.step(0.05);
  CHECK(e.x == doctest::Approx(201.70));
  east.step(0.05);
  CHECK(e.x == 202.0);
  CHECK_FALSE(east.catching_up(slot));
  CHECK(east.handoff_rows() == 0);  // caught up: its row is gone
  CHECK(east.properties(slot)[0] == 90);
  CHECK(east.properties(slot)[1] == 100);
  CHECK(east.ghost_count() == 0);
  CHECK(east.player_count() == 2);
  CHECK_FALSE(east.aoi().is_observer(e.aoi));  // until its client comes
  east.attach_player(slot);
  CHECK(east.aoi().is_observer(e.aoi));
}

TEST_CASE("handoff: wandering NPCs cross into a neighbour and are taken over there") {
  world::WorldParams wp = zone_params(0);
  wp.npcs.count = 40;
  wp.npcs.behaviour = world::NpcBehaviour::kWander;
  wp.npcs.idle_fraction = 0.0;
  world::World west(wp);
  west.spawn_npcs();
  world::WorldParams ep = zone_params(1);
  ep.npcs.behaviour = world::NpcBehaviour::kWander;
  world::World east(ep);
  std::optional<std::uint32_t> crossed;
  for (int t = 0; t < 20000 && !crossed; ++t) {
    west.step(0.05);
    west.update_aoi();
    for (const std::uint32_t slot : west.crossings()) {
      if (west.entity(slot).kind == world::EntityKind::kNpc) crossed = slot;
    }
  }
  REQUIRE(crossed.has_value());
  const world::Entity& npc = west.entity(*crossed);
  CHECK(west.crossing(*crossed));
  CHECK(npc.x > 200.0);
  const double x = npc.x, y = npc.y;
  west.step(0.05);
  CHECK(npc.x == x);  // stands still while offered
  CHECK(npc.y == y);

  east.step(0.05);
  const std::uint32_t slot = east.adopt(arrival_of(west, npc));
  REQUIRE(slot != world::World::kNoSlot);
  CHECK(east.npc_count() == 1);
  west.release(*crossed);
  CHECK(west.npc_count() == 39);
  CHECK(npc.ghost);
  // It walks on in the east, by the east's rules.
  const world::Entity& taken = east.entity(slot);
  double walked = 0.0;
  for (int t = 0; t < 100; ++t) {
    const double x0 = taken.x, y0 = taken.y;
    east.step(0.05);
    east.update_aoi();
    const double d = std::hypot(taken.x - x0, taken.y - y0);
    CHECK(d <= ep.npcs.speed * 0.05 + 1e-9);
    walked += d;
  }
  CHECK(walked > 1.0);
}

TEST_CASE("handoff: patrolling NPCs keep to their zone") {
  world::WorldParams wp = zone_params(0);
  wp.npcs.count = 40;
  wp.npcs.behaviour = world::NpcBehaviour::kPatrol;
  world::World west(wp);
  west.spawn_npcs();
  for (int t = 0; t < 4000; ++t) {
    west.step(0.05);
    CHECK(west.crossings().empty());
  }
  world::World east(zone_params(1));  // idle NPCs: it takes none
  CHECK(east.adopt({.id = 5,
                    .kind = world::EntityKind::kNpc,
                    .x = 250,
                    .y = 50,
                    .heading = 0,
                    .properties = health(0, 1, 1),
                    .name = "npc"}) == world::World::kNoSlot);
}

// ---- The exchange: handoffs over a bus whose deliveries the tests control. ----------

namespace {

// The zone's sessions, as far as handoffs need them.
struct FakeSessions final : cluster::HandoffHooks {
  const world::World& world;
  explicit FakeSessions(const world::World& w) : world(w) {}
  struct Arrival {
    world::EntityId id;
    std::uint32_t slot;
    cluster::TransferToken token;
    bool arrived = false;
    bool cancelled = false;
  };
  std::vector<Arrival> arrivals;
  std::vector<std::pair<std::uint32_t, cluster::Destination>> left;
  std::vector<cluster::RemoteChat> chats;  // lines from other zones, as delivered
  void remote_chat(const cluster::RemoteChat& line) override { chats.push_back(line); }
  std::vector<std::pair<cluster::LoginNotice, bool>> logins;  // from other zones, as heard
  void remote_login(const cluster::LoginNotice& login, bool wins_tie) override {
    logins.emplace_back(login, wins_tie);
  }
  struct Acted {
    std::uint32_t actor_slot;
    std::uint16_t action;
    world::EntityId target;
    std::vector<std::int32_t> args;
  };
  std::vector<Acted> acted;  // neighbours' actions, as the rules would get them
  protocol::ActionStatus remote_action(std::uint32_t actor_slot, std::uint16_t action,
                                       world::EntityId target,
                                       std::span<const std::int32_t> args) override {
    acted.push_back({actor_slot, action, target, {args.begin(), args.end()}});
    return protocol::ActionStatus::Ok;
  }
  bool can_take_player() const override { return true; }
  void player_left(std::uint32_t slot, const cluster::Destination& to) override {
    left.emplace_back(slot, to);
  }
  void player_arrived(std::uint32_t slot, const cluster::TransferToken& token, std::uint64_t,
                      std::uint64_t) override {
    arrivals.push_back({world.entity(slot).id, slot, token});
  }
  bool cancel_arrival(world::EntityId id) override {
    for (Arrival& a : arrivals) {
      if (a.id == id && !a.arrived && !a.cancelled) {
        a.cancelled = true;
        return true;
      }
    }
    return false;
  }
};

struct ExchangeZone {
  world::World world;
  FakeSessions sessions{world};
  cluster::GhostExchange exchange;
  std::uint32_t tick = 0;
  ExchangeZone(std::uint32_t index, test::MemoryBroker& broker)
      : world(zone_params(index)), exchange(params(index), world, broker.endpoint()) {}
  static cluster::ExchangeParams params(std::uint32_t index) {
    cluster::ExchangeParams p;
    p.subject_prefix = "t";
    p.self_index = index;
    p.self_name = index == 0 ? "west" : "east";
    p.neighbours = {{1 - index, index == 0 ? "east" : "west", index == 0 ? kEast : kWest}};
    p.world_zones = {index == 0 ? "east" : "west"};
    p.ghost_distance = kGhostDistance;
    p.ghost_timeout = 5s;
    p.id_reuse_ticks = 4;
    p.game_host = "127.0.0.1";
    p.game_port = static_cast<std::uint16_t>(7000 + index);
    p.handoff_timeout = 100ms;
    p.cross_cooldown_ticks = 10;
    return p;
  }
  void step() {
    world.step(0.05);
    exchange.tick(++tick, 0.35, sessions);
    world.update_aoi();
  }
};

struct ExchangeWorld {
  test::MemoryBroker broker;
  ExchangeZone west{0, broker};
  ExchangeZone east{1, broker};
  std::uint32_t bob = 0;  // west's slot
  world::EntityId bob_id = 0;

  ExchangeWorld() {
    bob = west.world.spawn_player("bob");
    bob_id = west.world.entity(bob).id;
    for (int t = 0; t < 2000 && !steer(west.world, bob, 199.9, 110); ++t) step();
    REQUIRE(west.world.entity(bob).x == doctest::Approx(199.9));
  }
  void step() {
    west.step();
    east.step();
    // Never lost, never two of it in one zone.
    const Holding w = holding(west.world, bob_id), e = holding(east.world, bob_id);
    CHECK(w.entities == 1);
    CHECK(e.entities <= 1);
    CHECK((w.owned || e.owned));
  }
  // Steps in real time (the handoff's timeouts are wall-clock) until `done` or 2 s.
  template <typename Done>
  bool run_until(Done done) {
    for (int t = 0; t < 400; ++t) {
      step();
      if (done()) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
  bool east_owns() const {
    const world::Entity* e = east.world.find(bob_id);
    return e != nullptr && !e->ghost && west.world.find(bob_id)->ghost;
  }
  bool west_owns() const {
    const world::Entity* e = east.world.find(bob_id);
    return !west.world.find(bob_id)->ghost && (e == nullptr || e->ghost);
  }
};

// The kind byte of a handoff message (2: answer, 3: cancel) on a subject.
bool is_handoff(const bus::BusMessage& m, const std::string& subject, std::uint8_t kind) {
  return m.subject == subject && m.data.size() > 2 && m.data[0] == cluster::kTransferMagic &&
         m.data[2] == kind;
}

}  // namespace

TEST_CASE("handoff exchange: offer, answer, Transfer, and the old zone's ghost of it") {
  ExchangeWorld z;
  const std::uint32_t east_ghost = z.east.world.find(z.bob_id)->aoi.index;
  REQUIRE(z.run_until([&] {
    z.west.world.set_intent(z.bob, 1.0, 0.0);
    return z.east_owns();
  }));
  // East took its ghost over in place; west sent the client east's address and token.
  CHECK(z.east.world.find(z.bob_id)->aoi.index == east_ghost);
  REQUIRE(z.west.sessions.left.size() == 1);
  const cluster::Destination& to = z.west.sessions.left.front().second;
  CHECK(to.zone == "east");
  CHECK(to.host == "127.0.0.1");
  CHECK(to.port == 7001);
  REQUIRE(z.east.sessions.arrivals.size() == 1);
  CHECK(to.token == z.east.sessions.arrivals.front().token);
  z.east.sessions.arrivals.front().arrived = true;
  z.east.world.attach_player(z.east.sessions.arrivals.front().slot);
  for (int t = 0; t < 60; ++t) z.step();
  CHECK(z.east_owns());
  CHECK(z.east.exchange.stats().handoffs_in_accepted == 1);
  CHECK(z.east.exchange.stats().handoffs_in_cancelled == 0);
  CHECK(z.west.exchange.stats().handoffs_out_accepted == 1);
}

TEST_CASE("handoff exchange: a lost answer - the old zone keeps the player, the copy turns back") {
  ExchangeWorld z;
  const std::uint32_t east_ghost = z.east.world.find(z.bob_id)->aoi.index;
  bool answer_dropped = false, cancel_dropped = false;
  bool drop_cancel = false;
  SUBCASE("the cancel arrives") {}
  SUBCASE("the cancel is lost too: the old zone's lists tell") {
    drop_cancel = true;
  }
  z.broker.filter = [&](const bus::BusMessage& m) {
    if (!answer_dropped && is_handoff(m, "t.handoff.west.east", 2)) {
      answer_dropped = true;
      return test::MemoryBroker::Fate::kDrop;
    }
    if (drop_cancel && !cancel_dropped && is_handoff(m, "t.handoff.east.west", 3)) {
      cancel_dropped = true;
      return test::MemoryBroker::Fate::kDrop;
    }
    return test::MemoryBroker::Fate::kDeliver;
  };
  // Bob crosses once, then stands still.
  bool crossed = false;
  REQUIRE(z.run_until([&] {
    z.west.world.set_intent(z.bob, crossed ? 0.0 : 1.0, 0.0);
    crossed = crossed || z.west.world.crossing(z.bob);
    return answer_dropped && z.east.exchange.stats().handoffs_in_cancelled == 1;
  }));
  CHECK(cancel_dropped == drop_cancel);
  // West took it back (inside, no Transfer); east's copy is its ghost again, same slot.
  CHECK(z.west_owns());
  CHECK(z.west.world.entity(z.bob).x <= 200.0);
  CHECK(z.west.sessions.left.empty());
  CHECK(z.west.exchange.stats().handoffs_out_timed_out == 1);
  CHECK(z.east.world.find(z.bob_id)->aoi.index == east_ghost);
  CHECK(z.east.sessions.arrivals.size() == 1);
  CHECK(z.east.sessions.arrivals.front().cancelled);
}

TEST_CASE("handoff exchange: a late cancel of an older offer leaves the newer handoff alone") {
  ExchangeWorld z;
  bool answer_dropped = false;
  z.broker.filter = [&](const bus::BusMessage& m) {
    if (!answer_dropped && is_handoff(m, "t.handoff.west.east", 2)) {
      answer_dropped = true;
      return test::MemoryBroker::Fate::kDrop;
    }
    if (is_handoff(m, "t.handoff.east.west", 3) && z.broker.held.empty()) {
      return test::MemoryBroker::Fate::kHold;  // the first cancel is late
    }
    return test::MemoryBroker::Fate::kDeliver;
  };
  // Bob keeps walking east: offered, kept (no answer; east gives its copy back when
  // west's lists go on naming him), and after the cooldown offered again. The moment east
  // takes the second offer, before west has its answer, the first offer's cancel
  // arrives: it must not undo the second handoff.
  bool late_delivered = false;
  REQUIRE(z.run_until([&] {
    z.west.world.set_intent(z.bob, 1.0, 0.0);
    if (!late_delivered && z.east.sessions.arrivals.size() == 2) {
      REQUIRE(z.broker.held.size() == 1);
      z.broker.deliver(z.broker.held.front());
      late_delivered = true;
    }
    return late_delivered && z.east_owns() && z.west.sessions.left.size() == 1;
  }));
  CHECK(z.west.exchange.stats().handoffs_out_timed_out == 1);
  CHECK(z.west.exchange.stats().handoffs_out_accepted == 1);
  for (int t = 0; t < 20; ++t) z.step();
  CHECK(z.east_owns());
  CHECK(z.east.exchange.stats().handoffs_in_cancelled == 1);  // the first copy only
  CHECK(z.east.sessions.arrivals.front().cancelled);
  CHECK_FALSE(z.east.sessions.arrivals.back().cancelled);
}

// ---- What crosses the bus is checked: the sender its subject names, and names. ------

namespace {

// West with two neighbours, east (index 1) and north (index 2), and an outsider on the
// same bus that publishes what it likes, as a third NATS client would.
struct TrustZone {
  test::MemoryBroker broker;
  world::World world{zone_params(0)};
  FakeSessions sessions{world};
  cluster::GhostExchange exchange{params(), world, broker.endpoint()};
  std::unique_ptr<bus::Bus> outsider = broker.endpoint();
  std::uint32_t tick = 0;

  static cluster::ExchangeParams params() {
    cluster::ExchangeParams p = ExchangeZone::params(0);
    p.neighbours.push_back({2, "north", {{0.0, 200.0}, {200.0, 400.0}}});
    p.world_zones.push_back("north");
    return p;
  }
  void step() {
    world.step(0.05);
    exchange.tick(++tick, 0.35, sessions);
    world.update_aoi();
  }
  void send(const std::string& subject, const std::vector<std::uint8_t>& bytes) {
    outsider->publish(subject, bytes);
  }
};

// A ghost list of `source` naming one NPC near west's border.
std::vector<std::uint8_t> ghost_list(std::uint32_t source, const std::string& name) {
  cluster::GhostMessage m;
  m.source = source;
  m.tick = 1;
  m.epoch = kEpoch;
  m.sent_us = kEpoch;
  world::GhostState g;
  g.id = world::first_entity_id(source) + 6;
  g.kind = world::EntityKind::kNpc;
  g.x = 210.0;
  g.y = 50.0;
  g.properties = health(0, 100, 100);
  g.name = name;
  m.ghosts.push_back(g);
  std::vector<std::uint8_t> bytes;
  cluster::encode(m, bytes);
  return bytes;
}

std::vector<std::uint8_t> player_offer(std::uint32_t sender, world::EntityId id,
                                       const std::string& name) {
  cluster::TransferMessage m;
  m.kind = cluster::TransferKind::kOffer;
  m.sender = sender;
  m.request = id;
  m.entity = {.id = id,
              .kind = world::EntityKind::kPlayer,
              .x = 190.0,
              .y = 50.0,
              .heading = 0.0,
              .properties = health(0, 100, 100),
              .name = name};
  std::vector<std::uint8_t> bytes;
  cluster::encode(m, bytes);
  return bytes;
}

// Sends `bytes` on `subject` once a tick for 20 ticks (past the ghosts' id-reuse delay);
// whether the ghost `id` was in west's world then.
bool ghost_appears(TrustZone& z, const std::string& subject, const std::vector<std::uint8_t>& bytes,
                   world::EntityId id) {
  for (int t = 0; t < 20; ++t) {
    z.send(subject, bytes);
    z.step();
    const world::Entity* e = z.world.find(id);
    if (e != nullptr && e->ghost) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("bus trust: ghost lists whose sender is not the zone their subject names are dropped") {
  TrustZone z;
  const world::EntityId id = world::first_entity_id(1) + 6;
  // East's list, sent on north's subject: north speaking for east.
  CHECK_FALSE(ghost_appears(z, "t.ghosts.west.north", ghost_list(1, "npc-7"), id));
  CHECK(z.exchange.stats().dropped_wrong_sender == 20);
  // On east's own subject, the same list is east's and applies.
  CHECK(ghost_appears(z, "t.ghosts.west.east", ghost_list(1, "npc-7"), id));
  CHECK(z.exchange.stats().dropped_wrong_sender == 20);
}

TEST_CASE("bus trust: ghost names are held to the player-name rule") {
  const world::EntityId id = world::first_entity_id(1) + 6;
  for (const std::string& bad :
       std::vector<std::string>{"evil\u202Eeman", "esc\x1b[31mred", std::string(33, 'a'),
                                std::string("nul\0byte", 8), std::string("\xff\xfe")}) {
    CAPTURE(bad);
    TrustZone z;
    CHECK_FALSE(ghost_appears(z, "t.ghosts.west.east", ghost_list(1, bad), id));
    CHECK(z.exchange.stats().dropped_bad_name == 20);
    CHECK(z.exchange.stats().messages_in == 0);
  }
  TrustZone z;
  CHECK(ghost_appears(z, "t.ghosts.west.east", ghost_list(1, "Zoë 🌲"), id));
  CHECK(z.exchange.stats().dropped_bad_name == 0);
}

TEST_CASE("bus trust: a handoff offer with a name a Hello could not carry is refused") {
  TrustZone z;
  z.outsider->subscribe("t.handoff.east.west");  // west's answers to east
  const world::EntityId id = world::first_entity_id(1) + 9;
  const auto answer = [&]() -> std::optional<cluster::TransferMessage> {
    std::vector<bus::BusMessage> got;
    z.outsider->take(got);
    for (const bus::BusMessage& m : got) {
      cluster::TransferMessage t;
      if (cluster::decode(m.data, t) == cluster::TransferDecodeError::kNone &&
          t.kind == cluster::TransferKind::kAnswer) {
        return t;
      }
    }
    return std::nullopt;
  };
  for (const std::string& bad : std::vector<std::string>{"\u202Eevil", "esc\x1b]0;x\x07"}) {
    CAPTURE(bad);
    z.send("t.handoff.west.east", player_offer(1, id, bad));
    z.step();
    const auto a = answer();
    REQUIRE(a.has_value());
    CHECK(a->result == cluster::TransferResult::kBadName);
    CHECK(z.world.find(id) == nullptr);
    CHECK(z.sessions.arrivals.empty());
  }
  CHECK(z.exchange.stats().handoff_offers_bad_name == 2);
  CHECK(z.exchange.stats().handoffs_in_accepted == 0);
  // An offer for east sent on north's subject is north speaking for east: dropped, unanswered.
  z.send("t.handoff.west.north", player_offer(1, id, "carol"));
  z.step();
  CHECK_FALSE(answer().has_value());
  CHECK(z.exchange.stats().handoff_messages_dropped == 1);
  CHECK(z.world.find(id) == nullptr);
  // The same offer with a good name, from east on east's subject, is taken.
  z.send("t.handoff.west.east", player_offer(1, id, "carol"));
  z.step();
  const auto a = answer();
  REQUIRE(a.has_value());
  CHECK(a->result == cluster::TransferResult::kAccepted);
  REQUIRE(z.world.find(id) != nullptr);
  CHECK(z.world.find(id)->name == "carol");
  CHECK(z.sessions.arrivals.size() == 1);
}

// ---- Chat across zones (docs/world.md, "Chat across zones"). ------------------------

TEST_CASE("world chat: a line round-trips through its codec - damaged ones are refused") {
  const cluster::RemoteChat line{.channel = 3,
                                 .speaker = 77,
                                 .guild_key = 0,
                                 .speaker_name = "alice",
                                 .to = "Zoë 🌲",
                                 .text = "meet at the gate"};
  std::vector<std::uint8_t> bytes;
  cluster::encode(line, bytes);
  cluster::RemoteChat got;
  REQUIRE(cluster::decode(bytes, got) == cluster::ChatDecodeError::kNone);
  CHECK(got.channel == 3);
  CHECK(got.speaker == 77);
  CHECK(got.speaker_name == "alice");
  CHECK(got.to == line.to);
  CHECK(got.text == line.text);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CHECK(cluster::decode(std::span(bytes).first(n), got) != cluster::ChatDecodeError::kNone);
  }
  auto trailing = bytes;
  trailing.push_back(0);
  CHECK(cluster::decode(trailing, got) == cluster::ChatDecodeError::kTrailing);
  // A whisper without a receiver, a guild line without a key, the say channel: refused.
  for (const cluster::RemoteChat& bad : {cluster::RemoteChat{3, 77, 0, "alice", "", "hi"},
                                         cluster::RemoteChat{2, 77, 0, "alice", "", "hi"},
                                         cluster::RemoteChat{0, 77, 5, "alice", "bob", "hi"}}) {
    cluster::encode(bad, bytes);
    CHECK(cluster::decode(bytes, got) == cluster::ChatDecodeError::kBadValue);
  }
}

TEST_CASE("world chat: a zone's lines reach the others - forged and bad ones are refused") {
  test::MemoryBroker broker;
  ExchangeZone west{0, broker};
  ExchangeZone east{1, broker};
  west.exchange.publish_chat({.channel = 3,
                              .speaker = 5,
                              .guild_key = 0,
                              .speaker_name = "alice",
                              .to = "carol",
                              .text = "psst"});
  west.exchange.publish_chat({.channel = 2,
                              .speaker = 5,
                              .guild_key = 0xBEEF,
                              .speaker_name = "alice",
                              .to = {},
                              .text = "guild, rally"});
  east.step();
  REQUIRE(east.sessions.chats.size() == 2);
  CHECK(east.sessions.chats[0].to == "carol");
  CHECK(east.sessions.chats[1].guild_key == 0xBEEF);
  CHECK(east.exchange.stats().chat_in == 2);
  CHECK(west.exchange.stats().chat_out == 2);
  west.step();
  CHECK(west.sessions.chats.empty());  // its own lines do not come back to it

  // A chat line on another subject (a ghost subject): refused. A name or a line the name
  // rule refuses: refused.
  std::unique_ptr<bus::Bus> outsider = broker.endpoint();
  std::vector<std::uint8_t> bytes;
  cluster::encode(cluster::RemoteChat{3, 5, 0, "alice", "carol", "hi"}, bytes);
  outsider->publish("t.ghosts.east.west", bytes);
  cluster::encode(cluster::RemoteChat{3, 5, 0, "al\u202Eice", "carol", "hi"}, bytes);
  outsider->publish("t.chat.west", bytes);
  cluster::encode(cluster::RemoteChat{3, 5, 0, "alice", "carol", "bell\x07"}, bytes);
  outsider->publish("t.chat.west", bytes);
  east.step();
  CHECK(east.sessions.chats.size() == 2);
  CHECK(east.exchange.stats().chat_refused == 3);
}

// ---- One character, online once (docs/world.md). ------------------------------------

TEST_CASE("world logins: a notice round-trips through its codec - damaged ones are refused") {
  const cluster::LoginNotice login{
      .account = 0xFEDCBA9876543210ULL, .character = 42, .login_ms = 1'796'000'000'123};
  std::vector<std::uint8_t> bytes;
  cluster::encode(login, bytes);
  CHECK(bytes.size() == 26);
  cluster::LoginNotice got;
  REQUIRE(cluster::decode(bytes, got) == cluster::LoginDecodeError::kNone);
  CHECK(got.account == login.account);
  CHECK(got.character == 42);
  CHECK(got.login_ms == login.login_ms);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CHECK(cluster::decode(std::span(bytes).first(n), got) != cluster::LoginDecodeError::kNone);
  }
  auto trailing = bytes;
  trailing.push_back(0);
  CHECK(cluster::decode(trailing, got) == cluster::LoginDecodeError::kTrailing);
  auto version = bytes;
  version[1] = 2;
  CHECK(cluster::decode(version, got) == cluster::LoginDecodeError::kVersion);
  // No account, no character, no time: refused.
  for (const cluster::LoginNotice& bad :
       {cluster::LoginNotice{0, 42, 5}, cluster::LoginNotice{7, 0, 5},
        cluster::LoginNotice{7, 42, 0}, cluster::LoginNotice{7, 42, -5}}) {
    cluster::encode(bad, bytes);
    CHECK(cluster::decode(bytes, got) == cluster::LoginDecodeError::kBadValue);
  }
}

TEST_CASE("world logins: a zone's logins reach every other zone - forged ones are refused") {
  test::MemoryBroker broker;
  ExchangeZone west{0, broker};
  ExchangeZone east{1, broker};
  west.exchange.publish_login({.account = 3, .character = 9, .login_ms = 1000});
  east.step();
  REQUIRE(east.sessions.logins.size() == 1);
  CHECK(east.sessions.logins[0].first.character == 9);
  CHECK(east.sessions.logins[0].first.login_ms == 1000);
  // East's name sorts before west's: at the same millisecond, west's login wins (east's
  // copy would leave).
  CHECK(east.sessions.logins[0].second);
  CHECK(east.exchange.stats().logins_in == 1);
  CHECK(west.exchange.stats().logins_out == 1);
  east.exchange.publish_login({.account = 3, .character = 9, .login_ms = 1000});
  west.step();
  REQUIRE(west.sessions.logins.size() == 1);
  CHECK_FALSE(west.sessions.logins[0].second);  // ... and west's copy would stay
  west.step();
  CHECK(west.sessions.logins.size() == 1);  // its own logins do not come back to it

  // A login on another subject (west's chat, a ghost subject), or damaged: refused.
  std::unique_ptr<bus::Bus> outsider = broker.endpoint();
  std::vector<std::uint8_t> bytes;
  cluster::encode(cluster::LoginNotice{3, 9, 2000}, bytes);
  outsider->publish("t.chat.west", bytes);
  outsider->publish("t.ghosts.east.west", bytes);
  bytes.push_back(1);
  outsider->publish("t.logins.west", bytes);
  east.step();
  CHECK(east.sessions.logins.size() == 1);
  CHECK(east.exchange.stats().logins_refused == 3);
}

// ---- Actions across borders (docs/world.md, "Actions across borders"). --------------

TEST_CASE("remote actions: an action round-trips through its codec - damaged ones are refused") {
  const cluster::RemoteAction a{.sender = 1,
                                .action = 3,
                                .actor = 77,
                                .target = 99,
                                .x = 12.5,
                                .y = -3.25,
                                .arg_count = 2,
                                .args = {-7, 1 << 30, 0, 0}};
  std::vector<std::uint8_t> bytes;
  cluster::encode(a, bytes);
  CHECK(bytes.size() == 29 + 8);
  cluster::RemoteAction got;
  REQUIRE(cluster::decode(bytes, got) == cluster::ActionDecodeError::kNone);
  CHECK(got.sender == 1);
  CHECK(got.action == 3);
  CHECK(got.actor == 77);
  CHECK(got.target == 99);
  CHECK(got.x == 12.5);
  CHECK(got.y == -3.25);
  REQUIRE(got.arg_count == 2);
  CHECK(got.args[0] == -7);
  CHECK(got.args[1] == 1 << 30);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CHECK(cluster::decode(std::span(bytes).first(n), got) != cluster::ActionDecodeError::kNone);
  }
  auto trailing = bytes;
  trailing.push_back(0);
  CHECK(cluster::decode(trailing, got) == cluster::ActionDecodeError::kTrailing);
  auto future = bytes;
  future[1] = 2;
  CHECK(cluster::decode(future, got) == cluster::ActionDecodeError::kVersion);
  auto many = bytes;
  many[28] = 5;  // the argument count
  CHECK(cluster::decode(many, got) == cluster::ActionDecodeError::kBadValue);
  // No actor, no target, acting on itself, a position that is no position: refused.
  for (int which = 0; which < 4; ++which) {
    cluster::RemoteAction bad = a;
    if (which == 0) {
      bad.actor = 0;
    } else if (which == 1) {
      bad.target = 0;
    } else if (which == 2) {
      bad.target = bad.actor;
    } else {
      bad.x = std::nan("");
    }
    cluster::encode(bad, bytes);
    CHECK(cluster::decode(bytes, got) == cluster::ActionDecodeError::kBadValue);
  }
}

TEST_CASE("remote actions: an action on a ghost reaches its owner's rules - forged ones do not") {
  ExchangeWorld z;
  // A player of east's just across the border from bob, and west's ghost of it.
  const std::uint32_t dave = z.east.world.spawn_player("dave");
  REQUIRE(z.east.world.teleport(dave, 202.0, 110.0));
  const world::EntityId dave_id = z.east.world.entity(dave).id;
  for (int t = 0; t < 10; ++t) z.step();
  const world::Entity* ghost = z.west.world.find(dave_id);
  REQUIRE(ghost != nullptr);
  REQUIRE(ghost->ghost);
  const world::Entity* bob_there = z.east.world.find(z.bob_id);
  REQUIRE(bob_there != nullptr);
  REQUIRE(bob_there->ghost);

  const std::int32_t arg = 7;
  CHECK(z.west.exchange.forward_action(z.west.world.entity(z.bob), 0, *ghost, std::span(&arg, 1)) ==
        cluster::ForwardResult::kSent);
  z.step();
  REQUIRE(z.east.sessions.acted.size() == 1);
  const FakeSessions::Acted& acted = z.east.sessions.acted.front();
  CHECK(acted.actor_slot == bob_there->aoi.index);  // east's ghost of bob acts
  CHECK(acted.action == 0);
  CHECK(acted.target == dave_id);
  CHECK(acted.args == std::vector<std::int32_t>{7});
  CHECK(z.west.exchange.stats().actions_forwarded == 1);
  CHECK(z.east.exchange.stats().remote_actions_ok == 1);

  // Only to the owner of a ghost: an entity of west's own is not forwarded.
  CHECK(z.west.exchange.forward_action(z.west.world.entity(z.bob), 0, z.west.world.entity(z.bob),
                                       {}) == cluster::ForwardResult::kFailed);

  // Forged or wrong: what a stranger on the bus (or a zone gone wrong) sends is dropped
  // unresolved, and the rules never see it.
  std::unique_ptr<bus::Bus> outsider = z.broker.endpoint();
  const auto send = [&](const std::string& subject, cluster::RemoteAction a) {
    std::vector<std::uint8_t> bytes;
    cluster::encode(a, bytes);
    outsider->publish(subject, bytes);
  };
  const cluster::RemoteAction honest{.sender = 0,
                                     .action = 0,
                                     .actor = z.bob_id,
                                     .target = dave_id,
                                     .x = bob_there->x,
                                     .y = bob_there->y,
                                     .arg_count = 1,
                                     .args = {1, 0, 0, 0}};
  cluster::RemoteAction a = honest;
  send("t.handoff.east.north", a);  // a subject east does not listen to: never arrives
  a.sender = 2;
  send("t.handoff.east.west", a);  // the sender is not the subject's zone
  a = honest;
  a.actor = dave_id;
  a.target = z.bob_id;  // west acting for east's player, on a ghost
  send("t.handoff.east.west", a);
  a = honest;
  a.action = 1;  // no such action
  send("t.handoff.east.west", a);
  a = honest;
  a.arg_count = 2;  // more arguments than the action declares
  send("t.handoff.east.west", a);
  a = honest;
  a.x += 100.0;  // far from where east's ghost of bob stands
  send("t.handoff.east.west", a);
  z.step();
  CHECK(z.east.sessions.acted.size() == 1);
  CHECK(z.east.exchange.stats().remote_actions_dropped == 5);

  // Bounded: a neighbour's flood is cut at the per-tick bound (the rest dropped), and of
  // what is left one player acts no faster than its rate allows (10 a second, a burst of
  // 20 here: it acted once already; the bucket refills by 10 a second of the test's run).
  const std::uint32_t bound = z.east.exchange.params().max_remote_actions_per_tick;
  REQUIRE(z.east.exchange.params().actor_actions_per_second == 10.0);
  for (std::uint32_t i = 0; i < bound + 5; ++i) send("t.handoff.east.west", honest);
  z.step();
  CHECK(z.east.exchange.stats().remote_actions_dropped == 5 + 5);
  const std::uint64_t limited_in = z.east.exchange.stats().remote_actions_rate_limited;
  CHECK(z.east.sessions.acted.size() >= 1 + 19);
  CHECK(limited_in > 0);
  CHECK(z.east.sessions.acted.size() - 1 + limited_in == bound);
  // And this zone forwards at most its own bound per tick: the rest are answered
  // RateLimited.
  const std::uint32_t out_bound = z.west.exchange.params().max_forwarded_actions_per_tick;
  std::uint32_t sent = 0, limited = 0;
  for (std::uint32_t i = 0; i < out_bound + 3; ++i) {
    const auto r = z.west.exchange.forward_action(z.west.world.entity(z.bob), 0,
                                                  *z.west.world.find(dave_id), {});
    sent += r == cluster::ForwardResult::kSent ? 1 : 0;
    limited += r == cluster::ForwardResult::kRateLimited ? 1 : 0;
  }
  CHECK(sent == out_bound);
  CHECK(limited == 3);
}
