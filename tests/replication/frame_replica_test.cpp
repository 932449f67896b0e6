// FrameReplica (shared/replica/frame_replica.hpp) fed with hand-built snapshot parts:
// frame assembly from baseline + parts, acknowledgment, and every protocol invariant
// check. Changes and despawns name entities by their position in the baseline frame
// (sorted by id), spawns by id.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "replica/frame_replica.hpp"
#include "wire.hpp"

using namespace zone;
using replica::FrameReplica;
using replica::Violation;
using test::change;
using test::despawn;
using test::make_state;
using test::PartSpec;
using test::spawn;
using test::values;

namespace {

constexpr std::uint32_t kSelf = 1;

FrameReplica make_replica(double max_speed = 10.0, std::uint32_t tick_rate = 20) {
  FrameReplica r;
  r.reset({max_speed, tick_rate, kSelf}, test::test_schema());
  return r;
}

bool feed(FrameReplica& r, const PartSpec& spec) {
  const test::Bytes bytes = test::encode(spec);
  REQUIRE(!bytes.empty());
  return r.apply(bytes);
}

PartSpec frame(std::uint32_t tick, std::uint32_t baseline) {
  return test::part_on(tick, baseline);
}

std::vector<std::uint32_t> ids_of(const FrameReplica& r) {
  std::vector<std::uint32_t> ids;
  for (const auto& e : r.current().entities) ids.push_back(e.id);
  return ids;
}

bool only_violation(const FrameReplica& r, Violation kind, std::uint32_t tick, std::uint32_t id) {
  return r.violations().size() == 1 && r.violations()[0].kind == kind &&
         r.violations()[0].server_tick == tick && r.violations()[0].entity_id == id;
}

std::string violations_of(const FrameReplica& r) {
  std::string s;
  for (const auto& v : r.violations()) {
    s += std::string(replica::to_string(v.kind)) + " tick " + std::to_string(v.server_tick) +
         " id " + std::to_string(v.entity_id) + "; ";
  }
  return s;
}

// Tick 1's values of entities 10, 11, 12 (baseline positions 0, 1, 2).
const test::FieldValues kTen = values(1000, 2000, 100, 0, 90);
const test::FieldValues kEleven = values(-500, 0, 200, 0, 80);
const test::FieldValues kTwelve = values(0, 300, 300, 0, 70);

// Tick 1: a full frame with entities 10, 11, 12.
FrameReplica with_three_entities() {
  FrameReplica r = make_replica();
  PartSpec s = frame(1, 0);
  s.spawns = {spawn({10, kTen}, "ten", test::kNpcType),
              spawn({11, kEleven}, "eleven", test::kPlayerType),
              spawn({12, kTwelve}, "twelve", test::kNpcType)};
  REQUIRE(feed(r, s));
  REQUIRE(r.violations().empty());
  return r;
}

test::FieldValues moved(test::FieldValues v, std::int32_t dx, std::int32_t dy) {
  v[protocol::kX] += dx;
  v[protocol::kY] += dy;
  return v;
}

}  // namespace

TEST_CASE("replica: spawn then changes against the baseline") {
  FrameReplica r = make_replica();
  CHECK(r.ack_tick() == 0);
  CHECK(r.current().entities.empty());
  test::FieldValues v1 = values(10000, 20000, 1234, 1, 77);
  v1[test::kMaxHealth] = 150;  // max_health is a row of the spawn's values now
  PartSpec s1 = frame(1, 0);
  s1.spawns = {spawn({5, v1}, "wolf", test::kNpcType)};
  CHECK(feed(r, s1));
  CHECK(r.ack_tick() == 1);
  REQUIRE(r.find(5) != nullptr);
  CHECK(r.find(5)->values == v1);
  REQUIRE(r.info(5) != nullptr);
  CHECK(r.info(5)->name == "wolf");
  CHECK(r.info(5)->type == test::kNpcType);
  CHECK(r.info(5)->kind == protocol::EntityKind::kNpc);
  CHECK(r.find(5)->values[test::kMaxHealth] == 150);
  CHECK(r.info(6) == nullptr);
  CHECK(r.find(6) == nullptr);

  PartSpec s2 = frame(2, 1);
  const test::FieldValues v2 = moved(v1, 30, -20);
  s2.changes = {change(0, v1, v2)};
  CHECK(feed(r, s2));
  CHECK(r.ack_tick() == 2);
  CHECK(r.find(5)->values == v2);

  // Tick 3 is encoded against tick 1 (the client's tick-2 ack was lost): the change is
  // relative to tick 1's values, not the current ones.
  PartSpec s3 = frame(3, 1);
  const test::FieldValues v3 = values(10050, 20000, 999, 0, 12);
  s3.changes = {change(0, v1, v3)};
  CHECK(feed(r, s3));
  CHECK(r.find(5)->values == v3);

  // A record carrying some fields only: the others keep the baseline's values.
  PartSpec s4 = frame(4, 3);
  test::FieldValues v4 = v3;
  v4[test::kHealth] = 65535;
  s4.changes = {change(0, v3, v4)};
  CHECK(feed(r, s4));
  CHECK(r.find(5)->values == v4);
  CHECK(r.violations().empty());
  CHECK(r.frames_completed() == 4);
  // Every frame stays available by tick, as the server meant it.
  REQUIRE(r.frame_at(2) != nullptr);
  CHECK(test::states(r.frame_at(2)->entities) == std::vector<replica::EntityState>{{5, v2}});
  CHECK(r.frame_at(5) == nullptr);
  CHECK(r.frame_at(0) == nullptr);
}

