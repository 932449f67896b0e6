// Everything the server remembers about what one client knows.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocol/schema.hpp"
#include "world/entity.hpp"

namespace zone::replication {

// One entity as a frame holds it (its values are the frame's row of the same index).
struct FrameEntry {
  world::EntityId id = world::kNoEntity;
  // The tick these values were sent at (a deferred update leaves an entity at older
  // values; the staleness bound is measured from here).
  std::uint32_t sent_tick = 0;
};

// One frame as the client holds it once it has received every part of that tick on
// top of its baseline: its own entity and the state of each entity in its view, sorted
// by id. Values are one row of `stride` (the schema's size) per entity, side by side.
struct Frame {
  std::uint32_t tick = 0;
  std::uint32_t stride = 0;
  std::vector<std::int32_t> self;
  std::vector<FrameEntry> entities;
  std::vector<std::int32_t> values;
  protocol::Values values_of(std::size_t i) const { return {values.data() + i * stride, stride}; }
  protocol::MutableValues values_of(std::size_t i) { return {values.data() + i * stride, stride}; }
  // Appends an entity. `values` must have room (reserve): a row is a few values, copied
  // in a loop the compiler keeps inline (a library copy per entity cost more than it).
  void push(const FrameEntry& entry, protocol::Values v) {
    const std::size_t at = entities.size() * stride;
    entities.push_back(entry);
    values.resize(at + stride);
    std::int32_t* out = values.data() + at;
    for (std::size_t i = 0; i < stride; ++i) out[i] = v[i];
  }
  // Drops the entries whose id is kNoEntity, with their rows.
  void compact() {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entities.size(); ++i) {
      if (entities[i].id == world::kNoEntity) continue;
      if (kept != i) {
        entities[kept] = entities[i];
        std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(i * stride), stride,
                    values.begin() + static_cast<std::ptrdiff_t>(kept * stride));
      }
      ++kept;
    }
    entities.resize(kept);
    values.resize(kept * stride);
  }
  // In view, but held back by the bandwidth budget: spawns not sent yet (the entity is
  // missing from `entities`).
  std::vector<world::EntityId> deferred_spawns;
};

// The last `size` frames sent, by tick. Slots are reused, so steady state allocates
// nothing once every vector has grown to its working size.
class FrameHistory {
 public:
  FrameHistory() : FrameHistory(32) {}
  explicit FrameHistory(std::uint32_t size) : frames_(size) {}
  const Frame* find(std::uint32_t tick) const {
    const Frame& f = frames_[tick % frames_.size()];
    return (tick != 0 && f.tick == tick) ? &f : nullptr;
  }
  // Stores `frame` as the frame of its tick; `frame` receives the recycled slot.
  void commit(Frame& frame) { std::swap(frames_[frame.tick % frames_.size()], frame); }
  std::uint32_t size() const { return static_cast<std::uint32_t>(frames_.size()); }

 private:
  std::vector<Frame> frames_;
};

// Why an entity is in a client's interest set: the AOI put it in view, or it is a member
// of the player's party or guild (full range). It stays while any reason holds.
enum InterestSource : std::uint8_t { kInAoi = 1, kInParty = 2, kInGuild = 4 };
inline constexpr std::uint8_t kInGroup = kInParty | kInGuild;

// An entity in the client's interest set, with its send priority.
struct InterestEntry {
  world::EntityId id;
  std::uint32_t slot;          // the entity's world slot
  std::uint32_t entered_tick;  // when it entered the view (bounds a deferred spawn's wait)
  float priority = 0.0f;       // grows every tick a pending change is deferred
  std::uint8_t sources = kInAoi;
  // Whether a due record is being held back for budget, and since which snapshot tick:
  // what oldest_deferral_ticks reports is the wait the budget caused, not the snapshot
  // interval or the acknowledgement lag.
  bool deferred = false;
  std::uint32_t deferred_since = 0;
  // Interest tier at the last snapshot (0 near, 1 middle, 2 far) and how many ticks
  // beyond the snapshot interval its update may wait for its turn (ticks).
  std::uint8_t tier = 0;
  std::uint32_t slack_ticks = 0;
};

struct ClientView {
  bool active = false;
  std::uint32_t player_slot = 0;
  world::EntityId player_id = world::kNoEntity;
  std::vector<InterestEntry> interest;  // sorted by id
  FrameHistory history;
  std::uint32_t acked_tick = 0;       // newest frame the client confirmed complete
  std::uint32_t first_sent_tick = 0;  // 0: nothing sent yet
  std::uint32_t last_sent_tick = 0;
  std::uint32_t last_input_sequence = 0;
  double tokens = 0.0;           // bandwidth budget, bytes
  std::uint64_t bytes_sent = 0;  // snapshot bytes sent to this client, ever
};

}  // namespace zone::replication
