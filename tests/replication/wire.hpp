// Test helpers for the channel-1 wire format (shared/protocol/compact.hpp): snapshot parts
// built by hand with protocol::SnapshotPartWriter, and a decoder that copies a parsed part
// into plain values, so tests can compare what was sent with what was meant without
// holding views into packet bytes.
//
// Hand-built parts follow test_schema(): the engine's eight rows, then the zone's built-in
// game properties health (u16, immediate) and max_health (u16), as
// zone::make_game_types() declares them.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/compact.hpp"
#include "protocol/record.hpp"
#include "protocol/schema.hpp"
#include "replica/frame_replica.hpp"

namespace zone::test {

using Bytes = std::vector<std::uint8_t>;
using protocol::Values;
using replica::EntityState;

// The schema of hand-built parts (and of the tests' worlds, loopback.hpp's test_game()).
inline protocol::Schema make_test_schema() {
  protocol::Schema s;
  protocol::FieldSpec health;
  health.name = "health";
  health.bits = 16;
  health.update = protocol::UpdateTier::kImmediate;
  health.persistent = true;
  health.unit = "hit points";
  protocol::FieldSpec max_health = health;
  max_health.name = "max_health";
  max_health.update = protocol::UpdateTier::kTiered;
  max_health.unit = "hit points when unhurt";
  s.add_field(health);
  s.add_field(max_health);
  return s;
}
inline const protocol::Schema& test_schema() {
  static const protocol::Schema schema = make_test_schema();
  return schema;
}
// The rows of test_schema()'s game properties.
inline constexpr std::size_t kHealth = protocol::kEngineFieldCount;
inline constexpr std::size_t kMaxHealth = protocol::kEngineFieldCount + 1;
inline constexpr std::size_t kTestFieldCount = protocol::kEngineFieldCount + 2;
// Type indices of test_schema() (the Schema's defaults).
inline constexpr std::uint16_t kPlayerType = 0;
inline constexpr std::uint16_t kNpcType = 1;

// One value per row of test_schema() (all zero by default); a std::vector, so it also
// holds rows of another schema when built from them.
struct FieldValues : std::vector<std::int32_t> {
  FieldValues() : std::vector<std::int32_t>(kTestFieldCount, 0) {}
  explicit FieldValues(Values v) : std::vector<std::int32_t>(v.begin(), v.end()) {}
  FieldValues(std::initializer_list<std::int32_t> v) : std::vector<std::int32_t>(v) {}
  Values view() const { return {data(), size()}; }
  // Comparable with a span of values (replica self(), EntityView::values) and with any
  // row of values.
  friend bool operator==(const FieldValues& a, const FieldValues& b) {
    return std::ranges::equal(a, b);
  }
  friend bool operator==(const FieldValues& a, const std::vector<std::int32_t>& b) {
    return std::ranges::equal(a, b);
  }
  friend bool operator==(const FieldValues& a, Values b) { return std::ranges::equal(a, b); }
};

// Equal rows (spans have no ==).
inline bool same(Values a, Values b) {
  return std::ranges::equal(a, b);
}

// Field values of test_schema(): x, y (cm), heading, move_state, health (max_health 100).
inline FieldValues values(std::int32_t x, std::int32_t y, std::int32_t heading = 0,
                          std::int32_t move_state = 0, std::int32_t health = 100) {
  FieldValues v;
  v[protocol::kX] = x;
  v[protocol::kY] = y;
  v[protocol::kHeading] = heading;
  v[protocol::kMoveState] = move_state;
  v[kHealth] = health;
  v[kMaxHealth] = 100;
  return v;
}

inline EntityState make_state(std::uint32_t id, std::int32_t x, std::int32_t y,
                              std::int32_t heading = 0, std::int32_t move_state = 0,
                              std::int32_t health = 100) {
  return EntityState{id, values(x, y, heading, move_state, health)};
}

// Values by row name (test_schema()'s names; rows beyond it by number).
inline std::string describe(Values v, const protocol::Schema& schema = test_schema()) {
  std::ostringstream o;
  for (std::size_t i = 0; i < v.size(); ++i) {
    o << (i ? " " : "") << (i < schema.size() ? schema.field(i).name : std::to_string(i)) << " "
      << v[i];
  }
  return o.str();
}

inline std::string describe(const EntityState& s) {
  return "{id " + std::to_string(s.id) + " " + describe(s.values) + "}";
}

// A frame's entities as owning copies (comparable with ==).
inline std::vector<EntityState> states(const replica::EntityList& list) {
  std::vector<EntityState> out;
  out.reserve(list.size());
  for (const replica::EntityView e : list) out.emplace_back(e);
  return out;
}

// A change by position in the baseline frame: the record that turns `base` into `now`
// (mask: every differing field unless given), or a despawn.
struct ChangeSpec {
  std::uint32_t index = 0;
  FieldValues base{};
  FieldValues now{};
  std::optional<std::uint64_t> mask;  // default: change_mask(base, now)
  bool despawn = false;
};

inline ChangeSpec change(std::uint32_t index, Values base, Values now) {
  return ChangeSpec{index, FieldValues(base), FieldValues(now), std::nullopt, false};
}
inline ChangeSpec despawn(std::uint32_t index) {
  return ChangeSpec{index, {}, {}, std::nullopt, true};
}

struct SpawnSpec {
  std::uint32_t id = 0;
  FieldValues values{};
  std::string name;
  std::uint16_t type = kNpcType;  // index into the schema's entity types
};

inline SpawnSpec spawn(const EntityState& s, std::string name, std::uint16_t type = kNpcType) {
  return SpawnSpec{s.id, FieldValues(s.values), std::move(name), type};
}

// Everything one snapshot part carries. Changes must be in increasing index order and
// spawns in increasing id order (the writer encodes both as gaps).
struct PartSpec {
  std::uint32_t tick = 1;
  std::uint8_t baseline_age = 0;  // 0: no baseline
  std::uint8_t part = 0;
  std::uint8_t part_count = 1;
  std::uint32_t last_input = 0;
  bool has_self = false;
  FieldValues self_base{};  // the baseline frame's self values (zeros without baseline)
  FieldValues self_now{};
  std::optional<std::uint64_t> self_mask;  // default: change_mask(self_base, self_now)
  std::vector<ChangeSpec> changes;
  std::vector<SpawnSpec> spawns;
};

// A part on `baseline` (a tick, 0 for none) for tick `tick`.
inline PartSpec part_on(std::uint32_t tick, std::uint32_t baseline) {
  PartSpec p;
  p.tick = tick;
  p.baseline_age = static_cast<std::uint8_t>(baseline ? tick - baseline : 0);
  p.last_input = tick;
  return p;
}

inline Bytes encode(const PartSpec& s, const protocol::Schema& schema = test_schema(),
                    std::size_t capacity = 1 << 16) {
  Bytes buf(capacity);
  protocol::SnapshotPartWriter w(buf, schema);
  protocol::SnapshotHeader h;
  h.server_tick = s.tick;
  h.last_input_sequence = s.last_input;
  h.baseline_age = s.baseline_age;
  h.part = s.part;
  h.part_count = s.part_count;
  h.flags = s.has_self ? protocol::kSnapshotHasSelf : 0;
  w.header(h);
  if (s.has_self) {
    w.self(s.self_mask.value_or(protocol::fields::change_mask(s.self_base, s.self_now)),
           s.self_base, s.self_now);
  }
  w.begin_changes(static_cast<std::uint32_t>(s.changes.size()));
  for (const ChangeSpec& c : s.changes) {
    if (c.despawn) {
      w.despawn(c.index);
    } else {
      w.change(c.index, c.mask.value_or(protocol::fields::change_mask(c.base, c.now)), c.base,
               c.now);
    }
  }
  w.begin_spawns(static_cast<std::uint32_t>(s.spawns.size()));
  for (const SpawnSpec& sp : s.spawns) {
    w.spawn(sp.id, sp.type, sp.name, sp.values);
  }
  if (w.overflow()) return {};
  return {w.bytes().begin(), w.bytes().end()};
}

// A parsed part as plain values.
struct DecodedSpawn {
  std::uint32_t id = 0;
  std::uint16_t type = 0;
  std::string name;
  std::uint64_t mask = 0;
  FieldValues values{};  // the record applied to all-zero values
};

// A change record with its own copy of its wire values.
struct DecodedChange {
  std::uint32_t index = 0;
  std::uint64_t mask = 0;           // 0: despawn
  std::vector<std::uint32_t> wire;  // the present rows' wire values, in row order
  // The wire value of row `row` (which must be in the mask).
  std::uint32_t wire_of(std::size_t row) const {
    return wire.at(static_cast<std::size_t>(std::popcount(mask & ((1ull << row) - 1))));
  }
};

struct Decoded {
  const protocol::Schema* schema = &test_schema();
  protocol::SnapshotHeader header;
  std::uint64_t self_mask = 0;
  std::vector<std::uint32_t> self_wire;
  std::vector<DecodedChange> changes;  // mask 0: despawn
  std::vector<DecodedSpawn> spawns;

