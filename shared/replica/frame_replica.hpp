// Client-side replica of the world as the server describes it.
//
// Rebuilds each server frame from its baseline frame plus the snapshot parts of that
// tick (the Quake 3 scheme the server uses), keeps the recent frames as future
// baselines, and checks the protocol's invariants on every message: no change or
// despawn naming an entity the baseline does not hold, no duplicate spawn, no impossible
// jump, no frame built on a baseline the client does not have, no malformed part.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/compact.hpp"
#include "protocol/limits.hpp"
#include "protocol/schema.hpp"

namespace zone::replica {

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

// One entity of a frame, read in place: its id and its values (one per schema row).
struct EntityView {
  std::uint32_t id = 0;
  protocol::Values values;
  std::int32_t x() const { return values[protocol::kX]; }
  std::int32_t y() const { return values[protocol::kY]; }
  std::uint32_t party() const { return static_cast<std::uint32_t>(values[protocol::kParty]); }
  std::uint32_t guild() const { return static_cast<std::uint32_t>(values[protocol::kGuild]); }
};

// What find() returns: the entity, or nothing (compares equal to nullptr then, as a
// pointer would).
class FoundEntity : public std::optional<EntityView> {
 public:
  using std::optional<EntityView>::optional;
  friend bool operator==(const FoundEntity& f, std::nullptr_t) { return !f.has_value(); }
};

// A copy of one entity's values that outlives the frame it came from.
struct EntityState {
  std::uint32_t id = 0;
  std::vector<std::int32_t> values;
  EntityState() = default;
  EntityState(std::uint32_t entity, protocol::Values v) : id(entity), values(v.begin(), v.end()) {}
  EntityState(const EntityView& v) : EntityState(v.id, v.values) {}  // NOLINT: a copy of it
  std::int32_t x() const { return values[protocol::kX]; }
  std::int32_t y() const { return values[protocol::kY]; }
  std::uint32_t party() const { return static_cast<std::uint32_t>(values[protocol::kParty]); }
  std::uint32_t guild() const { return static_cast<std::uint32_t>(values[protocol::kGuild]); }
  friend bool operator==(const EntityState&, const EntityState&) = default;
};

// What never changes about an entity: sent with its spawn.
struct EntityInfo {
  std::uint16_t type = 0;  // index into the schema's entity types
  protocol::EntityKind kind = protocol::EntityKind::kNpc;
  std::string name;
};

// The entities of a frame, sorted by id, with their values side by side in one array
// (one row of `stride` values per entity): a frame is copied whole as the next one's
// start, so it is kept contiguous.
class EntityList {
 public:
  std::size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  std::uint32_t id(std::size_t i) const { return ids_[i]; }
  protocol::Values values(std::size_t i) const { return {values_.data() + i * stride_, stride_}; }
  protocol::MutableValues values(std::size_t i) { return {values_.data() + i * stride_, stride_}; }
  EntityView operator[](std::size_t i) const { return {ids_[i], values(i)}; }
  EntityView front() const { return (*this)[0]; }
  EntityView back() const { return (*this)[size() - 1]; }
  // Position of `id`, or size() when absent.
  std::size_t index_of(std::uint32_t id) const;
  // Position of the first entity whose id is not below `id`.
  std::size_t lower_bound(std::uint32_t id) const;

  class Iterator {
   public:
    using value_type = EntityView;
    using difference_type = std::ptrdiff_t;
    Iterator(const EntityList* list, std::size_t i) : list_(list), i_(i) {}
    EntityView operator*() const { return (*list_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const EntityList* list_;
    std::size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

  void reset(std::size_t stride) {
    stride_ = stride;
    clear();
  }
  void clear() {
    ids_.clear();
    values_.clear();
  }
  void push_back(std::uint32_t id, protocol::Values v) {
    ids_.push_back(id);
    values_.insert(values_.end(), v.begin(), v.end());
  }
  void insert(std::size_t at, std::uint32_t id, protocol::Values v) {
    ids_.insert(ids_.begin() + static_cast<std::ptrdiff_t>(at), id);
    values_.insert(values_.begin() + static_cast<std::ptrdiff_t>(at * stride_), v.begin(), v.end());
  }
  // Keeps entity i at position `to` (to <= i), for compaction; then truncate().
  void move_down(std::size_t i, std::size_t to) {
    ids_[to] = ids_[i];
    std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(i * stride_), stride_,
                values_.begin() + static_cast<std::ptrdiff_t>(to * stride_));
  }
  void truncate(std::size_t n) {
    ids_.resize(n);
    values_.resize(n * stride_);
  }
  std::size_t stride() const { return stride_; }

 private:
  std::size_t stride_ = 0;
  std::vector<std::uint32_t> ids_;
  std::vector<std::int32_t> values_;
};

struct Frame {
  std::uint32_t tick = 0;
  std::vector<std::int32_t> self;  // one value per schema row
  EntityList entities;             // sorted by id
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

// A Frame from nothing: its own values all zero, no entities.
void clear_frame(Frame& frame, std::size_t stride);

class FrameReplica {
 public:
  static constexpr std::uint32_t kFrameHistory = protocol::kClientFrameHistory;

  FrameReplica() { clear_frames(); }

  // Starts again (a Welcome): the session's schema says how to read every record.
  void reset(const ReplicaLimits& limits, const protocol::Schema& schema);
  const protocol::Schema& schema() const { return schema_; }

  // Feeds one snapshot part (the packet's bytes). Returns true when it completed a frame
  // newer than the current one. Violations, malformed parts included, go to violations().
  bool apply(std::span<const std::uint8_t> packet);

  // Newest tick the client holds completely: what it acknowledges in its inputs.
  std::uint32_t ack_tick() const { return current_.tick; }
  const Frame& current() const { return current_; }
  // A recent complete frame by server tick, or nullptr if the client never completed it
  // (or it is older than kFrameHistory ticks).
  const Frame* frame_at(std::uint32_t tick) const;
  FoundEntity find(std::uint32_t id) const;
  // The client's own entity as of the newest complete frame.
  protocol::Values self() const { return current_.self; }
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
  // Every frame empty, in the current schema's stride.
  void clear_frames();

  ReplicaLimits limits_;
  protocol::Schema schema_;
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
  EntityList spawned_;
  std::vector<std::uint32_t> spawn_order_;
  std::vector<std::int32_t> before_;
  std::vector<std::int32_t> zeros_;
};

}  // namespace zone::replica
