// The schema's audiences and update tiers, end to end (World + Replicator + FrameReplica):
// an owner-only property reaches its owner's self record and never another client; a
// party property reaches the owner's party members and not strangers; a change of an
// immediate property is sent at once to an observer whose tier would hold the entity.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "loopback.hpp"

using namespace zone;
using test::Loopback;
using test::LoopClient;
using test::SentPart;

namespace {

struct AudienceGame {
  world::GameTypes game = test::test_game();
  std::size_t gold = 0;    // row: owner only
  std::size_t buff = 0;    // row: the party's
  std::size_t stance = 0;  // row: everyone's, immediate
};

AudienceGame audience_game() {
  AudienceGame g;
  protocol::FieldSpec gold;
  gold.name = "gold";
  gold.bits = 32;
  gold.audience = protocol::Audience::kOwner;
  protocol::FieldSpec buff;
  buff.name = "buff";
  buff.bits = 8;
  buff.audience = protocol::Audience::kParty;
  protocol::FieldSpec stance;
  stance.name = "stance";
  stance.bits = 8;
  stance.update = protocol::UpdateTier::kImmediate;
  REQUIRE_FALSE(g.game.schema.add_field(gold).has_value());
  REQUIRE_FALSE(g.game.schema.add_field(buff).has_value());
  REQUIRE_FALSE(g.game.schema.add_field(stance).has_value());
  for (auto& d : g.game.defaults) d.properties = {100, 100, 0, 0, 0};
  g.gold = *g.game.schema.find_field("gold");
  g.buff = *g.game.schema.find_field("buff");
  g.stance = *g.game.schema.find_field("stance");
  return g;
}

// Property index of a schema row (World::set_property counts from the first game row).
std::size_t property(std::size_t row) {
  return row - protocol::kEngineFieldCount;
}

// Whether any record sent to `c` this tick (self record aside) carries row `row`.
bool sent_row(const LoopClient& c, std::size_t row) {
  for (const SentPart& p : c.sent) {
    for (const auto& ch : p.part.changes) {
      if (ch.mask & (1ull << row)) return true;
    }
    for (const auto& s : p.part.spawns) {
      if (s.mask & (1ull << row)) return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("audience: owner-only rows reach the owner alone, party rows the party alone") {
  const AudienceGame g = audience_game();
  world::WorldParams wp = test::small_world(5);
  wp.game = g.game;
  wp.broadcast = true;  // everyone sees everyone, wherever the spawner puts them
  wp.parties = {true, 4, true};
  Loopback lb(wp, test::rparams(64000));
  LoopClient& a = lb.connect("alice");
  LoopClient& b = lb.connect("bob");    // alice's party
  LoopClient& c = lb.connect("carol");  // a stranger
  for (LoopClient* x : {&a, &b, &c}) x->keep_bytes = true;
  REQUIRE(lb.world.join_party(a.slot, 7).result == world::GroupResult::kJoined);
  REQUIRE(lb.world.join_party(b.slot, 7).result == world::GroupResult::kJoined);
  int leaks = 0;
  for (int t = 1; t <= 40; ++t) {
    if (t == 10) {
      lb.world.set_property(a.slot, property(g.gold), 5000);
      lb.world.set_property(a.slot, property(g.buff), 3);
    }
    if (t == 20) {
      lb.world.set_property(a.slot, property(g.gold), 7);
      lb.world.set_property(a.slot, property(g.buff), 4);
    }
    lb.step();
    // Nobody but alice is ever sent a record with gold; carol never one with the buff.
    leaks += sent_row(b, g.gold) + sent_row(c, g.gold) + sent_row(c, g.buff);
    if (t >= 3) {
      for (const LoopClient* x : {&a, &b, &c}) CHECK_MESSAGE(lb.diff(*x).empty(), lb.diff(*x));
    }
  }
  CHECK(leaks == 0);
  // Alice's own record holds both.
  CHECK(a.replica.self()[g.gold] == 7);
  CHECK(a.replica.self()[g.buff] == 4);
  // Bob (her party) holds the buff, not the gold.
  const auto a_at_b = b.replica.find(a.entity);
  REQUIRE(a_at_b != nullptr);
  CHECK(a_at_b->values[g.buff] == 4);
  CHECK(a_at_b->values[g.gold] == 0);
  CHECK(a_at_b->party() != 0);
  // Carol holds neither.
  const auto a_at_c = c.replica.find(a.entity);
  REQUIRE(a_at_c != nullptr);
  CHECK(a_at_c->values[g.buff] == 0);
  CHECK(a_at_c->values[g.gold] == 0);
  // Everyone's rows reach everyone.
  CHECK(a_at_c->values[test::kHealth] == 100);
  for (const LoopClient* x : {&a, &b, &c}) test::check_clean(lb, *x);
}

TEST_CASE("audience: leaving the party stops the party rows, and what was held reads 0") {
  const AudienceGame g = audience_game();
  world::WorldParams wp = test::small_world(0);
  wp.game = g.game;
  wp.broadcast = true;
  wp.parties = {true, 4, true};
  Loopback lb(wp, test::rparams(64000));
  LoopClient& a = lb.connect("alice");
  LoopClient& b = lb.connect("bob");
  lb.world.join_party(a.slot, 7);
  lb.world.join_party(b.slot, 7);
  lb.world.set_property(a.slot, property(g.buff), 9);
  lb.run(5);
  REQUIRE(b.replica.find(a.entity) != nullptr);
  CHECK(b.replica.find(a.entity)->values[g.buff] == 9);
  lb.world.join_party(b.slot, 8);  // bob moves to a party of his own
  lb.run(5);
  REQUIRE(b.replica.find(a.entity) != nullptr);
  CHECK(b.replica.find(a.entity)->values[g.buff] == 0);
  CHECK_MESSAGE(lb.diff(b).empty(), lb.diff(b));
  test::check_clean(lb, a);
  test::check_clean(lb, b);
}

TEST_CASE("audience: an immediate row's change reaches a far-tier observer in the next snapshot") {
  const AudienceGame g = audience_game();
  world::WorldParams wp = test::small_world(0);
  wp.game = g.game;
  wp.grid.bounds = {{0.0, 0.0}, {20.0, 20.0}};  // two players are always within 30 m
  replication::ReplicationParams rp = test::rparams(64000);
  rp.interest.tiers = true;
  rp.interest.near_fraction = 0.0;  // everything beyond 0 m is far: every 4th snapshot
  rp.interest.far_fraction = 0.0;
  rp.interest.far_divisor = 4;
  Loopback lb(wp, rp);
  LoopClient& a = lb.connect("watcher");
  LoopClient& b = lb.connect("target");
  lb.run(10);
  REQUIRE(a.replica.find(b.entity) != nullptr);
  int far_ticks = 0, tiered_late = 0;
  for (int t = 0; t < 24; ++t) {
    // A tiered row (max_health) and the immediate one change every tick.
    lb.world.set_property(b.slot, property(test::kMaxHealth), 200 + t);
    lb.world.set_property(b.slot, property(g.stance), t + 1);
    lb.step();
    for (const replication::InterestEntry& e : lb.rep.client(a.id).interest) {
      if (e.id == b.entity && e.tier == 2) ++far_ticks;
    }
    REQUIRE(a.replica.ack_tick() == lb.tick);
    const auto seen = a.replica.find(b.entity);
    REQUIRE(seen != nullptr);
    CHECK(seen->values[g.stance] == t + 1);
    // The change of the immediate row carries the whole update along, tiered rows too.
    CHECK(seen->values[test::kMaxHealth] == 200 + t);
  }
  CHECK(far_ticks == 24);
  // Without an immediate change the far tier holds a tiered change back.
  for (int t = 0; t < 8; ++t) {
    lb.world.set_property(b.slot, property(test::kMaxHealth), 300 + t);
    lb.step();
    REQUIRE(a.replica.find(b.entity) != nullptr);
    tiered_late += a.replica.find(b.entity)->values[test::kMaxHealth] != 300 + t;
  }
  CHECK(tiered_late > 0);
  CHECK(lb.rep.stats().tier_held > 0);
  test::check_clean(lb, a);
  test::check_clean(lb, b);
}