  bool has_self() const { return (header.flags & protocol::kSnapshotHasSelf) != 0; }
  std::uint32_t baseline() const { return header.baseline_tick(); }
  std::size_t despawns() const {
    std::size_t n = 0;
    for (const auto& c : changes) n += c.mask == 0 ? 1 : 0;
    return n;
  }
  std::size_t updates() const { return changes.size() - despawns(); }
  std::size_t records() const { return changes.size() + spawns.size(); }
  // The self record applied to the baseline's self values.
  FieldValues self_on(Values base) const {
    FieldValues v(base);
    protocol::fields::apply(*schema, self_mask, self_wire.data(), v);
    return v;
  }
};

inline std::optional<Decoded> decode(std::span<const std::uint8_t> bytes,
                                     const protocol::Schema& schema = test_schema()) {
  protocol::SnapshotPart part;
  if (protocol::parse_snapshot_part(bytes, schema, part) != protocol::ParseError::kNone) {
    return std::nullopt;
  }
  const auto count = [](std::uint64_t mask) {
    return static_cast<std::size_t>(std::popcount(mask));
  };
  Decoded d;
  d.schema = &schema;
  d.header = part.header;
  d.self_mask = part.self_mask;
  if (d.has_self()) {
    const std::uint32_t* w = part.wire_at(part.self_wire_begin);
    d.self_wire.assign(w, w + count(part.self_mask));
  }
  for (const protocol::ChangeRecord& c : part.changes) {
    const std::uint32_t* w = part.wire_at(c.wire_begin);
    d.changes.push_back({c.index, c.mask, std::vector<std::uint32_t>(w, w + count(c.mask))});
  }
  for (const protocol::SpawnRecord& s : part.spawns) {
    DecodedSpawn out;
    out.id = s.id;
    out.type = s.type;
    out.name = std::string(s.name);
    out.mask = s.mask;
    out.values = FieldValues(std::vector<std::int32_t>(schema.size(), 0));
    protocol::fields::apply(schema, s.mask, part.wire_at(s.wire_begin), out.values);
    d.spawns.push_back(std::move(out));
  }
  return d;
}

// The change record applied to `base`.
inline FieldValues applied(const DecodedChange& c, Values base,
                           const protocol::Schema& schema = test_schema()) {
  FieldValues v(base);
  protocol::fields::apply(schema, c.mask, c.wire.data(), v);
  return v;
}

}  // namespace zone::test
