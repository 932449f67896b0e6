// Client-side replica of the world as the server describes it.
//
// Rebuilds each server frame from its baseline frame plus the snapshot parts of that
// tick (the Quake 3 scheme the server uses), keeps the recent frames as future
// baselines, and checks the protocol's invariants on every message: no change or
// despawn naming an entity the baseline does not hold, no duplicate spawn, no impossible
// jump, no frame built on a baseline the client does not have, no malformed part.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/compact.hpp"
#include "protocol/limits.hpp"

namespace zone::replica {

using protocol::FieldValues;

enum class Violation : std::uint8_t {
  kUnknownBaseline,    // snapshot built on a frame this client never completed
  kDeltaForUnknown,    // a change naming a position beyond the baseline frame
  kDespawnUnknown,     // a despawn naming a position beyond the baseline frame
  kDuplicateSpawn,     // spawn of an entity already in the baseline or twice in a frame
  kImpossibleJump,     // a move larger than max speed allows since the entity's last update
  kSelfInView,         // the client's own entity replicated as a foreign entity
  kInconsistentParts,  // parts of one tick disagree, or name one entity twice
  kMalformed,          // a part that does not parse
};
inline constexpr std::size_t kViolationKinds = 8;
const char* to_string(Violation v);

struct ViolationRecord {
  Violation kind;
  std::uint32_t server_tick;
  std::uint32_t entity_id;
};

struct EntityState {
  std::uint32_t id = 0;
  FieldValues values{};
  std::int32_t x() const { return values[protocol::kX]; }
  std::int32_t y() const { return values[protocol::kY]; }
  std::uint32_t party() const { return static_cast<std::uint32_t>(values[protocol::kParty]); }
  std::uint32_t guild() const { return static_cast<std::uint32_t>(values[protocol::kGuild]); }
  friend bool operator==(const EntityState&, const EntityState&) = default;
};

// What never changes about an entity: sent with its spawn.
struct EntityInfo {
  std::uint8_t kind = 0;  // protocol::kKindPlayer / kKindNpc
  std::uint16_t max_health = 0;
  std::string name;
};

struct Frame {
  std::uint32_t tick = 0;
  FieldValues self{};
  std::vector<EntityState> entities;  // sorted by id
  // Per entity (same order): the server tick its values were last set at. A record the
  // server deferred leaves an entity's values older than the frame, and the jump check
  // must measure movement from then.
  std::vector<std::uint32_t> updated;
};

struct ReplicaLimits {
  double max_speed = 10.0;       // m/s, from Welcome; used by the jump check
  std::uint32_t tick_rate = 20;  // Hz, from Welcome
  std::uint32_t self_id = 0;
};

class FrameReplica {
 public:
  static constexpr std::uint32_t kFrameHistory = protocol::kClientFrameHistory;

  void reset(const ReplicaLimits& limits);

  // Feeds one snapshot part (the packet's bytes). Returns true when it completed a frame
  // newer than the current one. Violations, malformed parts included, go to violations().
  bool apply(std::span<const std::uint8_t> packet);

  // Newest tick the client holds completely: what it acknowledges in its inputs.
  std::uint32_t ack_tick() const { return current_.tick; }
  const Frame& current() const { return current_; }
  // A recent complete frame by server tick, or nullptr if the client never completed it
  // (or it is older than kFrameHistory ticks).
  const Frame* frame_at(std::uint32_t tick) const;
  const EntityState* find(std::uint32_t id) const;
  // The client's own entity as of the newest complete frame.
  const FieldValues& self() const { return current_.self; }
  std::uint32_t last_input_sequence() const { return last_input_sequence_; }
  const EntityInfo* info(std::uint32_t id) const;

  const std::vector<ViolationRecord>& violations() const { return violations_; }
  void clear_violations() { violations_.clear(); }

  // Counters since reset(): entities that entered/left the current frame.
  std::uint64_t enters() const { return enters_; }
  std::uint64_t leaves() const { return leaves_; }
  std::uint64_t frames_completed() const { return frames_completed_; }

 private:
  struct PendingFrame {
    std::uint32_t tick = 0;
    std::uint8_t baseline_age = 0;
    std::uint8_t part_count = 0;
    std::vector<std::vector<std::uint8_t>> parts;  // packet bytes, by part index
    std::uint16_t received = 0;
  };
  void complete(std::uint32_t tick, std::uint32_t baseline,
                std::span<const protocol::SnapshotPart> parts);
  void violation(Violation v, std::uint32_t tick, std::uint32_t id);

  ReplicaLimits limits_;
  Frame current_;
  std::vector<Frame> history_ = std::vector<Frame>(kFrameHistory);  // ring by tick
  std::vector<PendingFrame> pending_;
  std::unordered_map<std::uint32_t, EntityInfo> info_;
  std::uint32_t last_input_sequence_ = 0;
  std::uint32_t newest_part_tick_ = 0;
  std::vector<ViolationRecord> violations_;
  std::uint64_t enters_ = 0;
  std::uint64_t leaves_ = 0;
  std::uint64_t frames_completed_ = 0;
  // Scratch, reused.
  Frame scratch_;
  std::vector<protocol::SnapshotPart> parts_ = std::vector<protocol::SnapshotPart>(1);
  std::vector<std::uint8_t> touched_;  // per baseline entity: 1 changed, 2 despawned
  std::vector<EntityState> spawned_;
};

}  // namespace zone::replica
