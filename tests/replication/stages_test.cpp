// The replicator's stages one at a time (server/replication/*_stage.hpp), on hand-made
// inputs: what each decides, apart from the others. replicator_test.cpp runs them
// together, end to end.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "loopback.hpp"
#include "protocol/compact.hpp"
#include "protocol/quantize.hpp"
#include "protocol/record.hpp"
#include "replication/budget_stage.hpp"
#include "replication/gather_stage.hpp"
#include "replication/interest_stage.hpp"
#include "replication/pack_stage.hpp"
#include "replication/rank_stage.hpp"
#include "replication/settle_stage.hpp"
#include "replication/tick_values.hpp"

using namespace zone;
using replication::Candidate;

namespace {

Candidate candidate(Candidate::Kind kind, bool mandatory, float priority, std::uint32_t cost,
                    std::uint32_t frame_index, std::uint32_t base_index = 0) {
  return {kind, mandatory, false, frame_index, base_index, frame_index, cost, priority, 0, nullptr};
}

// Half the view radius of test::small_world (30 m) is near; 80% and beyond is far.
constexpr double kRadiusCm = 3000.0;
constexpr double kInvR2 = 1.0 / (kRadiusCm * kRadiusCm);

// A world of players placed by hand, its values quantised.
struct Placed {
  world::World world{test::small_world(0)};
  replication::TickValues values;
  std::vector<std::uint32_t> slots;
  std::uint32_t add(double x, double y) {
    slots.push_back(world.spawn_player("p" + std::to_string(slots.size())));
    REQUIRE(world.teleport(slots.back(), x, y));
    return slots.back();
  }
  replication::InterestEntry entry(std::uint32_t slot, std::uint32_t entered = 1) const {
    return {world.entity(slot).id, slot, entered, 0.0f};
  }
  void quantise() { values.fill(world); }
};

}  // namespace

TEST_CASE("rank stage: mandatory first, then by priority, ties by frame position") {
  const std::vector<Candidate> cs = {
      candidate(Candidate::kUpdate, false, 1.0f, 5, 0),
      candidate(Candidate::kSpawn, false, 3.0f, 5, 1),
      candidate(Candidate::kDespawn, true, 0.0f, 2, 2),
      candidate(Candidate::kUpdate, false, 3.0f, 5, 3),
      candidate(Candidate::kUpdate, true, 0.5f, 5, 4),
  };
  std::vector<std::uint32_t> order = {9, 9, 9};  // overwritten whatever it held
  replication::rank_candidates(cs, order);
  CHECK(order == std::vector<std::uint32_t>{4, 2, 1, 3, 0});
}

TEST_CASE("rank stage: nearer weighs more, a member as if next to the player, spawns double") {
  CHECK(replication::proximity_weight(false, 0.0, kInvR2) == 1.0f);
  CHECK(replication::proximity_weight(false, kRadiusCm * kRadiusCm, kInvR2) == 0.5f);
  CHECK(replication::proximity_weight(true, 4 * kRadiusCm * kRadiusCm, kInvR2) == 1.0f);
  CHECK(replication::spawn_priority(1.0f, 0.5f) == 2.0f);
  CHECK(replication::update_priority(1.0f, 0.5f) == 1.5f);
}

TEST_CASE("budget stage: mandatory records always go, and the first that does not fit ends it") {
  const replication::PartCosts costs{.max_bytes = 100, .part_overhead = 10, .self_cost = 0};
  const std::vector<Candidate> cs = {
      candidate(Candidate::kDespawn, true, 0.0f, 30, 0),  // 0: mandatory
      candidate(Candidate::kUpdate, false, 3.0f, 20, 1),  // 1
      candidate(Candidate::kUpdate, false, 2.0f, 40, 2),  // 2: does not fit
      candidate(Candidate::kUpdate, false, 1.0f, 5, 3),   // 3: would fit, but ranks lower
  };
  const std::vector<std::uint32_t> order = {0, 1, 2, 3};
  std::vector<std::uint32_t> selected;
  // 70 tokens: 10 of overhead, 30 for the despawn, 20 for the first update, 10 left.
  CHECK(replication::select_within_budget(cs, order, 70.0, costs, selected) == 0);
  CHECK(selected == std::vector<std::uint32_t>{0, 1});
  // In debt: the mandatory record still goes, counted as forced.
  CHECK(replication::select_within_budget(cs, order, -5.0, costs, selected) == 1);
  CHECK(selected == std::vector<std::uint32_t>{0});
  // Plenty: all of them.
  CHECK(replication::select_within_budget(cs, order, 1000.0, costs, selected) == 0);
  CHECK(selected.size() == 4);
}

