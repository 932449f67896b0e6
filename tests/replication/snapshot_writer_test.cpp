// SnapshotWriter (server/replication/snapshot_writer.hpp): splitting a frame update into
// parts of at most max_packet_bytes, and encoding them losslessly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "replication/snapshot_writer.hpp"
#include "wire.hpp"

using namespace zone;
using replication::EntityRecord;
using replication::SnapshotHeader;
using replication::SnapshotWriter;

namespace {

using Bytes = std::vector<std::uint8_t>;

// Records plus the storage their names point into.
struct RecordSet {
  std::deque<std::string> names;
  std::vector<EntityRecord> records;
};

struct Mix {
  double spawn = 1.0;
  double update = 1.0;
  double despawn = 1.0;
  std::size_t min_name = 0;
  std::size_t max_name = 64;
};

std::string random_name(std::mt19937_64& rng, std::size_t len) {
  std::string s(len, ' ');
  for (char& c : s) c = static_cast<char>('!' + rng() % 94);
  return s;
}

RecordSet random_records(std::mt19937_64& rng, std::size_t n, const Mix& mix) {
  RecordSet set;
  std::vector<std::uint32_t> ids(n);
  std::iota(ids.begin(), ids.end(), 1u);
  std::shuffle(ids.begin(), ids.end(), rng);
  for (auto& id : ids) id = id * 7 + static_cast<std::uint32_t>(rng() % 7);  // sparse, unique
  std::discrete_distribution<int> kind({mix.spawn, mix.update, mix.despawn});
  std::uniform_int_distribution<std::int32_t> coord(-2'000'000, 2'000'000);
  for (std::size_t i = 0; i < n; ++i) {
    EntityRecord r;
    const auto heading = static_cast<std::uint16_t>(rng());
    const auto health = static_cast<std::uint16_t>(rng());
    r.state =
        test::make_state(ids[i], coord(rng), coord(rng), heading, health,
                         rng() % 2 ? protocol::EntityKind::Npc : protocol::EntityKind::Player,
                         rng() % 2 ? protocol::MoveState::Idle : protocol::MoveState::Walking);
    switch (kind(rng)) {
      case 0: {
        r.fields = EntityRecord::kSpawn;
        r.max_health = static_cast<std::uint16_t>(rng());
        const std::size_t len =
            mix.min_name + static_cast<std::size_t>(rng() % (mix.max_name - mix.min_name + 1));
        set.names.push_back(random_name(rng, len));
        r.name = set.names.back();
        break;
      }
      case 1: {
        do {
          r.fields = 0;
          const auto pos = rng() % 3;  // none, move, teleport
          if (pos == 1) r.fields |= EntityRecord::kMove;
          if (pos == 2) r.fields |= EntityRecord::kTeleport;
          if (rng() % 2) r.fields |= EntityRecord::kHeading;
          if (rng() % 3 == 0) r.fields |= EntityRecord::kHealth;
        } while (r.fields == 0);
        r.dx = static_cast<std::int16_t>(rng());
        r.dy = static_cast<std::int16_t>(rng());
        break;
      }
      default:
        r.fields = EntityRecord::kDespawn;
        break;
    }
    set.records.push_back(r);
  }
  return set;
}

SnapshotHeader make_header(std::uint32_t tick) {
  SnapshotHeader h;
  h.server_tick = tick;
  h.baseline_tick = tick > 3 ? tick - 3 : 0;
  h.self_state = test::make_state(424242, -5, 77777, 1234, 55, protocol::EntityKind::Player,
                                  protocol::MoveState::Walking);
  h.last_input_sequence = tick * 3 + 1;
  return h;
}

struct Written {
  std::vector<Bytes> parts;
  std::uint64_t total = 0;
};

Written write_all(SnapshotWriter& w, const SnapshotHeader& h,
                  const std::vector<EntityRecord>& records) {
  Written out;
  out.total = w.write(h, records, [&](std::span<const std::uint8_t> b) {
    out.parts.emplace_back(b.begin(), b.end());
  });
  return out;
}

// Where each piece of a record ended up.
struct Found {
  int spawn = 0, move = 0, teleport = 0, heading = 0, health = 0, despawn = 0;
  int part = -1;
  bool split = false;  // pieces of one record in different parts
  test::SpawnSpec spawn_value;
  protocol::MoveDelta move_value;
  protocol::MoveAbsolute teleport_value;
  protocol::HeadingUpdate heading_value;
  protocol::HealthUpdate health_value;
  void at(int p) {
    if (part != -1 && part != p) split = true;
    part = p;
  }
};

// Writes the records and checks every property of the result. Returns the part count.
std::size_t check_write(std::uint32_t max_bytes, const std::vector<EntityRecord>& records,
                        std::uint32_t tick) {
  SnapshotWriter writer(max_bytes);
  CHECK(writer.max_packet_bytes() == max_bytes);
  const SnapshotHeader header = make_header(tick);
  const Written w = write_all(writer, header, records);
  const std::size_t n = w.parts.size();
  REQUIRE(n >= 1);
  CHECK(writer.parts_needed(records) == n);

  std::uint64_t total = 0;
  std::unordered_map<std::uint32_t, Found> found;
  for (std::size_t p = 0; p < n; ++p) {
    const Bytes& bytes = w.parts[p];
    total += bytes.size();
    CHECK_MESSAGE(bytes.size() <= max_bytes, "part " << p << " of " << n << " is " << bytes.size()
                                                     << " bytes, limit " << max_bytes);
    const protocol::Snapshot* s = test::snapshot_of(bytes);
    REQUIRE(s != nullptr);
    const test::SnapshotSpec d = test::decode(*s);
    CHECK(d.part == p);
    CHECK(d.part_count == n);
    CHECK(d.tick == header.server_tick);
    CHECK(d.baseline == header.baseline_tick);
    CHECK(d.last_input == header.last_input_sequence);
    REQUIRE(d.has_self);
    CHECK(test::same_state(d.self, header.self_state));
    if (n > 1) CHECK(d.records() > 0);  // no empty parts in a split frame
    const int pi = static_cast<int>(p);
    for (const auto& sp : d.spawns) {
      Found& f = found[sp.state.id()];
      ++f.spawn;
      f.at(pi);
      f.spawn_value = sp;
    }
    for (const auto& m : d.moves) {
      Found& f = found[m.id()];
      ++f.move;
      f.at(pi);
      f.move_value = m;
    }
    for (const auto& m : d.teleports) {
      Found& f = found[m.id()];
      ++f.teleport;
      f.at(pi);
      f.teleport_value = m;
    }
    for (const auto& x : d.headings) {
      Found& f = found[x.id()];
      ++f.heading;
      f.at(pi);
      f.heading_value = x;
    }
    for (const auto& x : d.healths) {
      Found& f = found[x.id()];
      ++f.health;
      f.at(pi);
      f.health_value = x;
    }
    for (const auto id : d.despawns) {
      Found& f = found[id];
      ++f.despawn;
      f.at(pi);
    }
  }
  CHECK(w.total == total);
  CHECK(found.size() == records.size());  // nothing invented

  int last_part = 0;
  int bad = 0;
  for (const EntityRecord& r : records) {
    const std::uint32_t id = r.state.id();
    auto it = found.find(id);
    if (it == found.end()) {
      ++bad;
      FAIL_CHECK("record " << id << " missing from every part");
      continue;
    }
    const Found& f = it->second;
    // Each record whole in one part, and parts follow the record order.
    CHECK_FALSE(f.split);
    if (f.part < last_part) {
      ++bad;
      FAIL_CHECK("record " << id << " in part " << f.part << " after part " << last_part);
    }
    last_part = std::max(last_part, f.part);
    if (r.fields & EntityRecord::kDespawn) {
      CHECK(f.despawn == 1);
      CHECK(f.spawn + f.move + f.teleport + f.heading + f.health == 0);
      continue;
    }
    if (r.fields & EntityRecord::kSpawn) {
      REQUIRE(f.spawn == 1);
      CHECK(f.move + f.teleport + f.heading + f.health + f.despawn == 0);
      CHECK(test::same_state(f.spawn_value.state, r.state));
      CHECK(f.spawn_value.max_health == r.max_health);
      CHECK(f.spawn_value.name == r.name);
      continue;
    }
    CHECK(f.spawn + f.despawn == 0);
    CHECK(f.move == ((r.fields & EntityRecord::kMove) ? 1 : 0));
    CHECK(f.teleport == ((r.fields & EntityRecord::kTeleport) ? 1 : 0));
    CHECK(f.heading == ((r.fields & EntityRecord::kHeading) ? 1 : 0));
    CHECK(f.health == ((r.fields & EntityRecord::kHealth) ? 1 : 0));
    if (f.move) {
      CHECK(f.move_value.dx() == r.dx);
      CHECK(f.move_value.dy() == r.dy);
    }
    if (f.teleport) {
      CHECK(f.teleport_value.x() == r.state.x());
      CHECK(f.teleport_value.y() == r.state.y());
    }
    if (f.heading) {
      CHECK(f.heading_value.heading() == r.state.heading());
      CHECK(f.heading_value.move_state() == r.state.move_state());
    }
    if (f.health) CHECK(f.health_value.health() == r.state.health());
  }
  CHECK(bad == 0);
  return n;
}

std::size_t encoded_size(std::uint32_t max_bytes, const std::vector<EntityRecord>& records) {
  SnapshotWriter writer(max_bytes);
  const Written w = write_all(writer, make_header(1000), records);
  REQUIRE(w.parts.size() == 1);
  return w.parts[0].size();
}

}  // namespace

