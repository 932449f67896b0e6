// Ground truth for verification runs (debug.truth): every entity's exact position, party,
// guild and game properties (in the schema's order) at each recent tick (and whether each is full
// range), and, per player, the entities in its view whose spawn the bandwidth budget held back
// (with the tick each entered the view), and the entities whose interest tier lets their updates
// wait (with how many ticks), and the tick's events with the players each was sent to, served as
// JSON at /debug/truth?tick=N (optionally for some players only) so client-sim can compare its
// bots' replicas with the world.
//
// The tick thread records into a ring under a mutex; the admin thread copies one frame
// out under the same mutex and formats it after releasing it, so a request never holds
// the tick up for longer than a copy.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "replication/replicator.hpp"
#include "world/world.hpp"

namespace zone {

// What a truth frame's JSON carries: everything, or only where the entities were (what a
// checker needs of the ticks before the one it checks, and a fraction of the size), or
// only the tick's events and their recipients (what an event checker needs of every tick).
enum class TruthDetail { kFull, kPositions, kEvents };

class TruthRecorder {
 public:
  explicit TruthRecorder(std::uint32_t history_ticks) : frames_(history_ticks) {}

  // Tick thread: records the world as replicated in this tick.
  void record(std::uint32_t tick, const world::World& world,
              const replication::Replicator& replicator);
  // Admin thread: the JSON for `tick`, or nullopt if it is not (or no longer) recorded.
  // With `players` (sorted ids), the per-player lists of those players only, and the
  // answer names them.
  std::optional<std::string> json_for(std::uint32_t tick, TruthDetail detail = TruthDetail::kFull,
                                      const std::vector<std::uint32_t>* players = nullptr) const;
  std::uint32_t newest_tick() const;
  std::uint32_t history_ticks() const { return static_cast<std::uint32_t>(frames_.size()); }

 private:
  struct Position {
    std::uint32_t id;
    double x, y;
    std::uint32_t party;
    std::uint32_t guild;
    std::uint32_t position_cm;  // precision tier: centimetres per unit of x and y
  };
  // An entity in a player's view whose spawn the budget held back, and since when.
  struct DeferredSpawn {
    std::uint32_t id;
    std::uint32_t since;  // the tick it entered the view
  };
  struct Deferred {
    std::uint32_t player;
    std::vector<DeferredSpawn> spawns;
  };
  // Entities in a player's view in a tier below near, and the ticks beyond the snapshot
  // interval their updates may wait for their turn.
  struct TierSlack {
    std::uint32_t id;
    std::uint32_t slack;
  };
  struct Tiered {
    std::uint32_t player;
    std::vector<TierSlack> entities;
  };
  // An event of the tick (world/event_log.hpp) and whom it reached.
  struct EventTruth {
    std::uint32_t sequence;
    std::uint16_t kind;
    std::uint32_t entity;
    std::uint32_t target;
    std::uint32_t first;  // into recipients
    std::uint32_t count;
  };
  struct TruthFrame {
    std::uint32_t tick = 0;
    double view_radius = 0.0;
    double hysteresis = 0.0;
    std::uint32_t max_deferral_ticks = 0;
    std::uint32_t max_staleness_ticks = 0;  // max_deferral_ticks + the largest tier slack
    bool party_full_range = false;
    bool guild_full_range = false;
    std::vector<Position> entities;
    std::size_t property_count = 0;
    std::vector<std::int32_t> properties;  // property_count per entity, in entities' order
    std::vector<Deferred> deferred;
    std::vector<Tiered> tiers;
    // The tick's events and, per event, the players it was sent to (ascending):
    // recipients[first, first + count).
    std::vector<EventTruth> events;
    std::vector<std::uint32_t> recipients;
  };

  mutable std::mutex mutex_;
  std::vector<TruthFrame> frames_;  // ring by tick
  std::uint32_t newest_ = 0;
  TruthFrame scratch_;
};

}  // namespace zone