TEST_CASE("budget stage: a record opening a new part pays the part's overhead") {
  const replication::PartCosts costs{.max_bytes = 100, .part_overhead = 10, .self_cost = 0};
  const std::vector<Candidate> cs = {
      candidate(Candidate::kUpdate, false, 2.0f, 80, 0),
      candidate(Candidate::kUpdate, false, 1.0f, 20, 1),  // 90 left in the part: no room
  };
  const std::vector<std::uint32_t> order = {0, 1};
  std::vector<std::uint32_t> selected;
  replication::select_within_budget(cs, order, 119.0, costs, selected);
  CHECK(selected.size() == 1);  // 10 + 80 + (20 + 10) = 120 > 119
  replication::select_within_budget(cs, order, 120.0, costs, selected);
  CHECK(selected.size() == 2);
}

TEST_CASE("budget stage: a snapshot with nothing new is held back only while saving up") {
  replication::HoldBackInputs in{.selected = 0,
                                 .deferred = 1,
                                 .self_changed = false,
                                 .tokens = 10.0,
                                 .tick = 100,
                                 .last_sent_tick = 95,
                                 .tick_rate = 20};
  CHECK(replication::hold_back(in));
  in.tick = 115;  // a second since the last: the client hears from us anyway
  CHECK_FALSE(replication::hold_back(in));
  in.tick = 100;
  in.self_changed = true;  // something new
  CHECK_FALSE(replication::hold_back(in));
  in.self_changed = false;
  in.deferred = 0;  // nothing waits and no debt: an empty snapshot is sent
  CHECK_FALSE(replication::hold_back(in));
  in.tokens = -1.0;  // in debt
  CHECK(replication::hold_back(in));
  in.last_sent_tick = 0;  // never sent anything
  CHECK_FALSE(replication::hold_back(in));
}

TEST_CASE("pack stage: wire order is changes by baseline position, then spawns by id") {
  const std::vector<Candidate> cs = {
      candidate(Candidate::kSpawn, false, 0.0f, 10, 5),
      candidate(Candidate::kUpdate, false, 0.0f, 10, 3, 2),
      candidate(Candidate::kSpawn, false, 0.0f, 10, 1),
      candidate(Candidate::kDespawn, true, 0.0f, 10, 0, 0),
  };
  const replication::PartCosts costs{.max_bytes = 100, .part_overhead = 10, .self_cost = 0};
  std::vector<std::uint32_t> selected = {0, 1, 2, 3}, part_ends;
  replication::plan_parts(cs, {}, nullptr, costs, selected, part_ends);
  CHECK(selected == std::vector<std::uint32_t>{3, 1, 2, 0});
  CHECK(part_ends == std::vector<std::uint32_t>{4});
}

TEST_CASE("pack stage: parts hold what their bounds fit, the client's own record in the first") {
  std::vector<Candidate> cs;
  for (std::uint32_t k = 0; k < 10; ++k)
    cs.push_back(candidate(Candidate::kUpdate, false, 0, 30, k, k));
  std::vector<std::uint32_t> selected, part_ends;
  for (std::uint32_t k = 0; k < 10; ++k) selected.push_back(k);
  // 100-byte parts of 10 bytes of overhead: three records, but two beside a 25-byte self.
  replication::plan_parts(cs, {}, nullptr, {.max_bytes = 100, .part_overhead = 10, .self_cost = 25},
                          selected, part_ends);
  CHECK(part_ends == std::vector<std::uint32_t>{2, 5, 8, 10});
}

