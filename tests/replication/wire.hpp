// Test helpers for the wire protocol: hand-built Snapshot packets and a decoder that
// copies a verified Snapshot into plain vectors, so tests can compare what was sent with
// what was meant without touching FlatBuffers pointers.
#pragma once

#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "protocol/codec.hpp"
#include "protocol/zone_generated.h"

namespace zone::test {

using protocol::EntityState;

inline EntityState make_state(std::uint32_t id, std::int32_t x, std::int32_t y,
                              std::uint16_t heading = 0, std::uint16_t health = 100,
                              protocol::EntityKind kind = protocol::EntityKind::Npc,
                              protocol::MoveState move = protocol::MoveState::Idle) {
  return EntityState(id, x, y, heading, health, kind, move);
}

inline bool same_state(const EntityState& a, const EntityState& b) {
  return a.id() == b.id() && a.x() == b.x() && a.y() == b.y() && a.heading() == b.heading() &&
         a.health() == b.health() && a.kind() == b.kind() && a.move_state() == b.move_state();
}

inline std::string describe(const EntityState& s) {
  std::ostringstream o;
  o << "{id " << s.id() << " x " << s.x() << " y " << s.y() << " hd " << s.heading() << " hp "
    << s.health() << " kind " << static_cast<int>(s.kind()) << " ms "
    << static_cast<int>(s.move_state()) << "}";
  return o.str();
}

struct SpawnSpec {
  EntityState state;
  std::uint16_t max_health = 100;
  std::string name;
};

// Everything one Snapshot part carries, as plain values.
struct SnapshotSpec {
  std::uint32_t tick = 0;
  std::uint32_t baseline = 0;
  std::uint16_t part = 0;
  std::uint16_t part_count = 1;
  EntityState self{};
  bool has_self = true;
  std::uint32_t last_input = 0;
  std::vector<SpawnSpec> spawns;
  std::vector<protocol::MoveDelta> moves;
  std::vector<protocol::MoveAbsolute> teleports;
  std::vector<protocol::HeadingUpdate> headings;
  std::vector<protocol::HealthUpdate> healths;
  std::vector<std::uint32_t> despawns;
  bool has_vectors[6] = {};  // decode(): which vectors were present on the wire

  std::size_t records() const {
    return spawns.size() + moves.size() + teleports.size() + headings.size() + healths.size() +
           despawns.size();
  }
};

// Encodes a ServerPacket holding one Snapshot. With all_vectors, empty vectors are
// written too (a packet with every field present).
inline std::vector<std::uint8_t> encode(const SnapshotSpec& s, bool all_vectors = false) {
  flatbuffers::FlatBufferBuilder fbb(1024);
  std::vector<flatbuffers::Offset<protocol::Spawn>> spawns;
  for (const SpawnSpec& sp : s.spawns) {
    const auto name = fbb.CreateString(sp.name);
    spawns.push_back(protocol::CreateSpawn(fbb, &sp.state, sp.max_health, name));
  }
  auto maybe = [&](bool empty, auto make) -> decltype(make()) {
    if (empty && !all_vectors) return 0;
    return make();
  };
  const auto v_spawns = maybe(spawns.empty(), [&] { return fbb.CreateVector(spawns); });
  const auto v_moves = maybe(s.moves.empty(), [&] { return fbb.CreateVectorOfStructs(s.moves); });
  const auto v_teleports =
      maybe(s.teleports.empty(), [&] { return fbb.CreateVectorOfStructs(s.teleports); });
  const auto v_headings =
      maybe(s.headings.empty(), [&] { return fbb.CreateVectorOfStructs(s.headings); });
  const auto v_healths =
      maybe(s.healths.empty(), [&] { return fbb.CreateVectorOfStructs(s.healths); });
  const auto v_despawns = maybe(s.despawns.empty(), [&] { return fbb.CreateVector(s.despawns); });
  const protocol::SnapshotHeader header(s.tick, s.baseline, s.last_input,
                                        static_cast<std::uint8_t>(s.part),
                                        static_cast<std::uint8_t>(s.part_count));
  const auto snap =
      protocol::CreateSnapshot(fbb, &header, s.has_self ? &s.self : nullptr, v_spawns, v_moves,
                               v_teleports, v_headings, v_healths, v_despawns);
  fbb.Finish(protocol::CreateServerPacket(fbb, protocol::ServerMessage::Snapshot, snap.Union()));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

inline SnapshotSpec decode(const protocol::Snapshot& s) {
  SnapshotSpec out;
  if (s.header() != nullptr) {
    out.tick = s.header()->server_tick();
    out.baseline = s.header()->baseline_tick();
    out.part = s.header()->part();
    out.part_count = s.header()->part_count();
    out.last_input = s.header()->last_input_sequence();
  }
  out.has_self = s.self_state() != nullptr;
  if (out.has_self) out.self = *s.self_state();
  if (s.spawns() != nullptr) {
    out.has_vectors[0] = true;
    for (const protocol::Spawn* sp : *s.spawns()) {
      SpawnSpec spec;
      if (sp->state() != nullptr) spec.state = *sp->state();
      spec.max_health = sp->max_health();
      if (sp->name() != nullptr) spec.name = sp->name()->str();
      out.spawns.push_back(std::move(spec));
    }
  }
  if (s.moves() != nullptr) {
    out.has_vectors[1] = true;
    for (const protocol::MoveDelta* m : *s.moves()) out.moves.push_back(*m);
  }
  if (s.teleports() != nullptr) {
    out.has_vectors[2] = true;
    for (const protocol::MoveAbsolute* m : *s.teleports()) out.teleports.push_back(*m);
  }
  if (s.headings() != nullptr) {
    out.has_vectors[3] = true;
    for (const protocol::HeadingUpdate* h : *s.headings()) out.headings.push_back(*h);
  }
  if (s.healths() != nullptr) {
    out.has_vectors[4] = true;
    for (const protocol::HealthUpdate* h : *s.healths()) out.healths.push_back(*h);
  }
  if (s.despawns() != nullptr) {
    out.has_vectors[5] = true;
    for (const std::uint32_t id : *s.despawns()) out.despawns.push_back(id);
  }
  return out;
}

// Parses bytes as a ServerPacket holding a Snapshot; nullptr otherwise.
inline const protocol::Snapshot* snapshot_of(std::span<const std::uint8_t> bytes) {
  const protocol::ServerPacket* p = protocol::parse_server_packet(bytes);
  return p == nullptr ? nullptr : p->message_as_Snapshot();
}

}  // namespace zone::test
