// FrameReplica (shared/replica/frame_replica.hpp) fed with hand-built snapshots: frame
// assembly from baseline + parts, acknowledgment, and every protocol invariant check.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "replica/frame_replica.hpp"
#include "wire.hpp"

using namespace zone;
using replica::FrameReplica;
using replica::Violation;
using test::make_state;
using test::SnapshotSpec;

namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::uint32_t kSelf = 1;

FrameReplica make_replica(double max_speed = 10.0, std::uint32_t tick_rate = 20) {
  FrameReplica r;
  r.reset({max_speed, tick_rate, kSelf});
  return r;
}

bool feed(FrameReplica& r, const Bytes& bytes) {
  const protocol::Snapshot* s = test::snapshot_of(bytes);
  REQUIRE(s != nullptr);
  return r.apply(bytes, *s);
}

bool feed(FrameReplica& r, const SnapshotSpec& spec) {
  return feed(r, test::encode(spec));
}

SnapshotSpec frame(std::uint32_t tick, std::uint32_t baseline) {
  SnapshotSpec s;
  s.tick = tick;
  s.baseline = baseline;
  s.self = make_state(kSelf, 0, 0, 0, 100, protocol::EntityKind::Player);
  s.last_input = tick;
  return s;
}

std::vector<std::uint32_t> ids_of(const FrameReplica& r) {
  std::vector<std::uint32_t> ids;
  for (const auto& e : r.current().entities) ids.push_back(e.id());
  return ids;
}

bool only_violation(const FrameReplica& r, Violation kind, std::uint32_t tick, std::uint32_t id) {
  return r.violations().size() == 1 && r.violations()[0].kind == kind &&
         r.violations()[0].server_tick == tick && r.violations()[0].entity_id == id;
}

// Tick 1: a full frame with entities 10, 11, 12.
FrameReplica with_three_entities() {
  FrameReplica r = make_replica();
  SnapshotSpec s = frame(1, 0);
  s.spawns = {{make_state(10, 1000, 2000, 100, 90), 100, "ten"},
              {make_state(11, -500, 0, 200, 80), 120, "eleven"},
              {make_state(12, 0, 300, 300, 70), 140, "twelve"}};
  REQUIRE(feed(r, s));
  REQUIRE(r.violations().empty());
  return r;
}

}  // namespace

TEST_CASE("replica: spawn then a move delta against the baseline") {
  FrameReplica r = make_replica();
  CHECK(r.ack_tick() == 0);
  CHECK(r.current().entities.empty());
  SnapshotSpec s1 = frame(1, 0);
  s1.spawns = {{make_state(5, 10000, 20000, 1234, 77, protocol::EntityKind::Npc,
                           protocol::MoveState::Walking),
                150, "wolf"}};
  CHECK(feed(r, s1));
  CHECK(r.ack_tick() == 1);
  REQUIRE(r.find(5) != nullptr);
  CHECK(r.find(5)->x() == 10000);
  CHECK(r.find(5)->y() == 20000);
  CHECK(r.find(5)->heading() == 1234);
  CHECK(r.find(5)->health() == 77);
  CHECK(r.find(5)->move_state() == protocol::MoveState::Walking);
  CHECK(r.name_of(5) == "wolf");
  CHECK(r.name_of(6).empty());

  SnapshotSpec s2 = frame(2, 1);
  s2.moves.emplace_back(5, std::int16_t{30}, std::int16_t{-20}, std::uint16_t{0},
                        protocol::MoveState::Walking);
  CHECK(feed(r, s2));
  CHECK(r.ack_tick() == 2);
  CHECK(r.find(5)->x() == 10030);
  CHECK(r.find(5)->y() == 19980);

  // Tick 3 is encoded against tick 1 (the client's tick-2 ack was lost): the delta is
  // relative to tick 1's state, not the current one.
  SnapshotSpec s3 = frame(3, 1);
  s3.moves.emplace_back(5, std::int16_t{50}, std::int16_t{0}, std::uint16_t{0},
                        protocol::MoveState::Walking);
  s3.headings.emplace_back(5, std::uint16_t{999}, protocol::MoveState::Idle);
  s3.healths.emplace_back(5, std::uint16_t{12});
  CHECK(feed(r, s3));
  CHECK(r.find(5)->x() == 10050);
  CHECK(r.find(5)->y() == 20000);
  CHECK(r.find(5)->heading() == 999);
  CHECK(r.find(5)->move_state() == protocol::MoveState::Idle);
  CHECK(r.find(5)->health() == 12);

  // A teleport sets the absolute position.
  SnapshotSpec s4 = frame(4, 3);
  s4.teleports.emplace_back(5, -7, 123456789, std::uint16_t{0}, protocol::MoveState::Walking);
  CHECK(feed(r, s4));
  CHECK(r.find(5)->x() == -7);
  CHECK(r.find(5)->y() == 123456789);
  CHECK(r.find(5)->health() == 12);  // untouched fields keep the baseline's value
  CHECK(r.violations().empty());
  CHECK(r.frames_completed() == 4);
}