TEST_CASE("replica: entities not mentioned keep their baseline values and empty frames ack") {
  FrameReplica r = with_three_entities();
  CHECK(feed(r, frame(2, 1)));
  CHECK(r.ack_tick() == 2);
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
  CHECK(r.find(10)->values == kTen);
  CHECK(r.find(11)->values == kEleven);
  CHECK(r.find(12)->values == kTwelve);
  // A change to the middle entity only.
  PartSpec s = frame(3, 2);
  const test::FieldValues e = moved(kEleven, 5, 5);
  s.changes = {change(1, kEleven, e)};
  CHECK(feed(r, s));
  CHECK(r.find(10)->values == kTen);
  CHECK(r.find(11)->values == e);
  CHECK(r.find(12)->values == kTwelve);
  // `updated`: the tick each entity's values were last set.
  CHECK(r.current().updated == std::vector<std::uint32_t>{1, 3, 1});
  CHECK(r.violations().empty());
}

TEST_CASE("replica: self values come from complete frames, the input sequence from any part") {
  FrameReplica r = make_replica();
  PartSpec s = frame(3, 0);
  s.has_self = true;
  s.self_now = values(111, 222, 5, 1, 66);
  s.last_input = 40;
  CHECK(feed(r, s));
  CHECK(r.self() == values(111, 222, 5, 1, 66));
  CHECK(r.last_input_sequence() == 40);
  // An older tick is ignored: neither its self values nor its sequence.
  PartSpec old = frame(2, 0);
  old.has_self = true;
  old.self_now = values(1, 1, 5, 1, 66);
  old.last_input = 30;
  CHECK_FALSE(feed(r, old));
  CHECK(r.self() == values(111, 222, 5, 1, 66));
  CHECK(r.last_input_sequence() == 40);
  // A part of an incomplete newer frame already carries the newest input sequence, but
  // the self values are those of the frame the client holds.
  PartSpec later = frame(5, 3);
  later.part = 1;
  later.part_count = 2;
  later.last_input = 50;
  CHECK_FALSE(feed(r, later));
  CHECK(r.ack_tick() == 3);
  CHECK(r.last_input_sequence() == 50);
  CHECK(r.self() == values(111, 222, 5, 1, 66));
  // Its other part carries the self record, a delta against the baseline's self.
  PartSpec first = frame(5, 3);
  first.part_count = 2;
  first.last_input = 50;
  first.has_self = true;
  first.self_base = values(111, 222, 5, 1, 66);
  first.self_now = values(-333, 444, 65535, 0, 66);
  CHECK(feed(r, first));
  CHECK(r.ack_tick() == 5);
  CHECK(r.self() == values(-333, 444, 65535, 0, 66));
  // A frame without a self record keeps the baseline's self values.
  CHECK(feed(r, frame(6, 5)));
  CHECK(r.self() == values(-333, 444, 65535, 0, 66));
  // ... and a full frame without one means all zeros (nothing against nothing).
  CHECK(feed(r, frame(7, 0)));
  CHECK(r.self() == test::FieldValues{});
  CHECK(r.violations().empty());
}

