// Gather stage: what the client may know this snapshot. Merges the client's baseline
// frame with its interest set (both sorted by id) into the next frame, as the client will
// hold it if nothing is sent, and the candidates that would bring it up to date: a
// despawn for what left, a spawn for what entered, an update for what changed and is due
// (its interest tier's turn, interest_stage.hpp). Each candidate gets its cost bound and
// its priority (rank_stage.hpp); what may not wait is marked mandatory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "replication/candidate.hpp"
#include "replication/client_view.hpp"
#include "replication/interest_stage.hpp"
#include "replication/replication_params.hpp"
#include "replication/tick_values.hpp"
#include "world/world.hpp"

namespace zone::replication {

struct GatherContext {
  std::uint32_t tick = 0;
  const Frame* baseline = nullptr;  // the acknowledged frame; nullptr: none usable
  const Frame* last = nullptr;      // the newest frame the client may hold
  std::uint32_t max_wait = 0;       // max_deferral_ticks
  // The player, in centimetres, and one over its squared view radius (centimetres).
  double self_x = 0.0;
  double self_y = 0.0;
  double inv_r2 = 0.0;
  std::int32_t self_party = 0;
};

// Resets `frame` (recycled from any client's history) for `tick` with the client's own
// `self` values, with room for `entities` entities so the merge never reallocates.
void start_frame(Frame& frame, std::uint32_t tick, protocol::Values self, std::size_t entities);

// Appends the candidates to `out` (cleared first) and every entity to `frame`. Updates
// each interest entry's tier (through `tiers`, prepared for this client) and resets the
// accumulated priority of those with nothing to send.
void gather_candidates(const GatherContext& ctx, std::vector<InterestEntry>& interest,
                       const TickValues& values, const world::World& world, InterestTiers& tiers,
                       Frame& frame, std::vector<Candidate>& out, ReplicationStats& stats);

// Whether `frame` (may be null) holds entity `id`.
inline bool frame_has(const Frame* frame, world::EntityId id) {
  if (frame == nullptr) return false;
  auto it = std::lower_bound(frame->entities.begin(), frame->entities.end(), id,
                             [](const FrameEntry& e, world::EntityId k) { return e.id < k; });
  return it != frame->entities.end() && it->id == id;
}

}  // namespace zone::replication
