// Parties and guilds (docs/architecture.md, "Parties and guilds"): world::Groups'
// membership rules and links, and Replicator + World end to end without a network
// (tests/replication/loopback.hpp): members hold each other whatever the distance,
// current every tick, in the near tier and outside crowds; a member who leaves is
// despawned like any entity leaving the view.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "loopback.hpp"

using namespace zone;
using test::check_clean;
using test::Loopback;
using test::LoopClient;

namespace {

world::GroupParams parties_on(std::uint32_t max_size = 3, bool full_range = true) {
  world::GroupParams p;
  p.enabled = true;
  p.max_size = max_size;
  p.full_range = full_range;
  return p;
}

std::vector<world::EntityId> member_ids(const world::World& w, world::GroupId party) {
  std::vector<world::EntityId> ids;
  for (const world::Groups::Member& m : w.parties().members(party)) ids.push_back(m.id);
  return ids;
}

// A 400 m world with a 30 m view: players spread over it are mostly out of each other's
// view radius.
world::WorldParams wide_world(world::GroupParams parties) {
  world::WorldParams p = test::small_world(0);
  p.grid.bounds = {{0.0, 0.0}, {400.0, 400.0}};
  p.parties = parties;
  return p;
}

}  // namespace

TEST_CASE("parties: a key makes a party - others join until it is full - the last out ends it") {
  world::World w(wide_world(parties_on(3)));
  const std::uint32_t a = w.spawn_player("a"), b = w.spawn_player("b"), c = w.spawn_player("c"),
                      d = w.spawn_player("d");
  const world::GroupChange ja = w.join_party(a, 77);
  CHECK(ja.result == world::GroupResult::kJoined);
  CHECK(ja.group != world::kNoGroup);
  CHECK(ja.left_group == world::kNoGroup);
  CHECK(w.entity(a).party == ja.group);
  CHECK(w.join_party(b, 77).group == ja.group);
  CHECK(w.join_party(c, 77).group == ja.group);
  CHECK(member_ids(w, ja.group) ==
        std::vector<world::EntityId>{w.entity(a).id, w.entity(b).id, w.entity(c).id});
  // Full: nothing changes for d.
  const world::GroupChange full = w.join_party(d, 77);
  CHECK(full.result == world::GroupResult::kFull);
  CHECK(full.group == world::kNoGroup);
  CHECK(w.entity(d).party == world::kNoGroup);
  CHECK(w.parties().member_count() == 3);
  // Asking again for one's own party changes nothing.
  const world::GroupChange again = w.join_party(a, 77);
  CHECK(again.result == world::GroupResult::kJoined);
  CHECK(again.left_group == world::kNoGroup);
  CHECK(w.parties().member_count() == 3);
  // Another key: a second party; c moves over to it.
  const world::GroupChange moved = w.join_party(c, 99);
  CHECK(moved.result == world::GroupResult::kJoined);
  CHECK(moved.left_group == ja.group);
  CHECK(moved.group != ja.group);
  CHECK(w.parties().group_count() == 2);
  CHECK(member_ids(w, ja.group).size() == 2);
  // Now there is room for d.
  CHECK(w.join_party(d, 77).result == world::GroupResult::kJoined);
  // Key 0 leaves; the last to leave ends the party and frees its key.
  const world::GroupChange left = w.join_party(c, 0);
  CHECK(left.result == world::GroupResult::kLeft);
  CHECK(left.left_group == moved.group);
  CHECK(w.entity(c).party == world::kNoGroup);
  CHECK(w.parties().group_count() == 1);
  CHECK(w.join_party(c, 0).left_group == world::kNoGroup);  // leaving no party
  const world::GroupChange fresh = w.join_party(c, 99);
  CHECK(fresh.group != moved.group);  // ids are never reused
  CHECK(member_ids(w, fresh.group) == std::vector<world::EntityId>{w.entity(c).id});
}

TEST_CASE("parties: switched off - every request is refused and nothing changes") {
  world::World w(wide_world(world::GroupParams{}));
  const std::uint32_t a = w.spawn_player("a");
  for (const std::uint64_t key : {1ull, 0ull, ~0ull}) {
    const world::GroupChange r = w.join_party(a, key);
    CHECK(r.result == world::GroupResult::kDisabled);
    CHECK(r.group == world::kNoGroup);
  }
  CHECK(w.parties().group_count() == 0);
  CHECK(w.parties().links().empty());
}