TEST_CASE("replica: entities not mentioned keep their baseline state and empty frames still ack") {
  FrameReplica r = with_three_entities();
  CHECK(feed(r, frame(2, 1)));
  CHECK(r.ack_tick() == 2);
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
  CHECK(r.find(11)->x() == -500);
  CHECK(r.find(12)->health() == 70);
  CHECK(r.violations().empty());
}

TEST_CASE("replica: self state and last input sequence come from the newest part") {
  FrameReplica r = make_replica();
  SnapshotSpec s = frame(3, 0);
  s.self = make_state(kSelf, 111, 222, 5, 66, protocol::EntityKind::Player);
  s.last_input = 40;
  CHECK(feed(r, s));
  CHECK(r.self_state().x() == 111);
  CHECK(r.last_input_sequence() == 40);
  SnapshotSpec old = frame(2, 0);
  old.self = make_state(kSelf, 1, 1, 5, 66, protocol::EntityKind::Player);
  old.last_input = 30;
  CHECK_FALSE(feed(r, old));
  CHECK(r.self_state().x() == 111);
  CHECK(r.last_input_sequence() == 40);
  // A part of an incomplete newer frame already carries the newest self state.
  SnapshotSpec part = frame(5, 3);
  part.part = 1;
  part.part_count = 2;
  part.self = make_state(kSelf, 333, 444, 5, 66, protocol::EntityKind::Player);
  part.last_input = 50;
  CHECK_FALSE(feed(r, part));
  CHECK(r.ack_tick() == 3);
  CHECK(r.self_state().x() == 333);
  CHECK(r.last_input_sequence() == 50);
}

TEST_CASE("replica: a split frame completes only with all parts in any order") {
  const std::vector<std::vector<int>> orders = {{0, 1, 2}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}};
  for (const auto& order : orders) {
    FrameReplica r = with_three_entities();
    std::vector<SnapshotSpec> parts(3, frame(2, 1));
    for (std::uint16_t p = 0; p < 3; ++p) {
      parts[p].part = p;
      parts[p].part_count = 3;
    }
    parts[0].despawns = {11};
    parts[0].moves.emplace_back(10, std::int16_t{10}, std::int16_t{10}, std::uint16_t{0},
                                protocol::MoveState::Walking);
    parts[1].spawns = {{make_state(20, 5, 5), 50, "twenty"}};
    parts[2].spawns = {{make_state(21, 6, 6), 60, "twenty-one"}};
    parts[2].healths.emplace_back(12, std::uint16_t{1});
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
    CHECK(r.find(10)->x() == 1010);
    CHECK(r.find(12)->health() == 1);
    CHECK(r.name_of(21) == "twenty-one");
    CHECK(r.violations().empty());
    // Parts of the completed tick arriving late are ignored.
    CHECK_FALSE(feed(r, parts[0]));
    CHECK(r.ack_tick() == 2);
    CHECK(r.violations().empty());
  }
}

TEST_CASE("replica: a lost part holds the frame back until a later complete frame supersedes it") {
  FrameReplica r = with_three_entities();
  SnapshotSpec a = frame(2, 1);
  a.part_count = 2;
  a.despawns = {10};
  CHECK_FALSE(feed(r, a));  // part 1 of tick 2 never arrives
  SnapshotSpec b = frame(3, 1);
  b.despawns = {11};
  CHECK(feed(r, b));
  CHECK(r.ack_tick() == 3);
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 12});
  SnapshotSpec late = frame(2, 1);
  late.part = 1;
  late.part_count = 2;
  CHECK_FALSE(feed(r, late));
  CHECK(r.ack_tick() == 3);
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 12});
  CHECK(r.violations().empty());
}