TEST_CASE("pack stage: past 255 parts, held spawns go first and the rest waits") {
  // 600 spawns of 50 bytes, 2 to a 110-byte part: 300 parts. Every third is held (in the
  // last frame sent). The fresh ones come in only as far as they would fit again in any
  // order: 255 parts of (100 - 50 + 1) bytes, 13,005, so 200 held and 60 fresh.
  std::vector<Candidate> cs;
  std::vector<replication::InterestEntry> interest;
  replication::Frame last;
  last.stride = 0;
  for (std::uint32_t k = 0; k < 600; ++k) {
    cs.push_back(candidate(Candidate::kSpawn, false, 0, 50, k));
    interest.push_back({1000 + k, k, 0, 0.0f});
    if (k % 3 == 0) last.entities.push_back({1000 + k, 1});
  }
  std::vector<std::uint32_t> selected, part_ends;
  for (std::uint32_t k = 0; k < 600; ++k) selected.push_back(k);
  replication::plan_parts(cs, interest, &last,
                          {.max_bytes = 110, .part_overhead = 10, .self_cost = 0}, selected,
                          part_ends);
  CHECK(part_ends.size() == 130);
  CHECK(selected.size() == 260);
  CHECK(selected.size() == part_ends.back());
  std::uint32_t held = 0;
  for (const std::uint32_t k : selected) held += k % 3 == 0;
  CHECK(held == 200);  // every held spawn made it
  // Within a part, wire order again.
  std::uint32_t begin = 0;
  for (const std::uint32_t end : part_ends) {
    for (std::uint32_t k = begin + 1; k < end; ++k) CHECK(selected[k - 1] < selected[k]);
    begin = end;
  }
}

TEST_CASE("settle stage: what went is in the frame, what waits accumulates its priority") {
  replication::Frame frame;
  frame.stride = 1;
  const std::int32_t now_update = 7, now_spawn = 9;
  std::vector<replication::InterestEntry> interest = {
      {10, 0, 1, 0.0f}, {11, 1, 1, 0.0f}, {12, 2, 1, 0.0f}};
  interest[2].deferred = true;
  interest[2].deferred_since = 3;
  frame.push({5, 1}, std::vector<std::int32_t>{0});   // 0: despawned
  frame.push({10, 1}, std::vector<std::int32_t>{1});  // 1: updated
  frame.push({11, 8}, std::vector<std::int32_t>{9});  // 2: spawn that waits
  frame.push({12, 8}, std::vector<std::int32_t>{9});  // 3: spawn that goes, after waiting
  std::vector<Candidate> cs = {
      {Candidate::kDespawn, true, false, 0, 0, 0, 3, 0.0f, 0, nullptr},
      {Candidate::kUpdate, false, false, 0, 1, 1, 3, 1.5f, 1, &now_update},
      {Candidate::kSpawn, false, false, 1, 0, 2, 3, 2.5f, 0, &now_spawn},
      {Candidate::kSpawn, false, false, 2, 0, 3, 3, 4.0f, 0, &now_spawn},
  };
  const std::vector<std::uint32_t> selected = {0, 1, 3};
  replication::mark_sent(cs, selected);
  replication::ReplicationStats stats;
  replication::settle_candidates(cs, interest, 8, frame, stats);
  CHECK(frame.entities[0].id == world::kNoEntity);
  CHECK(frame.values_of(1)[0] == 7);
  CHECK(frame.entities[1].sent_tick == 8);
  CHECK(frame.entities[2].id == world::kNoEntity);
  CHECK(frame.deferred_spawns == std::vector<world::EntityId>{11});
  CHECK(interest[1].priority == 2.5f);
  CHECK(interest[1].deferred);
  CHECK(interest[1].deferred_since == 8);
  CHECK(interest[2].priority == 0.0f);
  CHECK_FALSE(interest[2].deferred);
  CHECK(stats.despawns == 1);
  CHECK(stats.updates == 1);
  CHECK(stats.spawns == 1);
  CHECK(stats.deferred == 1);
  CHECK(stats.oldest_deferral_ticks == 5);
}

