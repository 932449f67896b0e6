// Settle stage: after packing, the outcome of every candidate is recorded. What was sent
// is in the frame as the client will hold it and its entity's accumulated priority is
// spent; what waits keeps its baseline values in the frame (a spawn leaves it) and its
// priority accumulates, so it ranks higher next time (the accumulator).
#pragma once

#include <cstdint>
#include <span>

#include "replication/candidate.hpp"
#include "replication/client_view.hpp"
#include "replication/replication_params.hpp"

namespace zone::replication {

// `candidates`' `sent` flags must be set (mark_sent). Updates `frame`, the interest
// entries and `stats`.
void settle_candidates(std::span<Candidate> candidates, std::span<InterestEntry> interest,
                       std::uint32_t tick, Frame& frame, ReplicationStats& stats);

// Sets the `sent` flag of the candidates in `selected`.
inline void mark_sent(std::span<Candidate> candidates, std::span<const std::uint32_t> selected) {
  for (const std::uint32_t k : selected) candidates[k].sent = true;
}

}  // namespace zone::replication