TEST_CASE("replica: out-of-order older ticks do not regress the current frame") {
  FrameReplica r = with_three_entities();
  SnapshotSpec s5 = frame(5, 1);
  s5.moves.emplace_back(10, std::int16_t{100}, std::int16_t{0}, std::uint16_t{0},
                        protocol::MoveState::Walking);
  CHECK(feed(r, s5));
  SnapshotSpec s4 = frame(4, 1);
  s4.moves.emplace_back(10, std::int16_t{-100}, std::int16_t{0}, std::uint16_t{0},
                        protocol::MoveState::Walking);
  s4.despawns = {12};
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

TEST_CASE("replica: delta for an unknown entity is a violation") {
  SUBCASE("move") {
    FrameReplica r = with_three_entities();
    SnapshotSpec s = frame(2, 1);
    s.moves.emplace_back(99, std::int16_t{1}, std::int16_t{1}, std::uint16_t{0},
                         protocol::MoveState::Walking);
    feed(r, s);
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 2, 99));
    CHECK(r.find(99) == nullptr);
  }
  SUBCASE("teleport") {
    FrameReplica r = with_three_entities();
    SnapshotSpec s = frame(2, 1);
    s.teleports.emplace_back(98, 1, 1, std::uint16_t{0}, protocol::MoveState::Walking);
    feed(r, s);
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 2, 98));
  }
  SUBCASE("heading") {
    FrameReplica r = with_three_entities();
    SnapshotSpec s = frame(2, 1);
    s.headings.emplace_back(97, std::uint16_t{1}, protocol::MoveState::Idle);
    feed(r, s);
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 2, 97));
  }
  SUBCASE("health") {
    FrameReplica r = with_three_entities();
    SnapshotSpec s = frame(2, 1);
    s.healths.emplace_back(96, std::uint16_t{1});
    feed(r, s);
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 2, 96));
  }
  SUBCASE("entity despawned in the same frame") {
    FrameReplica r = with_three_entities();
    SnapshotSpec s = frame(2, 1);
    s.despawns = {10};
    s.moves.emplace_back(10, std::int16_t{1}, std::int16_t{1}, std::uint16_t{0},
                         protocol::MoveState::Walking);
    feed(r, s);
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 2, 10));
  }
  SUBCASE("entity in the current frame but not in the snapshot's baseline") {
    FrameReplica r = with_three_entities();
    SnapshotSpec s2 = frame(2, 1);
    s2.spawns = {{make_state(30, 0, 0), 10, "late"}};
    CHECK(feed(r, s2));
    SnapshotSpec s3 = frame(3, 1);  // still on baseline 1, which lacks entity 30
    s3.moves.emplace_back(30, std::int16_t{5}, std::int16_t{5}, std::uint16_t{0},
                          protocol::MoveState::Walking);
    feed(r, s3);
    CHECK(only_violation(r, Violation::kDeltaForUnknown, 3, 30));
  }
}

TEST_CASE("replica: despawn of an unknown entity is a violation") {
  FrameReplica r = with_three_entities();
  SnapshotSpec s = frame(2, 1);
  s.despawns = {12, 55};
  CHECK(feed(r, s));
  CHECK(only_violation(r, Violation::kDespawnUnknown, 2, 55));
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11});
  r.clear_violations();
  CHECK(r.violations().empty());
  // Despawning twice: the second is unknown.
  SnapshotSpec t = frame(3, 2);
  t.despawns = {10, 10};
  feed(r, t);
  CHECK(only_violation(r, Violation::kDespawnUnknown, 3, 10));
}

TEST_CASE("replica: duplicate spawns are violations") {
  SUBCASE("already in the baseline") {
    FrameReplica r = with_three_entities();
    SnapshotSpec s = frame(2, 1);
    s.spawns = {{make_state(11, 9, 9), 1, "again"}};
    feed(r, s);
    CHECK(only_violation(r, Violation::kDuplicateSpawn, 2, 11));
    CHECK(r.find(11)->x() == -500);  // the original stays
    CHECK(r.name_of(11) == "eleven");
  }
  SUBCASE("twice in one frame") {
    FrameReplica r = make_replica();
    SnapshotSpec s = frame(1, 0);
    s.spawns = {{make_state(40, 1, 1), 1, "a"}, {make_state(40, 2, 2), 1, "b"}};
    feed(r, s);
    CHECK(only_violation(r, Violation::kDuplicateSpawn, 1, 40));
    CHECK(r.current().entities.size() == 1);
  }
  SUBCASE("twice across parts of one frame") {
    FrameReplica r = make_replica();
    SnapshotSpec a = frame(1, 0);
    a.part_count = 2;
    a.spawns = {{make_state(41, 1, 1), 1, "a"}};
    SnapshotSpec b = a;
    b.part = 1;
    CHECK_FALSE(feed(r, a));
    CHECK(feed(r, b));
    CHECK(only_violation(r, Violation::kDuplicateSpawn, 1, 41));
  }
  SUBCASE("despawn and respawn in one frame is legal") {
    FrameReplica r = with_three_entities();
    SnapshotSpec s = frame(2, 1);
    s.despawns = {10};
    s.spawns = {{make_state(10, 7, 7), 100, "ten"}};
    CHECK(feed(r, s));
    CHECK(r.violations().empty());
    CHECK(r.find(10)->x() == 7);
  }
}