TEST_CASE("snapshot writer: an empty update is one part with the header only") {
  for (const std::uint32_t max : {576u, 1200u}) {
    SnapshotWriter writer(max);
    CHECK(writer.parts_needed({}) == 1);
    const Written w = write_all(writer, make_header(9), {});
    REQUIRE(w.parts.size() == 1);
    CHECK(w.parts[0].size() <= SnapshotWriter::kPartOverhead);
    const protocol::Snapshot* s = test::snapshot_of(w.parts[0]);
    REQUIRE(s != nullptr);
    const test::SnapshotSpec d = test::decode(*s);
    CHECK(d.part == 0);
    CHECK(d.part_count == 1);
    CHECK(d.records() == 0);
    for (const bool present : d.has_vectors) CHECK_FALSE(present);
    CHECK(d.tick == 9);
    check_write(max, {}, 9);
  }
}

TEST_CASE("snapshot writer: record_cost and kPartOverhead are upper bounds of the real size") {
  std::deque<std::string> names;
  auto spawn = [&](std::uint32_t id, std::size_t name_len) {
    EntityRecord r;
    r.fields = EntityRecord::kSpawn;
    r.state = test::make_state(id, 1, 2);
    r.max_health = 10;
    names.push_back(std::string(name_len, 'q'));
    r.name = names.back();
    return r;
  };
  auto update = [](std::uint32_t id, std::uint8_t fields) {
    EntityRecord r;
    r.fields = fields;
    r.state = test::make_state(id, 3, 4);
    r.dx = 5;
    r.dy = -6;
    return r;
  };
  const std::size_t empty = encoded_size(1200, {});
  CHECK(empty <= SnapshotWriter::kPartOverhead);
  // One record alone: the part stays within the overhead (which covers the vectors'
  // lengths and offsets) plus the record's estimate.
  std::vector<EntityRecord> singles;
  for (std::size_t len = 0; len <= 255; ++len) singles.push_back(spawn(100, len));
  for (std::uint8_t f = 2; f < 32; f += 2) {
    if ((f & EntityRecord::kMove) && (f & EntityRecord::kTeleport)) continue;
    singles.push_back(update(200, f));
  }
  singles.push_back(update(300, EntityRecord::kDespawn));
  for (const EntityRecord& r : singles) {
    const std::size_t one = encoded_size(1200, {r});
    CHECK_MESSAGE(one <= SnapshotWriter::kPartOverhead + replication::record_cost(r),
                  "fields " << int(r.fields) << " name " << r.name.size() << ": " << one
                            << " bytes, estimate " << SnapshotWriter::kPartOverhead << " + "
                            << replication::record_cost(r));
    // Every further record of the same kind adds at most its own estimate.
    EntityRecord second = r;
    second.state = test::make_state(r.state.id() + 1, 9, 9);
    const std::size_t two = encoded_size(1200, {r, second});
    CHECK(two - one <= replication::record_cost(second));
  }
  // One of every kind in one part: the real size stays within overhead + sum of costs.
  std::vector<EntityRecord> mixed = {spawn(1, 64),
                                     update(2, EntityRecord::kMove),
                                     update(3, EntityRecord::kTeleport),
                                     update(4, EntityRecord::kHeading),
                                     update(5, EntityRecord::kHealth),
                                     update(6, EntityRecord::kDespawn)};
  std::uint32_t cost = SnapshotWriter::kPartOverhead;
  for (const auto& r : mixed) cost += replication::record_cost(r);
  CHECK(encoded_size(1200, mixed) <= cost);
}

