// Test helpers for the channel-1 wire format (shared/protocol/compact.hpp): snapshot parts
// built by hand with protocol::SnapshotPartWriter, and a decoder that copies a parsed part
// into plain values, so tests can compare what was sent with what was meant without
// holding views into packet bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/compact.hpp"
#include "protocol/entity_fields.hpp"
#include "replica/frame_replica.hpp"

namespace zone::test {

using Bytes = std::vector<std::uint8_t>;
using protocol::FieldValues;
using replica::EntityState;

// Field values in table order (kEntityFields): x, y (cm), heading, move_state, health.
inline FieldValues values(std::int32_t x, std::int32_t y, std::int32_t heading = 0,
                          std::int32_t move_state = 0, std::int32_t health = 100) {
  FieldValues v{};
  v[protocol::kX] = x;
  v[protocol::kY] = y;
  v[protocol::kHeading] = heading;
  v[protocol::kMoveState] = move_state;
  v[protocol::kHealth] = health;
  return v;
}

inline EntityState make_state(std::uint32_t id, std::int32_t x, std::int32_t y,
                              std::int32_t heading = 0, std::int32_t move_state = 0,
                              std::int32_t health = 100) {
  return EntityState{id, values(x, y, heading, move_state, health)};
}

inline std::string describe(const FieldValues& v) {
  std::ostringstream o;
  for (std::size_t i = 0; i < protocol::kFieldCount; ++i) {
    o << (i ? " " : "") << protocol::kEntityFields[i].name << " " << v[i];
  }
  return o.str();
}

inline std::string describe(const EntityState& s) {
  return "{id " + std::to_string(s.id) + " " + describe(s.values) + "}";
}

// A change by position in the baseline frame: the record that turns `base` into `now`
// (mask: every differing field unless given), or a despawn.
struct ChangeSpec {
  std::uint32_t index = 0;
  FieldValues base{};
  FieldValues now{};
  std::optional<std::uint32_t> mask;  // default: change_mask(base, now)
  bool despawn = false;
};

inline ChangeSpec change(std::uint32_t index, const FieldValues& base, const FieldValues& now) {
  return ChangeSpec{index, base, now, std::nullopt, false};
}
inline ChangeSpec despawn(std::uint32_t index) {
  return ChangeSpec{index, {}, {}, std::nullopt, true};
}

struct SpawnSpec {
  std::uint32_t id = 0;
  FieldValues values{};
  std::string name;
  std::uint8_t kind = protocol::kKindNpc;
  std::uint16_t max_health = 100;
};

inline SpawnSpec spawn(const EntityState& s, std::string name,
                       std::uint8_t kind = protocol::kKindNpc, std::uint16_t max_health = 100) {
  return SpawnSpec{s.id, s.values, std::move(name), kind, max_health};
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
  std::optional<std::uint32_t> self_mask;  // default: change_mask(self_base, self_now)
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

inline Bytes encode(const PartSpec& s, std::size_t capacity = 1 << 16) {
  Bytes buf(capacity);
  protocol::SnapshotPartWriter w(buf);
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
    w.spawn(sp.id, sp.kind, sp.max_health, sp.name, sp.values);
  }
  if (w.overflow()) return {};
  return {w.bytes().begin(), w.bytes().end()};
}

// A parsed part as plain values.
struct DecodedSpawn {
  std::uint32_t id = 0;
  std::uint8_t kind = 0;
  std::uint16_t max_health = 0;
  std::string name;
  std::uint32_t mask = 0;
  FieldValues values{};  // the record applied to all-zero values
};

struct Decoded {
  protocol::SnapshotHeader header;
  std::uint32_t self_mask = 0;
  protocol::WireValues self_wire{};
  std::vector<protocol::ChangeRecord> changes;  // mask 0: despawn
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
  FieldValues self_on(FieldValues base) const {
    protocol::fields::apply(protocol::kEntityFields, self_mask, self_wire, base);
    return base;
  }
};

inline std::optional<Decoded> decode(std::span<const std::uint8_t> bytes) {
  protocol::SnapshotPart part;
  if (protocol::parse_snapshot_part(bytes, part) != protocol::ParseError::kNone) {
    return std::nullopt;
  }
  Decoded d;
  d.header = part.header;
  d.self_mask = part.self_mask;
  d.self_wire = part.self_wire;
  d.changes = part.changes;
  for (const protocol::SpawnRecord& s : part.spawns) {
    DecodedSpawn out;
    out.id = s.id;
    out.kind = s.kind;
    out.max_health = s.max_health;
    out.name = std::string(s.name);
    out.mask = s.mask;
    protocol::fields::apply(protocol::kEntityFields, s.mask, s.wire, out.values);
    d.spawns.push_back(std::move(out));
  }
  return d;
}

// The change record applied to `base`.
inline FieldValues applied(const protocol::ChangeRecord& c, FieldValues base) {
  protocol::fields::apply(protocol::kEntityFields, c.mask, c.wire, base);
  return base;
}

}  // namespace zone::test