TEST_CASE("parties: links both ways on join - broken on leave and on despawn") {
  world::World w(wide_world(parties_on(4)));
  const std::uint32_t a = w.spawn_player("a"), b = w.spawn_player("b"), c = w.spawn_player("c");
  w.join_party(a, 5);
  CHECK(w.parties().links().empty());  // alone: nobody to link
  w.join_party(b, 5);
  w.join_party(c, 5);
  // b: a<->b; c: c<->a, c<->b.
  REQUIRE(w.parties().links().size() == 6);
  auto count = [&](std::uint32_t observer, std::uint32_t target, bool linked) {
    return std::count_if(w.parties().links().begin(), w.parties().links().end(),
                         [&](const world::GroupLink& l) {
                           return l.observer_slot == observer && l.target_slot == target &&
                                  l.target == w.entity(target).id && l.linked == linked;
                         });
  };
  for (const std::uint32_t x : {a, b, c}) {
    for (const std::uint32_t y : {a, b, c}) CHECK(count(x, y, true) == (x == y ? 0 : 1));
  }
  w.clear_group_links();
  w.despawn(b);
  REQUIRE(w.parties().links().size() == 4);
  for (const std::uint32_t x : {a, c}) {
    CHECK(count(x, b, false) == 1);
    CHECK(count(b, x, false) == 1);
  }
  CHECK(member_ids(w, w.entity(a).party).size() == 2);
  CHECK(w.parties().member_count() == 2);
  w.clear_group_links();
  // Without full range a party is a label: no links.
  world::World labels(wide_world(parties_on(4, false)));
  const std::uint32_t p = labels.spawn_player("p"), q = labels.spawn_player("q");
  labels.join_party(p, 5);
  labels.join_party(q, 5);
  CHECK(labels.entity(p).party == labels.entity(q).party);
  CHECK(labels.parties().links().empty());
}

TEST_CASE("party replication: members far apart hold each other - current every tick") {
  Loopback lb(wide_world(parties_on(3)), test::rparams(64000));
  LoopClient& a = lb.connect("a");
  LoopClient& b = lb.connect("b");
  LoopClient& c = lb.connect("c");
  LoopClient& d = lb.connect("d");  // never in the party
  std::vector<test::Tour> walks = {test::square_tour(20, 380), test::square_tour(20, 380),
                                   test::square_tour(150, 250), test::square_tour(60, 340)};
  walks[1].next = 2;  // b walks the opposite corner of a's tour
  lb.world.join_party(a.slot, 0xABCDEF);
  lb.world.join_party(b.slot, 0xABCDEF);
  lb.world.join_party(c.slot, 0xABCDEF);
  const world::EntityId ids[] = {a.entity, b.entity, c.entity, d.entity};
  int mismatched = 0, far_members_held = 0, strangers_held = 0;
  std::string first;
  for (int t = 1; t <= 400; ++t) {
    for (std::size_t k = 0; k < 4; ++k) walks[k].steer(lb.world, lb.clients[k].slot);
    if (t == 250) lb.world.join_party(c.slot, 0);  // c leaves
    lb.step();
    if (t < 5) continue;
    for (std::size_t k = 0; k < 4; ++k) {
      const LoopClient& me = lb.clients[k];
      const std::string diff = lb.diff(me);
      if ((!diff.empty() || !lb.self_ok(me)) && mismatched++ == 0) first = diff;
      const world::Entity& self = lb.world.entity(me.slot);
      for (std::size_t o = 0; o < 4; ++o) {
        if (o == k) continue;
        const world::Entity& other = lb.world.entity(lb.clients[o].slot);
        const double dist = std::hypot(other.x - self.x, other.y - self.y);
        const bool held = me.replica.find(ids[o]) != nullptr;
        const bool member = self.party != world::kNoGroup && self.party == other.party;
        if (dist > 32.0 && held) (member ? far_members_held : strangers_held)++;
      }
    }
  }
  CHECK_MESSAGE(mismatched == 0, first);
  CHECK(far_members_held > 1000);  // the party really spanned the world
  CHECK(strangers_held == 0);
  // c left at tick 250: nobody far away holds it any more, and it holds nobody far away.
  for (const LoopClient* me : {&a, &b}) {
    const world::Entity& self = lb.world.entity(me->slot);
    const world::Entity& cc = lb.world.entity(c.slot);
    if (std::hypot(cc.x - self.x, cc.y - self.y) > 32.0)
      CHECK(me->replica.find(c.entity) == nullptr);
  }
  CHECK(lb.rep.stats().group_entities > 0);
  for (const LoopClient* me : {&a, &b, &c, &d}) check_clean(lb, *me);
}

TEST_CASE("party replication: members stay near tier and out of the crowd - through loss too") {
  replication::ReplicationParams rp = test::rparams(64000);
  rp.interest.tiers = true;
  rp.interest.crowd_threshold = 2;
  world::WorldParams wp = wide_world(parties_on(2));
  wp.npcs.count = 150;
  wp.npcs.behaviour = world::NpcBehaviour::kWander;
  wp.npcs.idle_fraction = 0.0;
  wp.grid.bounds = {{0.0, 0.0}, {200.0, 200.0}};
  for (const double loss : {0.0, 0.2}) {
    CAPTURE(loss);
    Loopback lb(wp, rp, 9);
    lb.loss = loss;
    LoopClient& a = lb.connect("a");
    LoopClient& b = lb.connect("b");
    test::Tour wa = test::square_tour(10, 190), wb = test::square_tour(10, 190);
    wb.next = 2;
    lb.world.join_party(a.slot, 42);
    lb.world.join_party(b.slot, 42);
    int current = 0, behind = 0;
    for (int t = 1; t <= 300; ++t) {
      wa.steer(lb.world, a.slot);
      wb.steer(lb.world, b.slot);
      lb.step();
      if (t < 10) continue;
      // A complete frame of this tick holds the other member at this tick's values: the
      // crowd (150 wandering NPCs, K = 2) and the tiers never hold it back.
      if (a.replica.ack_tick() != lb.tick) continue;
      const auto other = a.replica.find(b.entity);
      REQUIRE(other != nullptr);
      if (test::same(other->values, lb.seen_values(a, b.slot))) {
        ++current;
      } else {
        ++behind;
      }
    }
    CHECK(current > 100);
    CHECK(behind == 0);
    CHECK(lb.rep.stats().crowded > 0);  // the crowd rule was in force
    check_clean(lb, a);
    check_clean(lb, b);
  }
}

