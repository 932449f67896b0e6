#include "replication/snapshot_writer.hpp"

#include <stdexcept>

namespace zone::replication {

// Sizes include FlatBuffers' alignment padding; a spawn is a table with a vtable of its
// own (shared vtables make the real cost lower, never higher), a state struct, a
// string and an offset in the spawns vector.
std::uint32_t record_cost(const EntityRecord& r) {
  std::uint32_t cost = 0;
  if (r.fields & EntityRecord::kSpawn) {
    cost += 4 /*vector slot*/ + 12 /*vtable*/ + 4 /*soffset*/ + 20 /*state*/ +
            4 /*max health,
pad*/ + 4 /*name offset*/ + 4 /*length*/ + static_cast<std::uint32_t>(r.name.size()) + 1 /*nul*/ +
            3 /*pad*/ + 8 /*table alignment slack*/;
  }
  if (r.fields & EntityRecord::kMove) cost += 12;
  if (r.fields & EntityRecord::kTeleport) cost += 16;
  if (r.fields & EntityRecord::kHeading) cost += 8;
  if (r.fields & EntityRecord::kHealth) cost += 8;
  if (r.fields & EntityRecord::kDespawn) cost += 4;
  return cost;
}

std::uint32_t SnapshotWriter::parts_needed(std::span<const EntityRecord> records) const {
  PartPlan plan(max_bytes_);
  for (const EntityRecord& r : records) plan.add(record_cost(r));
  return plan.parts();
}

void SnapshotWriter::split(std::span<const EntityRecord> records) {
  bounds_.clear();
  bounds_.push_back(0);
  PartPlan plan(max_bytes_);
  for (std::uint32_t i = 0; i < records.size(); ++i) {
    const std::uint32_t c = record_cost(records[i]);
    if (plan.opens_part(c)) bounds_.push_back(i);
    plan.add(c);
  }
  bounds_.push_back(static_cast<std::uint32_t>(records.size()));
  if (bounds_.size() - 1 > kMaxParts) {
    throw std::length_error("snapshot needs more than 255 parts");
  }
}

void SnapshotWriter::encode_part(const SnapshotHeader& header,
                                 std::span<const EntityRecord> records, std::uint16_t part,
                                 std::uint16_t part_count) {
  fbb_.Clear();
  spawns_.clear();
  moves_.clear();
  teleports_.clear();
  headings_.clear();
  healths_.clear();
  despawns_.clear();
  for (const EntityRecord& r : records) {
    const std::uint32_t id = r.state.id();
    if (r.fields & EntityRecord::kDespawn) {
      despawns_.push_back(id);
      continue;
    }
    if (r.fields & EntityRecord::kSpawn) {
      const auto name = fbb_.CreateString(r.name.data(), r.name.size());
      spawns_.push_back(protocol::CreateSpawn(fbb_, &r.state, r.max_health, name));
      continue;  // a spawn carries the full state; no update fields with it
    }
    if (r.fields & EntityRecord::kMove) {
      moves_.emplace_back(id, r.dx, r.dy, r.state.heading(), r.state.move_state());
    }
    if (r.fields & EntityRecord::kTeleport) {
      teleports_.emplace_back(id, r.state.x(), r.state.y(), r.state.heading(),
                              r.state.move_state());
    }
    if (r.fields & EntityRecord::kHeading) {
      headings_.emplace_back(id, r.state.heading(), r.state.move_state());
    }
    if (r.fields & EntityRecord::kHealth) healths_.emplace_back(id, r.state.health());
  }
  const auto spawns = spawns_.empty() ? 0 : fbb_.CreateVector(spawns_).o;
  const auto moves = moves_.empty() ? 0 : fbb_.CreateVectorOfStructs(moves_).o;
  const auto teleports = teleports_.empty() ? 0 : fbb_.CreateVectorOfStructs(teleports_).o;
  const auto headings = headings_.empty() ? 0 : fbb_.CreateVectorOfStructs(headings_).o;
  const auto healths = healths_.empty() ? 0 : fbb_.CreateVectorOfStructs(healths_).o;
  const auto despawns = despawns_.empty() ? 0 : fbb_.CreateVector(despawns_).o;

  const protocol::SnapshotHeader wire_header(
      header.server_tick, header.baseline_tick, header.last_input_sequence,
      static_cast<std::uint8_t>(part), static_cast<std::uint8_t>(part_count));
  protocol::SnapshotBuilder b(fbb_);
  b.add_header(&wire_header);
  b.add_self_state(&header.self_state);
  if (spawns) b.add_spawns(spawns);
  if (moves) b.add_moves(moves);
  if (teleports) b.add_teleports(teleports);
  if (headings) b.add_headings(headings);
  if (healths) b.add_healths(healths);
  if (despawns) b.add_despawns(despawns);
  const auto snapshot = b.Finish();
  fbb_.Finish(
      protocol::CreateServerPacket(fbb_, protocol::ServerMessage::Snapshot, snapshot.Union()));
}

}  // namespace zone::replication
