// Ghosts: the read-only copies, in this zone's world, of the entities that neighbouring
// zones own near the border (docs/world.md, "Ghosts").
//
// Each neighbour reports, every tick, the complete list of its entities within the ghost
// distance of this zone (GhostState). apply() turns each list into spawns, moves and
// despawns of ghost entities, so this zone's AOI and replication treat them like any
// other entity: its clients see them enter, move and leave by the usual rules. A source
// that stops listing an entity removes its ghost, kUnlistedGraceTicks later unless another
// source lists it meanwhile (a handoff between two neighbours: the ghost stays the same
// entity and follows its new owner); a source that goes silent for the
// timeout (a crashed zone) loses all its ghosts (expire()). Each list carries its
// source's epoch (when that process started): a larger one means the source restarted,
// and its ghosts from before are removed at once, since its new entities may reuse their
// ids; lists from an older epoch (delayed on the bus) are refused. The new epoch's
// entities appear only after id_reuse_ticks ticks: a client's snapshot is encoded
// against a frame it acknowledged, at most the replication history old, and until every
// such frame is younger than the old ghosts' despawn, a new entity with an old id would
// be taken for the old one having jumped.
//
// Reports can arrive bunched (two in one tick, none in the next), and a client refuses
// an entity that moves faster than the maximum speed. So a ghost does not jump to its
// owner's latest position: follow() moves it there at no more than max_step per tick
// (the zone's own per-tick bound); it may trail its owner by a tick's movement or two.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "world/world.hpp"

namespace zone::world {

// One entity as its owner reports it to a neighbour.
struct GhostState {
  EntityId id = kNoEntity;
  EntityKind kind = EntityKind::kNpc;
  double x = 0.0;
  double y = 0.0;
  float heading = 0.0f;
  float vx = 0.0f;
  float vy = 0.0f;
  PropertyValues properties;  // its entity type and game properties
  std::string name;
};

// Appends the live entities this world owns (no ghosts) within `distance` metres of the
// rectangle `area` (a neighbour's), in slot order.
void collect_near(const World& world, const aoi::Bounds& area, double distance,
                  std::vector<GhostState>& out);

struct GhostStats {
  std::uint64_t spawned = 0;  // ghosts created
  std::uint64_t removed = 0;  // no longer listed by any source
  // Listed by another source than the one it was a ghost of: handed over between two
  // other zones, it stays the same entity here.
  std::uint64_t rehomed = 0;
  std::uint64_t expired = 0;   // their source went silent
  std::uint64_t rejected = 0;  // listed with an id another source's ghost already has
  // Listed with the id of an entity this zone owns: one just handed over here, still on
  // the lists its old owner sent before it learnt so (skipped).
  std::uint64_t owned_here = 0;
  std::uint64_t restarted = 0;    // removed because their source restarted (a new epoch)
  std::uint64_t stale_lists = 0;  // lists refused: from a source's earlier epoch
};

// Ticks a ghost its source stopped listing stays (where it was) before it is removed: a
// player handed over between two neighbours of this zone leaves the old one's lists and
// joins the new one's, and those lists may reach this zone a tick or two apart; found on
// the new one's within this time, it stays the same entity, and nobody sees it blink.
inline constexpr std::uint32_t kUnlistedGraceTicks = 3;

class Ghosts {
 public:
  using Clock = std::chrono::steady_clock;
  // `id_reuse_ticks`: ticks between removing a restarted source's old ghosts and placing
  // its new ones (the replication history plus one, network.history_ticks + 1).
  Ghosts(World& world, std::uint32_t id_reuse_ticks)
      : world_(world), id_reuse_ticks_(id_reuse_ticks) {}

  // The complete list of zone `source`'s entities near this zone, received at `now`,
  // sent by the source's incarnation `epoch`. The first list of a new epoch removes the
  // earlier epoch's ghosts; its lists are applied once id_reuse_ticks calls of follow()
  // (ticks) have passed, so that no client sees an old entity turn into a new one.
  // Returns false for a list refused (an earlier epoch).
  bool apply(std::uint32_t source, std::uint64_t epoch, std::span<const GhostState> list,
             Clock::time_point now);
  // Handoff. The ghost of `id` becomes this zone's own entity: forgotten here, left in the
  // world. Returns its slot, or World::kNoSlot when there is no such ghost.
  std::uint32_t release(EntityId id);
  // An entity of this zone, just made a ghost in place (World::release) because zone
  // `source` took it over: from now on its position follows that source's lists.
  void adopt(std::uint32_t source, std::uint32_t slot, Clock::time_point now);
  // Removes the ghosts of every source not heard from since `now - timeout`.
  void expire(Clock::time_point now, Clock::duration timeout);
  // Moves every ghost towards its owner's last reported position, at most `max_step`
  // metres (once per tick, before the AOI update).
  void follow(double max_step);

  // Handoff bookkeeping: lists applied from `source` so far, and, for each list, the ids
  // of entities this zone owns that it named (a zone that just handed an entity over
  // still lists it until it learns so; one that kept it goes on listing it).
  std::uint64_t lists_from(std::uint32_t source) const {
    const auto it = sources_.find(source);
    return it == sources_.end() ? 0 : it->second.lists;
  }
  struct OwnedListed {
    std::uint32_t source;
    EntityId id;
    std::uint64_t list;  // the source's list number
  };
  // Since the last call (the caller takes them once per tick).
  std::vector<OwnedListed>& owned_listed() { return owned_listed_; }

  // The zone whose lists the ghost of `id` follows (its owner, as far as this zone
  // knows: the source whose table holds it), or none when `id` is no ghost of a source.
  std::optional<std::uint32_t> owner(EntityId id) const;
  // How many ghosts zone `source`'s lists keep here.
  std::size_t count_from(std::uint32_t source) const {
    const auto it = sources_.find(source);
    return it == sources_.end() ? 0 : it->second.ghosts.size();
  }

  std::size_t count() const { return world_.ghost_count(); }
  std::size_t sources() const { return sources_.size(); }
  const GhostStats& stats() const { return stats_; }

 private:
  struct Ghost {
    std::uint32_t slot = 0;
    GhostState target;       // the owner's latest report
    std::uint64_t seen = 0;  // the source's list number that last listed it
    // Ticks left before removal once its source stopped listing it (0: listed).
    std::uint32_t unlisted = 0;
  };
  struct Source {
    // Its ghosts by id: the owner of each ghost is the source whose table holds it.
    std::unordered_map<EntityId, Ghost> ghosts;
    Clock::time_point heard;
    std::uint64_t lists = 0;
    std::uint64_t epoch = 0;
    bool has_epoch = false;         // a list has been applied (adopt() may create a source first)
    std::uint32_t quiet_ticks = 0;  // restarted: ticks before its lists are applied again
  };
  // Removes all of a source's ghosts; returns how many there were.
  std::uint64_t remove_all(Source& source);
  // Moves the ghost of `id` from whichever other source holds it to `to`; false if none.
  bool rehome(EntityId id, Source& to);

  World& world_;
  std::uint32_t id_reuse_ticks_;
  std::unordered_map<std::uint32_t, Source> sources_;
  std::vector<OwnedListed> owned_listed_;
  GhostStats stats_;
};

}  // namespace zone::world