TEST_CASE("interest stage: distance tiers from the view radius") {
  replication::ReplicationParams p = test::rparams();
  p.interest.tiers = true;
  p.snapshot_interval = 2;
  replication::InterestTiers tiers;
  replication::TickValues values;
  std::vector<double> nearest;
  replication::ReplicationStats stats;
  const std::vector<std::int32_t> self(8, 0);
  tiers.prepare(p, {}, values, self, 0.0, 0.0, kInvR2, nearest, stats);
  REQUIRE(tiers.active());
  auto tier = [&](double dx) { return tiers.tier_of(dx, 0.0, dx * dx, stats); };
  CHECK(tier(1000.0) == 0);
  CHECK(tier(2000.0) == 1);
  CHECK(tier(2500.0) == 2);
  CHECK(tiers.slack(0) == 0);
  CHECK(tiers.slack(1) == (p.interest.middle_divisor - 1) * 2);
  CHECK(tiers.slack(2) == (p.interest.far_divisor - 1) * 2);
}

TEST_CASE("interest stage: the view cone puts what is behind the player in the far tier") {
  replication::ReplicationParams p = test::rparams();
  p.interest.cone = true;
  p.interest.cone_radius = 5.0;  // 500 cm
  replication::InterestTiers tiers;
  replication::TickValues values;
  std::vector<double> nearest;
  replication::ReplicationStats stats;
  const std::vector<std::int32_t> self(8, 0);  // heading 0: facing +x
  tiers.prepare(p, {}, values, self, 0.0, 0.0, kInvR2, nearest, stats);
  auto tier = [&](double dx, double dy) { return tiers.tier_of(dx, dy, dx * dx + dy * dy, stats); };
  CHECK(tier(1000.0, 0.0) == 0);   // ahead
  CHECK(tier(-1000.0, 0.0) == 2);  // behind
  CHECK(tier(-300.0, 0.0) == 0);   // behind, but within cone_radius
  CHECK(tier(0.0, 1000.0) == 2);   // beside: outside a 120 degree field of view
  CHECK(stats.behind == 2);
}

TEST_CASE("interest stage: in a crowd the K nearest keep their tier, ties to the first asked") {
  Placed w;
  const std::uint32_t self = w.add(100.0, 100.0);
  std::vector<replication::InterestEntry> interest;
  // Four at 5 m (two of them tie at the K-th distance), one at 10 m.
  const std::vector<std::pair<double, double>> around = {
      {105.0, 100.0}, {95.0, 100.0}, {100.0, 105.0}, {100.0, 95.0}, {110.0, 100.0}};
  for (const auto& [x, y] : around) {
    interest.push_back(w.entry(w.add(x, y)));
  }
  w.quantise();
  replication::ReplicationParams p = test::rparams();
  p.interest.crowd_threshold = 3;
  replication::InterestTiers tiers;
  std::vector<double> nearest;
  replication::ReplicationStats stats;
  const protocol::Values me = w.values.of(self, replication::RowView::kFull);
  const double sx = protocol::position_cm(me, protocol::kX);
  const double sy = protocol::position_cm(me, protocol::kY);
  tiers.prepare(p, interest, w.values, me, sx, sy, kInvR2, nearest, stats);
  CHECK(stats.crowded == 1);
  std::vector<std::uint8_t> got;
  for (const replication::InterestEntry& e : interest) {
    const protocol::Values v = w.values.of(e.slot, replication::RowView::kFull);
    const double dx = protocol::position_cm(v, protocol::kX) - sx;
    const double dy = protocol::position_cm(v, protocol::kY) - sy;
    got.push_back(tiers.tier_of(dx, dy, dx * dx + dy * dy, stats));
  }
  CHECK(got == std::vector<std::uint8_t>{0, 0, 0, 2, 2});
}