TEST_CASE("replica: a split frame completes only with all parts in any order") {
  const std::vector<std::vector<int>> orders = {{0, 1, 2}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}};
  for (const auto& order : orders) {
    FrameReplica r = with_three_entities();
    std::vector<PartSpec> parts(3, frame(2, 1));
    for (std::uint8_t p = 0; p < 3; ++p) {
      parts[p].part = p;
      parts[p].part_count = 3;
    }
    parts[0].changes = {change(0, kTen, moved(kTen, 10, 10)), despawn(1)};
    parts[1].spawns = {spawn(make_state(20, 5, 5), "twenty")};
    parts[2].changes = {change(2, kTwelve, values(0, 300, 300, 0, 1))};
    replica::EntityState twenty_one = make_state(21, 6, 6);
    twenty_one.values[test::kMaxHealth] = 60;
    parts[2].spawns = {spawn(twenty_one, "twenty-one", test::kPlayerType)};
    for (std::size_t k = 0; k < order.size(); ++k) {
      const bool done = feed(r, parts[static_cast<std::size_t>(order[k])]);
      if (k + 1 < order.size()) {
        CHECK_FALSE(done);
        CHECK(r.ack_tick() == 1);
        CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
        // A repeated part changes nothing.
        CHECK_FALSE(feed(r, parts[static_cast<std::size_t>(order[k])]));
        CHECK(r.ack_tick() == 1);
      } else {
        CHECK(done);
      }
    }
    CHECK(r.ack_tick() == 2);
    CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 12, 20, 21});
    CHECK(r.find(10)->values == moved(kTen, 10, 10));
    CHECK(r.find(12)->values[test::kHealth] == 1);
    REQUIRE(r.info(21) != nullptr);
    CHECK(r.info(21)->name == "twenty-one");
    CHECK(r.info(21)->type == test::kPlayerType);
    CHECK(r.info(21)->kind == protocol::EntityKind::kPlayer);
    CHECK(r.find(21)->values[test::kMaxHealth] == 60);
    CHECK(r.current().updated == std::vector<std::uint32_t>{2, 2, 2, 2});
    CHECK_MESSAGE(r.violations().empty(), violations_of(r));
    // Parts of the completed tick arriving late are ignored.
    CHECK_FALSE(feed(r, parts[0]));
    CHECK(r.ack_tick() == 2);
    CHECK(r.violations().empty());
  }
}

TEST_CASE("replica: a lost part holds the frame back until a later complete frame supersedes it") {
  FrameReplica r = with_three_entities();
  PartSpec a = frame(2, 1);
  a.part_count = 2;
  a.changes = {despawn(0)};
  CHECK_FALSE(feed(r, a));  // part 1 of tick 2 never arrives
  CHECK(r.ack_tick() == 1);
  PartSpec b = frame(3, 1);
  b.changes = {despawn(1)};
  CHECK(feed(r, b));
  CHECK(r.ack_tick() == 3);
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 12});
  PartSpec late = frame(2, 1);
  late.part = 1;
  late.part_count = 2;
  CHECK_FALSE(feed(r, late));
  CHECK(r.ack_tick() == 3);
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 12});
  CHECK(r.frame_at(2) == nullptr);  // never completed
  CHECK(r.violations().empty());
}

TEST_CASE("replica: out-of-order older ticks do not regress the current frame") {
  FrameReplica r = with_three_entities();
  PartSpec s5 = frame(5, 1);
  s5.changes = {change(0, kTen, moved(kTen, 100, 0))};
  CHECK(feed(r, s5));
  PartSpec s4 = frame(4, 1);
  s4.changes = {change(0, kTen, moved(kTen, -100, 0)), despawn(2)};
  CHECK_FALSE(feed(r, s4));
  CHECK(r.ack_tick() == 5);
  CHECK(r.find(10)->x() == 1100);
  CHECK(r.find(12) != nullptr);
  // A duplicate of the current tick changes nothing either.
  CHECK_FALSE(feed(r, s5));
  CHECK(r.find(10)->x() == 1100);
  CHECK(r.frames_completed() == 2);
  CHECK(r.violations().empty());
}

