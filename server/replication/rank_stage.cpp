#include "replication/rank_stage.hpp"

#include <algorithm>

namespace zone::replication {

void rank_candidates(std::span<const Candidate> candidates, std::vector<std::uint32_t>& order) {
  order.resize(candidates.size());
  for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  // The comparator holds the array itself, not a reference to the span: one load less
  // per comparison.
  const Candidate* const c = candidates.data();
  std::sort(order.begin(), order.end(), [c](std::uint32_t a, std::uint32_t b) {
    const Candidate& ca = c[a];
    const Candidate& cb = c[b];
    if (ca.mandatory != cb.mandatory) return ca.mandatory;
    if (ca.priority != cb.priority) return ca.priority > cb.priority;
    return ca.frame_index < cb.frame_index;
  });
}

}  // namespace zone::replication