TEST_CASE("snapshot writer: random record mixes fit and split consistently and decode exactly") {
  std::mt19937_64 rng(31337);
  for (const std::uint32_t max : {576u, 1200u}) {
    CAPTURE(max);
    std::size_t multi = 0;
    for (int round = 0; round < 120; ++round) {
      CAPTURE(round);
      const std::size_t n = static_cast<std::size_t>(rng() % 400);
      Mix mix;
      mix.spawn = static_cast<double>(rng() % 4);
      mix.update = static_cast<double>(rng() % 4);
      mix.despawn = static_cast<double>(rng() % 4);
      if (mix.spawn + mix.update + mix.despawn == 0) mix.update = 1;
      const RecordSet set = random_records(rng, n, mix);
      if (check_write(max, set.records, static_cast<std::uint32_t>(round + 1)) > 1) ++multi;
    }
    CHECK(multi > 30);  // the mixes really exercise splitting
  }
}

TEST_CASE("snapshot writer: many spawns with long names") {
  std::mt19937_64 rng(5);
  for (const std::uint32_t max : {576u, 1200u}) {
    CAPTURE(max);
    Mix mix{1.0, 0.0, 0.0, 32, 64};
    const RecordSet set = random_records(rng, 600, mix);
    const std::size_t parts = check_write(max, set.records, 77);
    CHECK(parts >= 600 * (64 + 32) / max);  // at least the payload's share of the packets
    // Names at the configurable maximum length (players.max_name_length <= 255).
    Mix longest{1.0, 0.0, 0.0, 255, 255};
    const RecordSet big = random_records(rng, 50, longest);
    check_write(max, big.records, 78);
  }
}