TEST_CASE("gather stage: without a baseline everything in view is a spawn") {
  Placed w;
  const std::uint32_t self = w.add(100.0, 100.0);
  std::vector<replication::InterestEntry> interest = {w.entry(w.add(110.0, 100.0)),
                                                      w.entry(w.add(120.0, 100.0))};
  w.quantise();
  replication::ReplicationParams p = test::rparams();
  replication::InterestTiers tiers;
  std::vector<double> nearest;
  replication::ReplicationStats stats;
  replication::Frame frame;
  replication::start_frame(frame, 5, w.values.of(self, replication::RowView::kFull), 2);
  replication::GatherContext ctx{.tick = 5,
                                 .max_wait = 20,
                                 .self_x = protocol::position_cm(frame.self, protocol::kX),
                                 .self_y = protocol::position_cm(frame.self, protocol::kY),
                                 .inv_r2 = kInvR2};
  tiers.prepare(p, interest, w.values, frame.self, ctx.self_x, ctx.self_y, kInvR2, nearest, stats);
  std::vector<Candidate> cs;
  replication::gather_candidates(ctx, interest, w.values, w.world, tiers, frame, cs, stats);
  REQUIRE(cs.size() == 2);
  CHECK(frame.entities.size() == 2);
  for (std::uint32_t k = 0; k < 2; ++k) {
    CHECK(cs[k].kind == Candidate::kSpawn);
    CHECK_FALSE(cs[k].mandatory);
    CHECK(cs[k].frame_index == k);
    CHECK(cs[k].cost > 0);
  }
  CHECK(cs[0].priority > cs[1].priority);  // nearer
  CHECK(stats.tier_entities[0] == 2);
}

TEST_CASE("gather stage: against a baseline, changes are updates and what left is a despawn") {
  Placed w;
  const std::uint32_t self = w.add(100.0, 100.0);
  const std::uint32_t stays = w.add(110.0, 100.0);
  const std::uint32_t moves = w.add(120.0, 100.0);
  const std::uint32_t leaves = w.add(90.0, 100.0);
  w.quantise();
  // The baseline: the three others as they were at tick 3, sorted by id.
  replication::Frame baseline;
  replication::start_frame(baseline, 3, w.values.of(self, replication::RowView::kFull), 3);
  for (const std::uint32_t s : {stays, moves, leaves}) {
    baseline.push({w.world.entity(s).id, 3}, w.values.of(s, replication::RowView::kPublic));
  }
  REQUIRE(w.world.teleport(moves, 121.0, 100.0));
  w.quantise();
  std::vector<replication::InterestEntry> interest = {w.entry(stays), w.entry(moves)};
  interest[1].priority = 0.5f;
  replication::ReplicationParams p = test::rparams();
  replication::InterestTiers tiers;
  std::vector<double> nearest;
  replication::ReplicationStats stats;
  replication::Frame frame;
  replication::start_frame(frame, 6, w.values.of(self, replication::RowView::kFull), 5);
  replication::GatherContext ctx{.tick = 6,
                                 .baseline = &baseline,
                                 .max_wait = 20,
                                 .self_x = protocol::position_cm(frame.self, protocol::kX),
                                 .self_y = protocol::position_cm(frame.self, protocol::kY),
                                 .inv_r2 = kInvR2};
  tiers.prepare(p, interest, w.values, frame.self, ctx.self_x, ctx.self_y, kInvR2, nearest, stats);
  std::vector<Candidate> cs;
  replication::gather_candidates(ctx, interest, w.values, w.world, tiers, frame, cs, stats);
  REQUIRE(cs.size() == 2);
  CHECK(cs[0].kind == Candidate::kUpdate);
  CHECK(cs[0].base_index == 1);
  CHECK(cs[0].mask != 0);
  CHECK(cs[0].priority > 0.5f);  // what it accumulated, and its weight
  CHECK(cs[1].kind == Candidate::kDespawn);
  CHECK(cs[1].mandatory);
  CHECK(cs[1].base_index == 2);
  // Until settled, the frame holds the baseline's values: the client's if nothing goes.
  REQUIRE(frame.entities.size() == 3);
  CHECK(frame.entities[0].sent_tick == 6);  // unchanged: still true now
  CHECK(frame.entities[1].sent_tick == 3);
  CHECK(frame.values_of(1)[protocol::kX] == baseline.values_of(1)[protocol::kX]);
}

