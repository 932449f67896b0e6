#include "replication/settle_stage.hpp"

#include <algorithm>

namespace zone::replication {

void settle_candidates(std::span<Candidate> candidates, std::span<InterestEntry> interest_set,
                       std::uint32_t tick, Frame& frame, ReplicationStats& stats) {
  const std::size_t stride = frame.stride;
  for (const Candidate& cand : candidates) {
    const bool sent = cand.sent;
    FrameEntry& entry = frame.entities[cand.frame_index];
    if (cand.kind == Candidate::kDespawn) {
      if (sent) {
        entry.id = world::kNoEntity;
        ++stats.despawns;
      }
      continue;
    }
    InterestEntry& interest = interest_set[cand.interest_index];
    if (sent) {
      interest.priority = 0.0f;
      if (interest.deferred) {
        stats.oldest_deferral_ticks =
            std::max(stats.oldest_deferral_ticks, tick - interest.deferred_since);
        interest.deferred = false;
      }
      if (cand.kind == Candidate::kSpawn) {
        ++stats.spawns;
      } else {
        std::copy_n(cand.now, stride, frame.values_of(cand.frame_index).begin());
        entry.sent_tick = tick;
        ++stats.updates;
      }
    } else {
      interest.priority = cand.priority;  // the accumulator: waits longer, ranks higher
      if (!interest.deferred) {
        interest.deferred = true;
        interest.deferred_since = tick;
      }
      ++stats.deferred;
      if (cand.kind == Candidate::kSpawn) {
        frame.deferred_spawns.push_back(entry.id);
        entry.id = world::kNoEntity;  // not in the frame: the client will not have it
      }
    }
  }
}

}  // namespace zone::replication