TEST_CASE("snapshot writer: thousands of despawns") {
  std::mt19937_64 rng(6);
  for (const std::uint32_t max : {576u, 1200u}) {
    CAPTURE(max);
    Mix mix{0.0, 0.0, 1.0};
    const RecordSet set = random_records(rng, 5000, mix);
    const std::size_t parts = check_write(max, set.records, 500);
    CHECK(parts >= 5000 * 4 / max);
    CHECK(parts <= SnapshotWriter::kMaxParts);
  }
}

TEST_CASE("snapshot writer: mixed updates with every field combination") {
  std::mt19937_64 rng(8);
  for (const std::uint32_t max : {576u, 1200u}) {
    CAPTURE(max);
    Mix mix{0.0, 1.0, 0.0};
    const RecordSet set = random_records(rng, 2000, mix);
    check_write(max, set.records, 600);
    Mix all{1.0, 3.0, 1.0, 32, 64};
    const RecordSet big = random_records(rng, 1500, all);
    check_write(max, big.records, 601);
  }
}

TEST_CASE("snapshot writer: a frame of more than 255 parts is refused - never mis-numbered") {
  std::mt19937_64 rng(9);
  Mix all{1.0, 3.0, 1.0, 32, 64};
  const RecordSet huge = random_records(rng, 6000, all);
  SnapshotWriter writer(576);
  REQUIRE(writer.parts_needed(huge.records) > SnapshotWriter::kMaxParts);
  std::size_t sent = 0;
  CHECK_THROWS_AS(
      writer.write(make_header(700), huge.records, [&](std::span<const std::uint8_t>) { ++sent; }),
      std::length_error);
  CHECK(sent == 0);
}

TEST_CASE("snapshot writer: reused writer gives the same result as a fresh one") {
  std::mt19937_64 rng(10);
  SnapshotWriter reused(576);
  for (int round = 0; round < 20; ++round) {
    const RecordSet set = random_records(rng, static_cast<std::size_t>(rng() % 300), Mix{});
    const SnapshotHeader h = make_header(static_cast<std::uint32_t>(round + 1));
    const Written a = write_all(reused, h, set.records);
    SnapshotWriter fresh(576);
    const Written b = write_all(fresh, h, set.records);
    CHECK(a.parts == b.parts);
    CHECK(a.total == b.total);
  }
}
