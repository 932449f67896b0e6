// Encodes one client's frame update into MTU-sized Snapshot packets.
//
// The replicator decides what goes out (the records, in priority order); the writer
// packs them greedily into parts of at most max_packet_bytes, using conservative size
// estimates, and serialises each part with FlatBuffers.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "protocol/zone_generated.h"

namespace zone::replication {

// What one entity contributes to a frame update.
struct EntityRecord {
  enum : std::uint8_t {
    kSpawn = 1,
    kMove = 2,      // MoveDelta against the baseline (carries heading and move state)
    kTeleport = 4,  // MoveAbsolute (likewise)
    kHeading = 8,   // heading or move state alone, position unchanged
    kHealth = 16,
    kDespawn = 32,
  };
  std::uint8_t fields = 0;
  protocol::EntityState state;  // current state (spawn, and source of the update fields)
  std::int16_t dx = 0;
  std::int16_t dy = 0;
  std::uint16_t max_health = 0;
  std::string_view name;  // spawn only; must outlive write()
};

// Upper bound of the bytes a record adds to a packet.
std::uint32_t record_cost(const EntityRecord& r);

// How records fill parts: a record opens a new part when it would push the current one
// past max_packet_bytes (an empty part takes any record). SnapshotWriter splits with
// it, and the replicator plans with it, so the two can never disagree.
class PartPlan {
 public:
  static constexpr std::uint32_t kPartOverhead = 160;  // upper bound of an empty part

  explicit PartPlan(std::uint32_t max_bytes) : max_bytes_(max_bytes) {}
  bool opens_part(std::uint32_t cost) const {
    return records_in_part_ > 0 && used_ + cost > max_bytes_;
  }
  // Bytes that appending a record of `cost` adds, a new part's overhead included.
  std::uint32_t extra_for(std::uint32_t cost) const {
    return cost + (opens_part(cost) ? kPartOverhead : 0);
  }
  void add(std::uint32_t cost) {
    if (opens_part(cost)) {
      ++parts_;
      used_ = kPartOverhead;
      records_in_part_ = 0;
    }
    used_ += cost;
    ++records_in_part_;
  }
  std::uint32_t parts() const { return parts_; }

 private:
  std::uint32_t max_bytes_;
  std::uint32_t parts_ = 1;
  std::uint32_t used_ = kPartOverhead;
  std::uint32_t records_in_part_ = 0;
};

struct SnapshotHeader {
  std::uint32_t server_tick = 0;
  std::uint32_t baseline_tick = 0;
  protocol::EntityState self_state;
  std::uint32_t last_input_sequence = 0;
};

class SnapshotWriter {
 public:
  static constexpr std::uint32_t kPartOverhead = PartPlan::kPartOverhead;
  static constexpr std::uint32_t kMaxParts = 255;  // part numbers are one byte on the wire

  explicit SnapshotWriter(std::uint32_t max_packet_bytes) : max_bytes_(max_packet_bytes) {}

  // How many parts `records` (in send order) need.
  std::uint32_t parts_needed(std::span<const EntityRecord> records) const;
  // Serialises the records into parts; calls send(bytes) for each, in part order.
  // Returns the total number of bytes produced. Precondition: parts_needed(records) <=
  // kMaxParts (throws std::length_error otherwise; the replicator plans within it).
  template <typename Send>
  std::uint64_t write(const SnapshotHeader& header, std::span<const EntityRecord> records,
                      Send&& send) {
    split(records);
    std::uint64_t total = 0;
    const auto count = static_cast<std::uint16_t>(bounds_.size() - 1);
    for (std::uint16_t p = 0; p < count; ++p) {
      encode_part(header, records.subspan(bounds_[p], bounds_[p + 1] - bounds_[p]), p, count);
      total += fbb_.GetSize();
      send(std::span<const std::uint8_t>(fbb_.GetBufferPointer(), fbb_.GetSize()));
    }
    return total;
  }
  std::uint32_t max_packet_bytes() const { return max_bytes_; }

 private:
  void split(std::span<const EntityRecord> records);
  void encode_part(const SnapshotHeader& header, std::span<const EntityRecord> records,
                   std::uint16_t part, std::uint16_t part_count);

  std::uint32_t max_bytes_;
  flatbuffers::FlatBufferBuilder fbb_{2048};
  std::vector<std::uint32_t> bounds_;  // record index where each part starts, plus end
  std::vector<flatbuffers::Offset<protocol::Spawn>> spawns_;
  std::vector<protocol::MoveDelta> moves_;
  std::vector<protocol::MoveAbsolute> teleports_;
  std::vector<protocol::HeadingUpdate> headings_;
  std::vector<protocol::HealthUpdate> healths_;
  std::vector<std::uint32_t> despawns_;
};

}  // namespace zone::replication