TEST_CASE("replica: a change naming a position beyond the baseline is a violation") {
  SUBCASE("one past the end") {
    FrameReplica r = with_three_entities();
    PartSpec s = frame(2, 1);
    s.changes = {change(3, kTen, moved(kTen, 1, 1))};
    CHECK(feed(r, s));
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 2, 3));
    CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
  }
  SUBCASE("far beyond, after a valid change") {
    FrameReplica r = with_three_entities();
    PartSpec s = frame(2, 1);
    s.changes = {change(1, kEleven, moved(kEleven, 1, 1)), change(1000000, kTen, kTwelve)};
    feed(r, s);
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 2, 1000000));
    CHECK(r.find(11)->values == moved(kEleven, 1, 1));  // the valid record still applies
  }
  SUBCASE("a full frame has no baseline entities at all") {
    FrameReplica r = with_three_entities();
    PartSpec s = frame(2, 0);
    s.changes = {change(0, kTen, moved(kTen, 1, 1))};
    feed(r, s);
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 2, 0));
    CHECK(r.current().entities.empty());
  }
  SUBCASE("an entity in the current frame but not in the snapshot's baseline") {
    FrameReplica r = with_three_entities();
    PartSpec s2 = frame(2, 1);
    s2.spawns = {spawn(make_state(30, 0, 0), "late")};
    CHECK(feed(r, s2));
    CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12, 30});
    PartSpec s3 = frame(3, 1);  // still on baseline 1, which holds three entities
    s3.changes = {change(3, values(0, 0), values(5, 5))};
    feed(r, s3);
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 3, 3));
  }
  SUBCASE("an entity despawned by another part of the same frame") {
    FrameReplica r = with_three_entities();
    PartSpec a = frame(2, 1);
    a.part_count = 2;
    a.changes = {despawn(0)};
    PartSpec b = a;
    b.part = 1;
    b.changes = {change(0, kTen, moved(kTen, 1, 1))};
    CHECK_FALSE(feed(r, a));
    CHECK(feed(r, b));
    CHECK(only_violation(r, Violation::kInconsistentParts, 2, 10));
  }
  SUBCASE("an entity changed by two parts of the same frame") {
    FrameReplica r = with_three_entities();
    PartSpec a = frame(2, 1);
    a.part_count = 2;
    a.changes = {change(2, kTwelve, moved(kTwelve, 1, 0))};
    PartSpec b = a;
    b.part = 1;
    CHECK_FALSE(feed(r, a));
    CHECK(feed(r, b));
    CHECK(only_violation(r, Violation::kInconsistentParts, 2, 12));
    CHECK(r.find(12)->values == moved(kTwelve, 1, 0));  // applied once, not twice
  }
}

TEST_CASE("replica: a despawn naming a position beyond the baseline is a violation") {
  FrameReplica r = with_three_entities();
  PartSpec s = frame(2, 1);
  s.changes = {despawn(2), despawn(55)};
  CHECK(feed(r, s));
  CHECK(only_violation(r, Violation::kDespawnUnknown, 2, 55));
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11});
  r.clear_violations();
  CHECK(r.violations().empty());
  // Position 2 of frame 2's two entities is beyond it.
  PartSpec t = frame(3, 2);
  t.changes = {despawn(2)};
  feed(r, t);
  CHECK(only_violation(r, Violation::kDespawnUnknown, 3, 2));
  r.clear_violations();
  // Despawning twice across parts names one entity twice.
  PartSpec a = frame(4, 2);
  a.part_count = 2;
  a.changes = {despawn(0)};
  PartSpec b = a;
  b.part = 1;
  CHECK_FALSE(feed(r, a));
  CHECK(feed(r, b));
  CHECK(only_violation(r, Violation::kInconsistentParts, 4, 10));
  CHECK(ids_of(r) == std::vector<std::uint32_t>{11});
}

TEST_CASE("replica: duplicate spawns are violations") {
  SUBCASE("already in the baseline") {
    FrameReplica r = with_three_entities();
    PartSpec s = frame(2, 1);
    s.spawns = {spawn(make_state(11, 9, 9), "again")};
    feed(r, s);
    CHECK(only_violation(r, Violation::kDuplicateSpawn, 2, 11));
    CHECK(r.find(11)->values == kEleven);  // the original stays
    CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
  }
  SUBCASE("twice across parts of one frame") {
    FrameReplica r = make_replica();
    PartSpec a = frame(1, 0);
    a.part_count = 2;
    a.spawns = {spawn(make_state(41, 1, 1), "a")};
    PartSpec b = a;
    b.part = 1;
    b.spawns = {spawn(make_state(41, 2, 2), "b")};
    CHECK_FALSE(feed(r, a));
    CHECK(feed(r, b));
    CHECK(only_violation(r, Violation::kDuplicateSpawn, 1, 41));
    CHECK(r.current().entities.size() == 1);
  }
  SUBCASE("twice in one part cannot even be written: ids only increase") {
    FrameReplica r = make_replica();
    PartSpec s = frame(1, 0);
    s.spawns = {spawn(make_state(40, 1, 1), "a"), spawn(make_state(40, 2, 2), "b")};
    feed(r, s);
    CHECK(only_violation(r, Violation::kMalformed, 0, 0));
    CHECK(r.ack_tick() == 0);
  }
  SUBCASE("despawn and respawn in one frame is legal") {
    FrameReplica r = with_three_entities();
    PartSpec s = frame(2, 1);
    s.changes = {despawn(0)};
    s.spawns = {spawn(make_state(10, 7, 7), "ten")};
    CHECK(feed(r, s));
    CHECK(r.violations().empty());
    CHECK(r.find(10)->x() == 7);
    CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
  }
}