TEST_CASE("replica: a move larger than max speed allows is an impossible jump") {
  // 10 m/s at 20 Hz: 50 cm per tick, plus 2 cm of rounding slack.
  FrameReplica r = with_three_entities();
  SnapshotSpec ok = frame(2, 1);
  ok.moves.emplace_back(10, std::int16_t{52}, std::int16_t{0}, std::uint16_t{0},
                        protocol::MoveState::Walking);
  ok.moves.emplace_back(11, std::int16_t{-30}, std::int16_t{40}, std::uint16_t{0},
                        protocol::MoveState::Walking);  // exactly 50 cm
  ok.moves.emplace_back(12, std::int16_t{0}, std::int16_t{1}, std::uint16_t{0},
                        protocol::MoveState::Walking);  // 12 is now as of tick 2
  CHECK(feed(r, ok));
  CHECK(r.violations().empty());

  SnapshotSpec far = frame(3, 2);
  far.moves.emplace_back(12, std::int16_t{40}, std::int16_t{-40}, std::uint16_t{0},
                         protocol::MoveState::Walking);  // 56.6 cm in one tick
  CHECK(feed(r, far));
  CHECK(only_violation(r, Violation::kImpossibleJump, 3, 12));
  r.clear_violations();

  // The allowance grows with the ticks since the baseline: 5 ticks allow 252 cm.
  SnapshotSpec later = frame(7, 2);
  later.moves.emplace_back(12, std::int16_t{250}, std::int16_t{0}, std::uint16_t{0},
                           protocol::MoveState::Walking);
  CHECK(feed(r, later));
  CHECK(r.violations().empty());
  SnapshotSpec too_far = frame(8, 7);
  too_far.moves.emplace_back(10, std::int16_t{-32000}, std::int16_t{0}, std::uint16_t{0},
                             protocol::MoveState::Walking);
  CHECK(feed(r, too_far));
  CHECK(only_violation(r, Violation::kImpossibleJump, 8, 10));
  // The move is still applied: the replica mirrors what the server said.
  CHECK(r.find(10)->x() == 1000 + 52 - 32000);
  // Teleports are never jumps.
  r.clear_violations();
  SnapshotSpec tp = frame(9, 8);
  tp.teleports.emplace_back(11, 9'000'000, -9'000'000, std::uint16_t{0},
                            protocol::MoveState::Walking);
  CHECK(feed(r, tp));
  CHECK(r.violations().empty());
}

TEST_CASE("replica: the jump allowance counts from when an entity was last sent") {
  // Entity 12 is spawned at tick 1 and then left alone (the server deferred it) in the
  // frames of ticks 2..5; a move at tick 6 on baseline 5 may cover 5 ticks of travel.
  FrameReplica r = with_three_entities();
  for (std::uint32_t t = 2; t <= 5; ++t) CHECK(feed(r, frame(t, t - 1)));
  SnapshotSpec s = frame(6, 5);
  s.moves.emplace_back(12, std::int16_t{240}, std::int16_t{0}, std::uint16_t{0},
                       protocol::MoveState::Walking);
  CHECK(feed(r, s));
  CHECK(r.violations().empty());
  // Now as of tick 6: the same distance in one tick is a jump.
  SnapshotSpec t7 = frame(7, 6);
  t7.moves.emplace_back(12, std::int16_t{240}, std::int16_t{0}, std::uint16_t{0},
                        protocol::MoveState::Walking);
  CHECK(feed(r, t7));
  CHECK(only_violation(r, Violation::kImpossibleJump, 7, 12));
}

