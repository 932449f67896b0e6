#include "replication/budget_stage.hpp"

namespace zone::replication {

std::uint32_t select_within_budget(std::span<const Candidate> candidates,
                                   std::span<const std::uint32_t> order, double tokens,
                                   const PartCosts& costs, std::vector<std::uint32_t>& selected) {
  // A part costs its header, its two counts and (the first) the client's own record.
  const std::uint32_t max_bytes = costs.max_bytes;
  const std::uint32_t part_overhead = costs.part_overhead;
  double budget = tokens - part_overhead - costs.self_cost;
  std::uint32_t room = max_bytes - part_overhead - costs.self_cost;  // left in the current part
  std::uint32_t forced = 0;
  selected.clear();
  bool budget_left = true;
  for (const std::uint32_t k : order) {
    const Candidate& cand = candidates[k];
    std::uint32_t extra = cand.cost;
    if (extra > room) extra += part_overhead;
    if (!cand.mandatory) budget_left = budget_left && budget >= extra;
    if (cand.mandatory || budget_left) {
      if (cand.mandatory && budget < extra) ++forced;
      budget -= extra;
      room = extra > room ? max_bytes - part_overhead - cand.cost : room - cand.cost;
      selected.push_back(k);
    }
  }
  return forced;
}

}  // namespace zone::replication