TEST_CASE("guilds: a table of their own - one party and one guild at once - links carry the kind") {
  world::WorldParams wp = wide_world(parties_on(4));
  wp.guilds = parties_on(3);
  world::World w(wp);
  const std::uint32_t a = w.spawn_player("a"), b = w.spawn_player("b"), c = w.spawn_player("c");
  // The same key names different groups in the two tables.
  const world::GroupChange pa = w.join_group(world::GroupKind::kParty, a, 7);
  const world::GroupChange ga = w.join_group(world::GroupKind::kGuild, a, 7);
  REQUIRE(pa.result == world::GroupResult::kJoined);
  REQUIRE(ga.result == world::GroupResult::kJoined);
  CHECK(w.entity(a).party == pa.group);
  CHECK(w.entity(a).guild == ga.group);
  w.clear_group_links();
  w.join_group(world::GroupKind::kGuild, b, 7);
  REQUIRE(w.guilds().links().size() == 2);
  CHECK(w.parties().links().empty());
  for (const world::GroupLink& l : w.guilds().links()) CHECK(l.kind == world::GroupKind::kGuild);
  CHECK(w.entity(b).party == world::kNoGroup);
  CHECK(w.guilds().member_count() == 2);
  CHECK(w.parties().member_count() == 1);
  // Leaving the party keeps the guild; the guild's size limit is its own.
  w.join_group(world::GroupKind::kParty, a, 0);
  CHECK(w.entity(a).guild == ga.group);
  CHECK(w.join_group(world::GroupKind::kGuild, c, 7).result == world::GroupResult::kJoined);
  const std::uint32_t d = w.spawn_player("d");
  CHECK(w.join_group(world::GroupKind::kGuild, d, 7).result == world::GroupResult::kFull);
  CHECK(w.join_group(world::GroupKind::kParty, d, 7).result == world::GroupResult::kJoined);
  // Despawning leaves both.
  w.join_group(world::GroupKind::kParty, c, 7);
  w.despawn(c);
  CHECK(w.guilds().member_count() == 2);
  CHECK(w.parties().member_count() == 1);
}

TEST_CASE("guild replication: guild and party links add up - leaving one keeps the other") {
  world::WorldParams wp = wide_world(parties_on(3));
  wp.guilds = parties_on(10);
  Loopback lb(wp, test::rparams(64000));
  LoopClient& a = lb.connect("a");
  LoopClient& b = lb.connect("b");
  LoopClient& c = lb.connect("c");
  std::vector<test::Tour> walks = {test::square_tour(20, 380), test::square_tour(20, 380),
                                   test::square_tour(150, 250)};
  walks[1].next = 2;
  lb.world.join_group(world::GroupKind::kGuild, a.slot, 1);
  lb.world.join_group(world::GroupKind::kGuild, b.slot, 1);
  lb.world.join_group(world::GroupKind::kGuild, c.slot, 1);
  lb.world.join_party(a.slot, 2);
  lb.world.join_party(b.slot, 2);
  int mismatched = 0, far_held = 0;
  std::string first;
  for (int t = 1; t <= 300; ++t) {
    for (std::size_t k = 0; k < 3; ++k) walks[k].steer(lb.world, lb.clients[k].slot);
    if (t == 100) lb.world.join_party(b.slot, 0);  // still in a's guild: stays in view
    if (t == 200) lb.world.join_group(world::GroupKind::kGuild, b.slot, 0);  // now gone
    lb.step();
    if (t < 5) continue;
    for (const LoopClient* me : {&a, &b, &c}) {
      const std::string diff = lb.diff(*me);
      if ((!diff.empty() || !lb.self_ok(*me)) && mismatched++ == 0) first = diff;
    }
    const world::Entity& ea = lb.world.entity(a.slot);
    const world::Entity& eb = lb.world.entity(b.slot);
    const bool far = std::hypot(ea.x - eb.x, ea.y - eb.y) > 32.0;
    const bool held = a.replica.find(b.entity) != nullptr;
    if (far && held) {
      ++far_held;
      CHECK(t < 200);  // after b left both groups, a far b is never held
      const auto s = a.replica.find(b.entity);
      CHECK(s->guild() == (t < 200 ? eb.guild : 0u));
    }
  }
  CHECK_MESSAGE(mismatched == 0, first);
  CHECK(far_held > 100);
  for (const LoopClient* me : {&a, &b, &c}) check_clean(lb, *me);
}
