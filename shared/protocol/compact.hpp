// The compact messages of channel 1 (unreliable): the client's Input and the server's
// Snapshot parts. They are sent many times a second by every client, so they are laid
// out byte by byte (docs/protocol.md, "Input" and "Snapshots and frames") rather than as
// FlatBuffers tables, whose offsets and vtables would cost more than the records
// themselves.
//
// Input (16 bytes): u32 sequence, u32 ack_tick, f32 move_x, f32 move_y.
//
// Snapshot part: a 12-byte header, then
//   [self record]                       if flags bit 0: the client's own entity
//   varint change_count, then per change:
//     varint skip                       baseline entities passed over before this one
//     record                            protocol/record.hpp; mask 0 = despawn
//   varint spawn_count, then per spawn:
//     varint id_gap                     id - previous spawn id in this part - 1 (first: id - 1)
//     varint type, u8 name_length, name bytes (UTF-8)
//     record                            every non-zero field, against all-zero values
// Records follow the schema the client received in its Welcome (protocol/record.hpp).
// and nothing after the last spawn.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "protocol/byte_io.hpp"
#include "protocol/record.hpp"
#include "protocol/schema.hpp"

namespace zone::protocol {

enum class ParseError : std::uint8_t {
  kNone,
  kMalformed,       // not a well-formed message of this protocol
  kUnknownMessage,  // well-formed, but a message type this side does not know
};

// ---- Input ----------------------------------------------------------------------------

inline constexpr std::size_t kInputBytes = 16;

struct InputMessage {
  std::uint32_t sequence = 0;  // +1 per input; the first is 1
  std::uint32_t ack_tick = 0;  // newest server tick the client holds completely, 0: none
  float move_x = 0.0f;         // movement intent, length <= 1
  float move_y = 0.0f;
};

void encode_input(const InputMessage& in, std::span<std::uint8_t, kInputBytes> out);
// False unless `bytes` is exactly one input.
bool decode_input(std::span<const std::uint8_t> bytes, InputMessage& out);

// ---- Snapshot parts -------------------------------------------------------------------

inline constexpr std::size_t kSnapshotHeaderBytes = 12;
inline constexpr std::uint8_t kSnapshotHasSelf = 1;

struct SnapshotHeader {
  std::uint32_t server_tick = 0;
  std::uint32_t last_input_sequence = 0;  // newest input the server has applied
  std::uint8_t baseline_age = 0;          // 0: no baseline (every entity is a spawn)
  std::uint8_t part = 0;                  // 0 .. part_count - 1
  std::uint8_t part_count = 1;            // 1 .. 255
  std::uint8_t flags = 0;
  std::uint32_t baseline_tick() const { return baseline_age ? server_tick - baseline_age : 0; }
};

// Records keep their raw wire values in the part's `wire` pool, in row order from
// `wire_begin`; applying them needs the baseline (fields::apply).
struct ChangeRecord {
  std::uint32_t index = 0;  // position of the entity in the baseline frame (sorted by id)
  std::uint64_t mask = 0;   // fields present; 0 = despawn
  std::uint32_t wire_begin = 0;
};

struct SpawnRecord {
  std::uint32_t id = 0;
  std::uint16_t type = 0;  // index into the schema's entity types
  std::string_view name;   // points into the packet
  std::uint64_t mask = 0;
  std::uint32_t wire_begin = 0;
};

// One part, structurally checked against the schema.
struct SnapshotPart {
  SnapshotHeader header;
  std::uint64_t self_mask = 0;
  std::uint32_t self_wire_begin = 0;
  std::vector<ChangeRecord> changes;
  std::vector<SpawnRecord> spawns;
  std::vector<std::uint32_t> wire;
  const std::uint32_t* wire_at(std::uint32_t begin) const { return wire.data() + begin; }
};

// Parses a whole part; `out`'s vectors are reused. Malformed: a short header, part numbers
// out of range, an age beyond the tick, baseline indices or spawn ids that do not strictly
// increase, an id of 0, a type the schema does not have, a bad record, or bytes after the
// last spawn.
ParseError parse_snapshot_part(std::span<const std::uint8_t> bytes, const Schema& schema,
                               SnapshotPart& out);

// Writes one part: the header, then the self record, the changes and the spawns, each
// announced by its count. The caller plans the part so that it fits.
class SnapshotPartWriter {
 public:
  SnapshotPartWriter(std::span<std::uint8_t> out, const Schema& schema)
      : w_(out), schema_(schema) {}

  void header(const SnapshotHeader& h);
  void self(std::uint64_t mask, Values base, Values now) {
    fields::encode(w_, schema_, mask, base, now);
  }
  void begin_changes(std::uint32_t count) {
    w_.varint(count);
    last_index_ = -1;
  }
  void change(std::uint32_t index, std::uint64_t mask, Values base, Values now);
  void despawn(std::uint32_t index);
  void begin_spawns(std::uint32_t count) {
    w_.varint(count);
    last_id_ = 0;
  }
  void spawn(std::uint32_t id, std::uint16_t type, std::string_view name, Values values);

  std::size_t size() const { return w_.size(); }
  bool overflow() const { return w_.overflow(); }
  std::span<const std::uint8_t> bytes() const { return w_.written(); }

 private:
  void skip_to(std::uint32_t index);
  ByteWriter w_;
  const Schema& schema_;
  std::int64_t last_index_ = -1;
  std::uint32_t last_id_ = 0;
};

// Upper bounds used to plan parts before their exact contents are known.
inline constexpr std::uint32_t kMaxCountBytes = 3;  // varint of a count below 2^21
inline constexpr std::uint32_t kMaxNameBytes = 255;

// Bytes a spawn record takes at most in a part (its id gap is bounded by its id).
inline std::uint32_t spawn_cost(const Schema& schema, std::uint32_t id, std::uint16_t type,
                                std::string_view name, Values values) {
  return varint_size(id) + varint_size(type) + 1 + static_cast<std::uint32_t>(name.size()) +
         fields::encoded_size(schema, fields::nonzero_mask(values), {}, values);
}

}  // namespace zone::protocol
