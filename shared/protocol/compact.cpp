#include "protocol/compact.hpp"

#include <algorithm>

namespace zone::protocol {

void encode_input(const InputMessage& in, std::span<std::uint8_t, kInputBytes> out) {
  ByteWriter w(out);
  w.u32(in.sequence);
  w.u32(in.ack_tick);
  w.f32(in.move_x);
  w.f32(in.move_y);
}

bool decode_input(std::span<const std::uint8_t> bytes, InputMessage& out) {
  if (bytes.size() != kInputBytes) return false;
  ByteReader r(bytes);
  out.sequence = r.u32();
  out.ack_tick = r.u32();
  out.move_x = r.f32();
  out.move_y = r.f32();
  return !r.failed();
}

void SnapshotPartWriter::header(const SnapshotHeader& h) {
  w_.u32(h.server_tick);
  w_.u32(h.last_input_sequence);
  w_.u8(h.baseline_age);
  w_.u8(h.part);
  w_.u8(h.part_count);
  w_.u8(h.flags);
}

void SnapshotPartWriter::skip_to(std::uint32_t index) {
  w_.varint(static_cast<std::uint32_t>(index - last_index_ - 1));
  last_index_ = index;
}

void SnapshotPartWriter::change(std::uint32_t index, std::uint64_t mask, Values base, Values now) {
  skip_to(index);
  fields::encode(w_, schema_, mask, base, now);
}

void SnapshotPartWriter::despawn(std::uint32_t index) {
  skip_to(index);
  w_.varint(0);
}

void SnapshotPartWriter::spawn(std::uint32_t id, std::uint16_t type, std::string_view name,
                               Values values) {
  w_.varint(id - last_id_ - 1);
  last_id_ = id;
  w_.varint(type);
  const std::size_t n = std::min<std::size_t>(name.size(), kMaxNameBytes);
  w_.u8(static_cast<std::uint8_t>(n));
  w_.bytes({reinterpret_cast<const std::uint8_t*>(name.data()), n});
  fields::encode(w_, schema_, fields::nonzero_mask(values), {}, values);
}

ParseError parse_snapshot_part(std::span<const std::uint8_t> bytes, const Schema& schema,
                               SnapshotPart& out) {
  out.changes.clear();
  out.spawns.clear();
  out.wire.clear();
  if (bytes.size() < kSnapshotHeaderBytes) return ParseError::kMalformed;
  ByteReader r(bytes);
  SnapshotHeader& h = out.header;
  h.server_tick = r.u32();
  h.last_input_sequence = r.u32();
  h.baseline_age = r.u8();
  h.part = r.u8();
  h.part_count = r.u8();
  h.flags = r.u8();
  if (h.server_tick == 0 || h.part_count == 0 || h.part >= h.part_count ||
      h.baseline_age >= h.server_tick || (h.flags & ~kSnapshotHasSelf) != 0) {
    return ParseError::kMalformed;
  }
  out.self_mask = 0;
  out.self_wire_begin = 0;
  if ((h.flags & kSnapshotHasSelf) &&
      (!fields::read(r, schema, out.self_mask, out.wire) || out.self_mask == 0)) {
    return ParseError::kMalformed;
  }
  // Every record takes at least two bytes, which bounds what a count may announce.
  auto plausible = [&](std::uint32_t count) {
    return !r.failed() && count <= (bytes.size() - r.position()) / 2;
  };
  const std::uint32_t changes = r.varint();
  if (!plausible(changes)) return ParseError::kMalformed;
  out.changes.resize(changes);
  std::int64_t index = -1;
  for (ChangeRecord& c : out.changes) {
    index += static_cast<std::int64_t>(r.varint()) + 1;
    if (r.failed() || index > 0xFFFFFFFFll) return ParseError::kMalformed;
    c.index = static_cast<std::uint32_t>(index);
    c.wire_begin = static_cast<std::uint32_t>(out.wire.size());
    if (!fields::read(r, schema, c.mask, out.wire)) return ParseError::kMalformed;
  }
  const std::uint32_t spawns = r.varint();
  if (!plausible(spawns)) return ParseError::kMalformed;
  out.spawns.resize(spawns);
  std::uint64_t id = 0;
  for (SpawnRecord& s : out.spawns) {
    id += static_cast<std::uint64_t>(r.varint()) + 1;
    const std::uint32_t type = r.varint();
    const std::uint8_t name_length = r.u8();
    const auto name = r.bytes(name_length);
    if (r.failed() || id > 0xFFFFFFFFull || type >= schema.types().size()) {
      return ParseError::kMalformed;
    }
    s.id = static_cast<std::uint32_t>(id);
    s.type = static_cast<std::uint16_t>(type);
    s.name = {reinterpret_cast<const char*>(name.data()), name.size()};
    s.wire_begin = static_cast<std::uint32_t>(out.wire.size());
    if (!fields::read(r, schema, s.mask, out.wire)) return ParseError::kMalformed;
  }
  if (r.failed() || !r.at_end()) return ParseError::kMalformed;
  return ParseError::kNone;
}

}  // namespace zone::protocol
