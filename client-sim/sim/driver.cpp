#include "sim/driver.hpp"

#include <cmath>
#include <numbers>

#include "protocol/quantize.hpp"

namespace zone::sim {
namespace {

constexpr double kEdgeMargin = 5.0;  // metres: turn back this close to the world's edge

// Keeps a heading pointing back into the world when the bot is near an edge.
void steer_inside(double& heading, double x, double y, const client::WelcomeInfo& w) {
  double cx = std::cos(heading);
  double cy = std::sin(heading);
  if ((x < w.world_min_x + kEdgeMargin && cx < 0) || (x > w.world_max_x - kEdgeMargin && cx > 0))
    cx = -cx;
  if ((y < w.world_min_y + kEdgeMargin && cy < 0) || (y > w.world_max_y - kEdgeMargin && cy > 0))
    cy = -cy;
  heading = std::atan2(cy, cx);
}

std::pair<float, float> along(double heading, double speed) {
  return {static_cast<float>(std::cos(heading) * speed),
          static_cast<float>(std::sin(heading) * speed)};
}

}  // namespace

void choose_target(const Scenario& s, DriverState& d, const client::Bot& bot) {
  d.target = 0;
  d.target_distance = 0.0;
  const replica::FrameReplica& replica = bot.replica();
  const auto state_row = bot.schema().find_field("state");
  const protocol::Values self = bot.self();
  d.dead = state_row && *state_row < self.size() && self[*state_row] == 1;
  if (bot.light()) return;
  const double x = protocol::position_metres(self, protocol::kX);
  const double y = protocol::position_metres(self, protocol::kY);
  double best = 0.0;
  for (const replica::EntityView e : replica.current().entities) {
    if (state_row && e.values[*state_row] == 1) continue;  // dead already
    if (s.combat.targets != CombatPlan::Targets::kAny) {
      const replica::EntityInfo* info = replica.info(e.id);
      const auto want = s.combat.targets == CombatPlan::Targets::kNpcs
                            ? protocol::EntityKind::kNpc
                            : protocol::EntityKind::kPlayer;
      if (info == nullptr || info->kind != want) continue;
    }
    const double dist = std::hypot(protocol::position_metres(e.values, protocol::kX) - x,
                                   protocol::position_metres(e.values, protocol::kY) - y);
    if (d.target == 0 || dist < best) {
      d.target = e.id;
      best = dist;
    }
  }
  d.target_distance = best;
}

std::pair<float, float> next_intent(const Scenario& s, DriverState& d, const client::Bot& bot,
                                    util::SplitMix64& rng, double dt) {
  const protocol::Values self = bot.self();
  const double x = protocol::position_metres(self, protocol::kX);
  const double y = protocol::position_metres(self, protocol::kY);
  const client::WelcomeInfo& w = bot.welcome();
  switch (s.movement) {
    case Movement::kIdle:
      return {0.0f, 0.0f};
    case Movement::kWander: {
      d.heading += (rng.u01() - 0.5) * 2.0 * s.turn_rate * dt;
      if (!s.cross_zones) {
        steer_inside(d.heading, x, y, w);
      } else {
        // The zone's edges are no obstacle, but the world's outer edges are, and the bot
        // does not know where they are: stopped where it walked a frame before, it turns
        // round. Judged only on a newer frame: a slow client may send several inputs
        // between two frames, and an unchanged position then says nothing.
        const std::uint32_t tick = bot.replica().current().tick;
        if (!d.has_last || tick != d.last_tick) {
          if (d.has_last && std::hypot(x - d.last_x, y - d.last_y) < 0.01) {
            d.heading += std::numbers::pi * (0.75 + 0.5 * rng.u01());
          }
          d.has_last = true;
          d.last_x = x;
          d.last_y = y;
          d.last_tick = tick;
        }
      }
      return along(d.heading, s.speed);
    }
    case Movement::kHotspot: {
      const double tx = w.world_min_x + s.target_x * (w.world_max_x - w.world_min_x);
      const double ty = w.world_min_y + s.target_y * (w.world_max_y - w.world_min_y);
      const double dist = std::hypot(tx - x, ty - y);
      if (dist > s.arrive_radius) {
        d.heading = std::atan2(ty - y, tx - x);
        return along(d.heading, s.speed);
      }
      d.heading += (rng.u01() - 0.5) * 2.0 * s.turn_rate * dt;  // mill around the square
      return along(d.heading, s.speed * 0.3);
    }
    case Movement::kRoute: {
      // To each point in turn; the last step to a point is shortened to land on it.
      const auto [tx, ty] = s.route[d.waypoint % s.route.size()];
      const double dist = std::hypot(tx - x, ty - y);
      if (dist < 0.05) {
        d.waypoint = (d.waypoint + 1) % s.route.size();
        return {0.0f, 0.0f};
      }
      d.heading = std::atan2(ty - y, tx - x);
      const double step = w.max_speed * dt;
      return along(d.heading, step > 0.0 ? std::min(s.speed, dist / step) : s.speed);
    }
    case Movement::kHunt: {
      choose_target(s, d, bot);
      if (d.dead) return {0.0f, 0.0f};  // frozen where it fell until it comes back
      if (d.target == 0) {
        // Nothing held: wander until something comes into view.
        d.heading += (rng.u01() - 0.5) * 2.0 * s.turn_rate * dt;
        steer_inside(d.heading, x, y, w);
        return along(d.heading, s.speed);
      }
      // Close in to well within melee range, then stand and fight.
      if (d.target_distance <= s.combat.melee_range * 0.6) return {0.0f, 0.0f};
      const replica::FoundEntity target = bot.replica().find(d.target);
      if (target == nullptr) return {0.0f, 0.0f};
      d.heading = std::atan2(protocol::position_metres(target->values, protocol::kY) - y,
                             protocol::position_metres(target->values, protocol::kX) - x);
      return along(d.heading, s.speed);
    }
    case Movement::kPatrol: {
      if (!d.anchored) {
        d.anchored = true;
        d.anchor_x = x;
        d.anchor_y = y;
        d.axis = rng.u01() * std::numbers::pi;
      }
      const double ax = std::cos(d.axis);
      const double ay = std::sin(d.axis);
      const double pos = (x - d.anchor_x) * ax + (y - d.anchor_y) * ay;
      const double half = s.patrol_length * 0.5;
      if (pos >= half) d.sign = -1.0;
      if (pos <= -half) d.sign = 1.0;
      d.heading = std::atan2(ay * d.sign, ax * d.sign);
      // A leg that runs into the world's edge turns back there.
      const double before = d.heading;
      steer_inside(d.heading, x, y, w);
      if (d.heading != before) d.sign = -d.sign;
      return along(d.heading, s.speed);
    }
  }
  return {0.0f, 0.0f};
}

}  // namespace zone::sim