TEST_CASE("replica: a move larger than max speed allows is an impossible jump") {
  // 10 m/s at 20 Hz: 50 cm per tick, plus 2 cm of rounding slack.
  FrameReplica r = with_three_entities();
  PartSpec ok = frame(2, 1);
  const test::FieldValues ten2 = moved(kTen, 52, 0);
  const test::FieldValues eleven2 = moved(kEleven, -30, 40);  // exactly 50 cm
  const test::FieldValues twelve2 = moved(kTwelve, 0, 1);     // 12 is now as of tick 2
  ok.changes = {change(0, kTen, ten2), change(1, kEleven, eleven2), change(2, kTwelve, twelve2)};
  CHECK(feed(r, ok));
  CHECK(r.violations().empty());

  PartSpec far = frame(3, 2);
  far.changes = {change(2, twelve2, moved(twelve2, 40, -40))};  // 56.6 cm in one tick
  CHECK(feed(r, far));
  CHECK(only_violation(r, Violation::kImpossibleJump, 3, 12));
  r.clear_violations();

  // The allowance grows with the ticks since the last update: 5 ticks allow 252 cm.
  PartSpec later = frame(7, 2);
  const test::FieldValues twelve7 = moved(twelve2, 250, 0);
  later.changes = {change(2, twelve2, twelve7)};
  CHECK(feed(r, later));
  CHECK(r.violations().empty());
  PartSpec too_far = frame(8, 7);
  too_far.changes = {change(0, ten2, moved(ten2, -32000, 0))};
  CHECK(feed(r, too_far));
  CHECK(only_violation(r, Violation::kImpossibleJump, 8, 10));
  // The move is still applied: the replica mirrors what the server said.
  CHECK(r.find(10)->x() == 1000 + 52 - 32000);
  r.clear_violations();
  // Only position counts: a turn, a health change or a state change are never jumps.
  PartSpec turn = frame(9, 8);
  turn.changes = {change(1, eleven2, values(-530, 40, 40000, 1, 1))};
  CHECK(feed(r, turn));
  CHECK(r.violations().empty());
  // A change whose delta wraps at 32 bits arrives exactly, and is measured as the
  // long way it really is.
  PartSpec wrap = frame(10, 9);
  wrap.changes = {change(2, twelve7, values(-2147483548, 301, 300, 0, 70))};
  CHECK(feed(r, wrap));
  CHECK(only_violation(r, Violation::kImpossibleJump, 10, 12));
  CHECK(r.find(12)->x() == -2147483548);
}

TEST_CASE("replica: the jump allowance counts from when an entity was last updated") {
  // Entity 12 is spawned at tick 1 and then left alone (the server deferred it) in the
  // frames of ticks 2..5; a move at tick 6 on baseline 5 may cover 5 ticks of travel.
  FrameReplica r = with_three_entities();
  for (std::uint32_t t = 2; t <= 5; ++t) CHECK(feed(r, frame(t, t - 1)));
  CHECK(r.current().updated == std::vector<std::uint32_t>{1, 1, 1});
  PartSpec s = frame(6, 5);
  const test::FieldValues twelve6 = moved(kTwelve, 240, 0);
  s.changes = {change(2, kTwelve, twelve6)};
  CHECK(feed(r, s));
  CHECK(r.violations().empty());
  CHECK(r.current().updated == std::vector<std::uint32_t>{1, 1, 6});
  // Now as of tick 6: the same distance in one tick is a jump.
  PartSpec t7 = frame(7, 6);
  t7.changes = {change(2, twelve6, moved(twelve6, 240, 0))};
  CHECK(feed(r, t7));
  CHECK(only_violation(r, Violation::kImpossibleJump, 7, 12));
  r.clear_violations();
  // A heading-only record also dates the entity's values: after it, the allowance
  // starts again from that tick.
  for (std::uint32_t t = 8; t <= 12; ++t) CHECK(feed(r, frame(t, t - 1)));
  PartSpec turn = frame(13, 12);
  turn.changes = {change(0, kTen, values(1000, 2000, 5000, 0, 90))};
  CHECK(feed(r, turn));
  PartSpec go = frame(14, 13);
  go.changes = {change(0, values(1000, 2000, 5000, 0, 90), values(1240, 2000, 5000, 1, 90))};
  CHECK(feed(r, go));
  CHECK(only_violation(r, Violation::kImpossibleJump, 14, 10));
}

