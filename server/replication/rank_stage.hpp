// Rank stage: in which order the candidates claim the budget. A candidate's priority is
// what its entity accumulated while waiting plus its weight this snapshot: nearer weighs
// more (a party or guild member as if it stood next to the player), and appearing beats
// refreshing. The order puts what may not wait first, then the highest priority.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "replication/candidate.hpp"

namespace zone::replication {

// Falls with distance; squared, in the centimetres at hand (no square root, no visit to
// the world's entity records, which are cold in cache). d2 and inv_r2 as in GatherContext.
inline float proximity_weight(bool member, double d2, double inv_r2) {
  return member ? 1.0f : static_cast<float>(1.0 / (1.0 + d2 * inv_r2));
}
inline float spawn_priority(float accumulated, float weight) {
  return accumulated + 2.0f * weight;
}
inline float update_priority(float accumulated, float weight) {
  return accumulated + weight;
}

// `order` becomes the candidates' indices in send order: mandatory first, then by
// priority, ties by frame position (that is, by id), so it is deterministic.
void rank_candidates(std::span<const Candidate> candidates, std::vector<std::uint32_t>& order);

}  // namespace zone::replication