TEST_CASE("tick values: every row of an entity quantised once, and a row of zeros") {
  Placed w;
  const std::uint32_t a = w.add(12.34, 56.78);
  w.quantise();
  const protocol::Values v = w.values.of(a, replication::RowView::kFull);
  REQUIRE(v.size() == w.values.stride());
  CHECK(protocol::position_metres(v, protocol::kX) == doctest::Approx(12.34).epsilon(0.001));
  CHECK(protocol::position_metres(v, protocol::kY) == doctest::Approx(56.78).epsilon(0.001));
  CHECK(w.values.zeros().size() == w.values.stride());
  for (const std::int32_t z : w.values.zeros()) CHECK(z == 0);
}

TEST_CASE("pack stage: the planned parts are written numbered, the own record in the first") {
  Placed w;
  const std::uint32_t self = w.add(100.0, 100.0);
  std::vector<replication::InterestEntry> interest;
  for (const double x : {105.0, 110.0, 115.0}) interest.push_back(w.entry(w.add(x, 100.0)));
  w.quantise();
  const protocol::Schema& schema = w.world.game().schema;
  std::vector<Candidate> cs;
  for (std::uint32_t k = 0; k < 3; ++k) {
    const protocol::Values now = w.values.of(interest[k].slot, replication::RowView::kPublic);
    const world::Entity& e = w.world.entity(interest[k].slot);
    cs.push_back({Candidate::kSpawn, false, false, k, 0, k,
                  protocol::spawn_cost(schema, interest[k].id, e.type, e.name, now), 0.0f, 0,
                  now.data()});
  }
  const protocol::Values me = w.values.of(self, replication::RowView::kFull);
  const replication::PartsHeader header{
      .tick = 9,
      .last_input_sequence = 4,
      .baseline = nullptr,
      .self_mask = protocol::fields::change_mask(w.values.zeros(), me),
      .base_self = w.values.zeros(),
      .self = me};
  const std::vector<std::uint32_t> selected = {0, 1, 2}, part_ends = {2, 3};
  replication::PacketArena arena;
  replication::ReplicationStats stats;
  double tokens = 1000.0;
  const std::uint64_t bytes = replication::write_parts(cs, interest, selected, part_ends, header,
                                                       w.world, 1200, 7, arena, tokens, stats);
  REQUIRE(arena.packets().size() == 2);
  CHECK(stats.packets == 2);
  CHECK(stats.bytes == bytes);
  CHECK(tokens == 1000.0 - static_cast<double>(bytes));
  std::vector<std::uint32_t> spawned;
  for (std::uint32_t p = 0; p < 2; ++p) {
    const replication::PacketArena::Packet& packet = arena.packets()[p];
    CHECK(packet.client == 7);
    protocol::SnapshotPart part;
    REQUIRE(protocol::parse_snapshot_part(arena.bytes(packet), schema, part) ==
            protocol::ParseError::kNone);
    CHECK(part.header.server_tick == 9);
    CHECK(part.header.last_input_sequence == 4);
    CHECK(part.header.part == p);
    CHECK(part.header.part_count == 2);
    CHECK(((part.header.flags & protocol::kSnapshotHasSelf) != 0) == (p == 0));
    CHECK(part.changes.empty());
    for (const protocol::SpawnRecord& s : part.spawns) spawned.push_back(s.id);
  }
  CHECK(spawned == std::vector<std::uint32_t>{interest[0].id, interest[1].id, interest[2].id});
}