TEST_CASE("replica: a snapshot on a baseline the client never had is refused") {
  FrameReplica r = with_three_entities();
  PartSpec s = frame(5, 3);
  s.changes = {despawn(0)};
  CHECK_FALSE(feed(r, s));
  CHECK(only_violation(r, Violation::kUnknownBaseline, 5, 3));
  CHECK(r.ack_tick() == 1);  // not acknowledged
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
  CHECK(r.frame_at(5) == nullptr);
  r.clear_violations();
  // The same for a split frame, once its last part arrives.
  PartSpec a = frame(6, 4);
  a.part_count = 2;
  PartSpec b = a;
  b.part = 1;
  CHECK_FALSE(feed(r, a));
  CHECK(r.violations().empty());
  CHECK_FALSE(feed(r, b));
  CHECK(only_violation(r, Violation::kUnknownBaseline, 6, 4));
  CHECK(r.ack_tick() == 1);
  r.clear_violations();
  // A baseline that has fallen out of the replica's history is unknown too.
  for (std::uint32_t t = 2; t <= FrameReplica::kFrameHistory + 2; ++t) {
    REQUIRE(feed(r, frame(t, t - 1)));
  }
  CHECK_FALSE(feed(r, frame(FrameReplica::kFrameHistory + 3, 1)));
  CHECK(only_violation(r, Violation::kUnknownBaseline, FrameReplica::kFrameHistory + 3, 1));
  // ... while any frame still held works, however old.
  r.clear_violations();
  CHECK(feed(r, frame(FrameReplica::kFrameHistory + 4, 5)));
  CHECK(r.violations().empty());
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
}

TEST_CASE("replica: a full frame (no baseline) replaces everything") {
  FrameReplica r = with_three_entities();
  PartSpec s = frame(2, 0);
  s.spawns = {spawn(make_state(12, 1, 1), "twelve"), spawn(make_state(13, 2, 2), "thirteen")};
  CHECK(feed(r, s));
  CHECK(r.violations().empty());
  CHECK(ids_of(r) == std::vector<std::uint32_t>{12, 13});
  CHECK(r.find(12)->values == values(1, 1));
  CHECK(r.leaves() == 2);  // 10 and 11
}

TEST_CASE("replica: the client's own entity replicated as foreign is a violation") {
  FrameReplica r = make_replica();
  PartSpec s = frame(1, 0);
  s.spawns = {spawn(make_state(kSelf, 0, 0), "me", test::kPlayerType),
              spawn(make_state(2, 0, 0), "other")};
  CHECK(feed(r, s));
  CHECK(only_violation(r, Violation::kSelfInView, 1, kSelf));
  CHECK(r.find(kSelf) == nullptr);
  CHECK(r.find(2) != nullptr);
}

