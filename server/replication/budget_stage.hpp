// Budget stage: what of the ranked candidates the client's token bucket pays for this
// snapshot, and whether the snapshot is worth sending at all. The budget is an estimate
// (the pack stage is exact): a candidate costs its bound, plus a part's overhead when it
// would open a new part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "replication/candidate.hpp"

namespace zone::replication {

// Appends to `selected` (cleared first), in rank order, the candidates that go: every
// mandatory one, and the others in `order` while the budget lasts (the first that does
// not fit ends them: lower ranks never overtake it). `tokens` is the client's bucket.
// Returns how many mandatory candidates went over the budget.
std::uint32_t select_within_budget(std::span<const Candidate> candidates,
                                   std::span<const std::uint32_t> order, double tokens,
                                   const PartCosts& costs, std::vector<std::uint32_t>& selected);

struct HoldBackInputs {
  std::size_t selected = 0;   // candidates selected
  std::size_t deferred = 0;   // candidates left waiting
  bool self_changed = false;  // the client's own record goes
  double tokens = 0.0;        // the client's bucket (negative: in debt)
  std::uint32_t tick = 0;
  std::uint32_t last_sent_tick = 0;  // 0: nothing sent yet
  std::uint32_t tick_rate = 20;
};

// Whether to skip this snapshot: it would carry nothing new while something waits for
// budget (or the client is in debt), so sending headers alone would spend the tokens the
// waiting record needs. A client still hears from us at least once a second.
inline bool hold_back(const HoldBackInputs& in) {
  const bool progress = in.selected > 0 || in.self_changed;
  const bool saving = in.deferred > 0 || in.tokens < 0.0;
  const std::uint32_t second = in.tick_rate > 1 ? in.tick_rate : 1u;
  const bool heard_recently = in.last_sent_tick != 0 && in.tick - in.last_sent_tick < second;
  return !progress && saving && heard_recently;
}

}  // namespace zone::replication
