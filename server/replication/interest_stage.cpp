#include "replication/interest_stage.hpp"

#include <algorithm>
#include <cmath>

#include "protocol/quantize.hpp"

namespace zone::replication {

void InterestTiers::prepare(const ReplicationParams& params,
                            std::span<const InterestEntry> interest, const TickValues& values,
                            protocol::Values self_values, double self_x, double self_y,
                            double inv_r2, std::vector<double>& nearest, ReplicationStats& stats) {
  const InterestParams& ip = params.interest;
  active_ = ip.active();
  tiers_ = ip.tiers;
  cone_ = ip.cone;
  slack_ = {0, tier_slack_ticks(params, 1), tier_slack_ticks(params, 2)};
  near2_ = ip.near_fraction * ip.near_fraction / inv_r2;
  far2_ = ip.far_fraction * ip.far_fraction / inv_r2;
  // Crowd: more than K in view. The K nearest keep their tier; ties at the K-th distance
  // go to the lowest ids (the merge runs in id order), so exactly K are kept. Party and
  // guild members are not part of the crowd: they keep the near tier whatever it holds.
  crowd_d2_ = std::numeric_limits<double>::infinity();
  crowd_ties_ = 0;
  const std::uint32_t k_nearest = ip.crowd_threshold;
  std::size_t crowd_size = interest.size();
  if (k_nearest > 0 && crowd_size > k_nearest) {
    for (const InterestEntry& e : interest) crowd_size -= (e.sources & kInGroup) ? 1 : 0;
  }
  crowded_ = k_nearest > 0 && crowd_size > k_nearest;
  if (crowded_) {
    ++stats.crowded;
    nearest.clear();
    for (const InterestEntry& e : interest) {
      if (e.sources & kInGroup) continue;
      const protocol::Values p = values.of(e.slot, RowView::kFull);
      const double dx = protocol::position_cm(p, protocol::kX) - self_x;
      const double dy = protocol::position_cm(p, protocol::kY) - self_y;
      nearest.push_back(dx * dx + dy * dy);
    }
    std::nth_element(nearest.begin(), nearest.begin() + (k_nearest - 1), nearest.end());
    crowd_d2_ = nearest[k_nearest - 1];
    crowd_ties_ = k_nearest - static_cast<std::uint32_t>(
                                  std::count_if(nearest.begin(), nearest.begin() + (k_nearest - 1),
                                                [&](double d) { return d < crowd_d2_; }));
  }
  // Cone: the player faces its heading (direction of travel); behind is outside half the
  // field of view on either side, beyond cone_radius.
  constexpr double kPi = 3.14159265358979323846;
  hx_ = hy_ = cos_half2_ = cone_r2_ = 0.0;
  cos_half_positive_ = true;
  if (ip.cone) {  // trigonometry only when asked for: it is most of a small view's cost
    const double heading = protocol::heading_radians(self_values);
    hx_ = std::cos(heading);
    hy_ = std::sin(heading);
    const double cos_half = std::cos(ip.cone_fov_degrees * kPi / 360.0);
    cos_half2_ = cos_half * cos_half;
    cos_half_positive_ = cos_half >= 0.0;
    const double cone_r = ip.cone_radius / protocol::kPositionStep;
    cone_r2_ = cone_r * cone_r;
  }
}

}  // namespace zone::replication