TEST_CASE("replica: inconsistent parts are violations") {
  SUBCASE("part index out of range does not even parse") {
    FrameReplica r = make_replica();
    PartSpec s = frame(1, 0);
    s.part = 2;
    s.part_count = 2;
    CHECK_FALSE(feed(r, s));
    CHECK(only_violation(r, Violation::kMalformed, 0, 0));
    CHECK(r.ack_tick() == 0);
  }
  SUBCASE("parts disagree on the baseline") {
    FrameReplica r = with_three_entities();
    PartSpec a = frame(2, 1);
    a.part_count = 2;
    PartSpec b = frame(2, 0);
    b.part = 1;
    b.part_count = 2;
    CHECK_FALSE(feed(r, a));
    CHECK_FALSE(feed(r, b));
    CHECK(only_violation(r, Violation::kInconsistentParts, 2, 0));
    CHECK(r.ack_tick() == 1);
  }
  SUBCASE("two parts carry a self record") {
    // Self records are deltas against the baseline's self: applying two would move the
    // client's own entity twice as far.
    FrameReplica r = with_three_entities();
    PartSpec a = frame(2, 1);
    a.part_count = 2;
    a.has_self = true;
    a.self_now = values(40, 0);
    PartSpec b = a;
    b.part = 1;
    CHECK_FALSE(feed(r, a));
    CHECK(feed(r, b));
    CHECK(only_violation(r, Violation::kInconsistentParts, 2, kSelf));
    CHECK(r.self() == values(40, 0));  // applied once
  }
  SUBCASE("parts disagree on the part count") {
    FrameReplica r = with_three_entities();
    PartSpec a = frame(2, 1);
    a.part_count = 2;
    PartSpec b = frame(2, 1);
    b.part = 1;
    b.part_count = 3;
    CHECK_FALSE(feed(r, a));
    CHECK_FALSE(feed(r, b));
    CHECK(only_violation(r, Violation::kInconsistentParts, 2, 0));
    CHECK(r.ack_tick() == 1);
  }
}

TEST_CASE("replica: enters and leaves count view changes between displayed frames") {
  FrameReplica r = make_replica();
  CHECK(r.enters() == 0);
  CHECK(r.leaves() == 0);
  PartSpec s1 = frame(1, 0);
  for (std::uint32_t id = 10; id < 15; ++id) s1.spawns.push_back(spawn(make_state(id, 0, 0), "x"));
  CHECK(feed(r, s1));
  CHECK(r.enters() == 5);
  CHECK(r.leaves() == 0);
  PartSpec s2 = frame(2, 1);
  s2.changes = {despawn(0), despawn(4)};  // 10 and 14
  s2.spawns = {spawn(make_state(20, 0, 0), "y")};
  CHECK(feed(r, s2));
  CHECK(ids_of(r) == std::vector<std::uint32_t>{11, 12, 13, 20});
  CHECK(r.enters() == 6);
  CHECK(r.leaves() == 2);
  // A full frame of a different set: 11..13 stay, 20 leaves, 30 and 31 enter.
  PartSpec s3 = frame(3, 0);
  for (std::uint32_t id : {11u, 12u, 13u, 30u, 31u}) {
    s3.spawns.push_back(spawn(make_state(id, 0, 0), "z"));
  }
  CHECK(feed(r, s3));
  CHECK(r.enters() == 8);
  CHECK(r.leaves() == 3);
  // Frames that are refused or superseded change nothing.
  feed(r, frame(2, 1));
  feed(r, frame(9, 8));
  CHECK(r.enters() == 8);
  CHECK(r.leaves() == 3);
  // reset() starts over.
  r.reset({10.0, 20, kSelf}, test::test_schema());
  CHECK(r.enters() == 0);
  CHECK(r.leaves() == 0);
  CHECK(r.ack_tick() == 0);
  CHECK(r.frames_completed() == 0);
  CHECK(r.violations().empty());
  CHECK(r.current().entities.empty());
  CHECK(r.info(11) == nullptr);
}

TEST_CASE("replica: a malformed part is a violation and changes nothing") {
  FrameReplica r = with_three_entities();
  PartSpec good = frame(2, 1);
  good.changes = {change(0, kTen, moved(kTen, 5, 5)), despawn(1)};
  good.spawns = {spawn(make_state(20, 1, 1), "twenty")};
  const test::Bytes bytes = test::encode(good);
  // Every truncation and one trailing byte too many are malformed.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CHECK_FALSE(r.apply(std::span(bytes).first(n)));
  }
  test::Bytes longer = bytes;
  longer.push_back(0);
  CHECK_FALSE(r.apply(longer));
  CHECK(r.violations().size() == bytes.size() + 1);
  for (const auto& v : r.violations()) CHECK(v.kind == Violation::kMalformed);
  CHECK(r.ack_tick() == 1);
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
  CHECK(r.last_input_sequence() == 1);  // a malformed header is not believed either
  r.clear_violations();
  // The intact part still applies afterwards.
  CHECK(r.apply(bytes));
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 12, 20});
  CHECK(r.violations().empty());
}

