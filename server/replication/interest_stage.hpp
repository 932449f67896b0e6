// Interest stage: how often the client hears of each entity in its interest set (the
// interest policy, docs/architecture.md "Interest policy"). Distance tiers, the crowd (all
// but the K nearest are far) and the view cone (behind is far) give each entity a tier;
// the gather stage asks for it entity by entity, in id order.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "replication/client_view.hpp"
#include "replication/replication_params.hpp"
#include "replication/tick_values.hpp"

namespace zone::replication {

class InterestTiers {
 public:
  // Once per client snapshot, before the merge: the policy's thresholds around the
  // player at (self_x, self_y) with `self_values` (centimetres; inv_r2 is one over the
  // squared view radius in centimetres). `nearest` is the worker's scratch.
  void prepare(const ReplicationParams& params, std::span<const InterestEntry> interest,
               const TickValues& values, protocol::Values self_values, double self_x, double self_y,
               double inv_r2, std::vector<double>& nearest, ReplicationStats& stats);
  // Whether any part of the policy is on (off: every entity is near).
  bool active() const { return active_; }
  // Ticks an update of `tier` may wait beyond the snapshot interval.
  std::uint32_t slack(std::uint8_t tier) const { return slack_[tier]; }
  // The tier of an entity (dx, dy) from the player, d2 = dx^2 + dy^2, centimetres. Called
  // once per entity not in a group, in id order: the crowd's ties at the K-th distance go
  // to the first asked.
  std::uint8_t tier_of(double dx, double dy, double d2, ReplicationStats& stats) {
    std::uint8_t tier = 0;
    if (tiers_) tier = d2 <= near2_ ? 0 : (d2 <= far2_ ? 1 : 2);
    if (crowded_) {
      bool kept = d2 < crowd_d2_;
      if (d2 == crowd_d2_ && crowd_ties_ > 0) {
        kept = true;
        --crowd_ties_;
      }
      if (!kept) tier = 2;
    }
    if (cone_ && tier < 2 && d2 > cone_r2_) {
      const double dot = hx_ * dx + hy_ * dy;
      const bool inside = cos_half_positive_ ? (dot >= 0.0 && dot * dot >= cos_half2_ * d2)
                                             : (dot >= 0.0 || dot * dot <= cos_half2_ * d2);
      if (!inside) {
        tier = 2;
        ++stats.behind;
      }
    }
    return tier;
  }

 private:
  bool active_ = false;
  bool tiers_ = false;
  bool cone_ = false;
  bool crowded_ = false;
  std::array<std::uint32_t, 3> slack_{};
  double near2_ = 0.0, far2_ = 0.0;
  double crowd_d2_ = std::numeric_limits<double>::infinity();
  std::uint32_t crowd_ties_ = 0;
  double hx_ = 0.0, hy_ = 0.0, cos_half2_ = 0.0, cone_r2_ = 0.0;
  bool cos_half_positive_ = true;
};

}  // namespace zone::replication