TEST_CASE("replica: a snapshot on a baseline the client never had is refused") {
  FrameReplica r = with_three_entities();
  SnapshotSpec s = frame(5, 3);
  s.despawns = {10};
  CHECK_FALSE(feed(r, s));
  CHECK(only_violation(r, Violation::kUnknownBaseline, 5, 3));
  CHECK(r.ack_tick() == 1);  // not acknowledged
  CHECK(ids_of(r) == std::vector<std::uint32_t>{10, 11, 12});
  r.clear_violations();
  // The same for a split frame, once its last part arrives.
  SnapshotSpec a = frame(6, 4);
  a.part_count = 2;
  SnapshotSpec b = a;
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

TEST_CASE("replica: a full frame (baseline 0) replaces everything") {
  FrameReplica r = with_three_entities();
  SnapshotSpec s = frame(2, 0);
  s.spawns = {{make_state(12, 1, 1), 1, "twelve"}, {make_state(13, 2, 2), 1, "thirteen"}};
  CHECK(feed(r, s));
  CHECK(r.violations().empty());
  CHECK(ids_of(r) == std::vector<std::uint32_t>{12, 13});
  CHECK(r.find(12)->x() == 1);
}

TEST_CASE("replica: the client's own entity replicated as foreign is a violation") {
  FrameReplica r = make_replica();
  SnapshotSpec s = frame(1, 0);
  s.spawns = {{make_state(kSelf, 0, 0, 0, 100, protocol::EntityKind::Player), 100, "me"},
              {make_state(2, 0, 0), 100, "other"}};
  CHECK(feed(r, s));
  CHECK(only_violation(r, Violation::kSelfInView, 1, kSelf));
  CHECK(r.find(kSelf) == nullptr);
  CHECK(r.find(2) != nullptr);
}

TEST_CASE("replica: inconsistent parts are violations") {
  SUBCASE("part index out of range") {
    FrameReplica r = make_replica();
    SnapshotSpec s = frame(1, 0);
    s.part = 2;
    s.part_count = 2;
    CHECK_FALSE(feed(r, s));
    CHECK(only_violation(r, Violation::kInconsistentParts, 1, 0));
    CHECK(r.ack_tick() == 0);
  }
  SUBCASE("parts disagree on the baseline") {
    FrameReplica r = with_three_entities();
    SnapshotSpec a = frame(2, 1);
    a.part_count = 2;
    SnapshotSpec b = frame(2, 0);
    b.part = 1;
    b.part_count = 2;
    CHECK_FALSE(feed(r, a));
    CHECK_FALSE(feed(r, b));
    CHECK(only_violation(r, Violation::kInconsistentParts, 2, 0));
    CHECK(r.ack_tick() == 1);
  }
  SUBCASE("parts disagree on the part count") {
    FrameReplica r = with_three_entities();
    SnapshotSpec a = frame(2, 1);
    a.part_count = 2;
    SnapshotSpec b = frame(2, 1);
    b.part = 1;
    b.part_count = 3;
    CHECK_FALSE(feed(r, a));
    CHECK_FALSE(feed(r, b));
    CHECK(only_violation(r, Violation::kInconsistentParts, 2, 0));
  }
}

TEST_CASE("replica: enters and leaves count view changes between displayed frames") {
  FrameReplica r = make_replica();
  CHECK(r.enters() == 0);
  CHECK(r.leaves() == 0);
  SnapshotSpec s1 = frame(1, 0);
  for (std::uint32_t id = 10; id < 15; ++id) s1.spawns.push_back({make_state(id, 0, 0), 1, "x"});
  CHECK(feed(r, s1));
  CHECK(r.enters() == 5);
  CHECK(r.leaves() == 0);
  SnapshotSpec s2 = frame(2, 1);
  s2.despawns = {10, 14};
  s2.spawns = {{make_state(20, 0, 0), 1, "y"}};
  CHECK(feed(r, s2));
  CHECK(r.enters() == 6);
  CHECK(r.leaves() == 2);
  // A full frame of a different set: 11..13 stay, 20 leaves, 30 and 31 enter.
  SnapshotSpec s3 = frame(3, 0);
  for (std::uint32_t id : {11u, 12u, 13u, 30u, 31u}) {
    s3.spawns.push_back({make_state(id, 0, 0), 1, "z"});
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
  r.reset({10.0, 20, kSelf});
  CHECK(r.enters() == 0);
  CHECK(r.ack_tick() == 0);
  CHECK(r.violations().empty());
  CHECK(r.current().entities.empty());
}

TEST_CASE("replica: violation names are distinct") {
  std::vector<std::string> names;
  for (std::size_t k = 0; k < replica::kViolationKinds; ++k) {
    names.push_back(replica::to_string(static_cast<Violation>(k)));
    CHECK(names.back() != "unknown");
  }
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
}