TEST_CASE("replica: entity info is kept for held entities and forgotten for long-gone ones") {
  FrameReplica r = make_replica();
  PartSpec s = frame(1, 0);
  for (std::uint32_t id = 100; id < 400; ++id) {
    s.spawns.push_back(spawn(make_state(id, 0, 0), fmt::format("n{}", id)));
  }
  REQUIRE(feed(r, s));
  // From tick 2 on, only entity 100 stays in view.
  PartSpec only = frame(2, 0);
  only.spawns = {spawn(make_state(100, 0, 0), "n100")};
  REQUIRE(feed(r, only));
  CHECK(r.info(399) != nullptr);  // frame 1 is still held: its entities may come back
  for (std::uint32_t t = 3; t <= 3 + 2 * FrameReplica::kFrameHistory; ++t) {
    REQUIRE(feed(r, frame(t, t - 1)));
  }
  CHECK(r.info(399) == nullptr);
  CHECK(r.info(200) == nullptr);
  REQUIRE(r.info(100) != nullptr);
  CHECK(r.info(100)->name == "n100");
  CHECK(r.violations().empty());
}

TEST_CASE("replica: violation names are distinct") {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < replica::kViolationKinds; ++k) {
    names.push_back(replica::to_string(static_cast<Violation>(k)));
    CHECK(names.back() != "unknown");
  }
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  CHECK(std::string(replica::to_string(static_cast<Violation>(replica::kViolationKinds))) ==
        "unknown");
}

TEST_CASE("replica: a spawn's type is an index into the session's schema") {
  // test_schema() has two types: a spawn naming a third is malformed, and changes nothing.
  FrameReplica r = with_three_entities();
  PartSpec s = frame(2, 1);
  s.spawns = {spawn(make_state(20, 1, 1), "twenty", 2)};
  const test::Bytes bytes = test::encode(s);
  REQUIRE_FALSE(bytes.empty());
  CHECK_FALSE(r.apply(bytes));
  CHECK(only_violation(r, Violation::kMalformed, 0, 0));
  CHECK(r.ack_tick() == 1);
  CHECK(r.find(20) == nullptr);
  // A session whose schema has a third type reads the same bytes.
  protocol::Schema three = test::test_schema();
  REQUIRE_FALSE(three.add_type({"merchant", protocol::EntityKind::kNpc}).has_value());
  FrameReplica other;
  other.reset({10.0, 20, kSelf}, three);
  CHECK(other.schema() == three);
  PartSpec full = frame(1, 0);
  full.spawns = {spawn(make_state(20, 1, 1), "twenty", 2)};
  CHECK(other.apply(test::encode(full, three)));
  REQUIRE(other.info(20) != nullptr);
  CHECK(other.info(20)->type == 2);
  CHECK(other.info(20)->kind == protocol::EntityKind::kNpc);
  CHECK(other.violations().empty());
}

TEST_CASE("replica: records follow the schema given at reset") {
  // One more row, signed 8 bits: the replica reads and applies it like any other.
  protocol::Schema schema = test::test_schema();
  protocol::FieldSpec mood;
  mood.name = "mood";
  mood.bits = 8;
  mood.is_signed = true;
  REQUIRE_FALSE(schema.add_field(mood).has_value());
  const std::size_t row = schema.size() - 1;
  FrameReplica r;
  r.reset({10.0, 20, kSelf}, schema);
  CHECK(r.self().size() == schema.size());
  test::FieldValues v(std::vector<std::int32_t>(schema.size(), 0));
  v[protocol::kX] = 100;
  v[row] = -5;
  PartSpec s1 = frame(1, 0);
  s1.spawns = {spawn({7, v}, "seven")};
  s1.spawns[0].values = v;
  s1.has_self = true;
  s1.self_base = test::FieldValues(std::vector<std::int32_t>(schema.size(), 0));
  s1.self_now = v;
  REQUIRE(r.apply(test::encode(s1, schema)));
  REQUIRE(r.find(7) != nullptr);
  CHECK(r.find(7)->values.size() == schema.size());
  CHECK(r.find(7)->values[row] == -5);
  CHECK(r.self()[row] == -5);
  test::FieldValues w = v;
  w[row] = 127;
  PartSpec s2 = frame(2, 1);
  s2.changes = {change(0, v, w)};
  REQUIRE(r.apply(test::encode(s2, schema)));
  CHECK(r.find(7)->values[row] == 127);
  CHECK(r.violations().empty());
  // The same bytes under test_schema() name a row it does not have: malformed.
  FrameReplica narrow = make_replica();
  CHECK_FALSE(narrow.apply(test::encode(s1, schema)));
  CHECK(only_violation(narrow, Violation::kMalformed, 0, 0));
}
