#include "world/npc_brain.hpp"

#include <algorithm>
#include <cmath>

namespace zone::world {
namespace {

void walk(Entity& npc, double speed) {
  npc.vx = std::cos(npc.heading) * speed;
  npc.vy = std::sin(npc.heading) * speed;
}

void stand(Entity& npc) {
  npc.vx = 0.0;
  npc.vy = 0.0;
}

void think_wander(NpcBrain& b, Entity& npc, const NpcParams& p, util::SplitMix64& rng, double dt) {
  b.timer -= dt;
  if (b.timer <= 0.0) {
    // Alternate walks and rests; rest phases are sized so that resting takes about
    // idle_fraction of the time on average.
    const double walk_s = rng.range(2.0, 8.0);
    if (!b.resting && rng.u01() < p.idle_fraction) {
      b.resting = true;
      b.timer = walk_s * p.idle_fraction / std::max(1e-6, 1.0 - p.idle_fraction);
    } else {
      b.resting = false;
      b.timer = walk_s;
    }
  }
  if (b.resting) {
    stand(npc);
    return;
  }
  npc.heading += (rng.u01() - 0.5) * 2.0 * p.turn_rate * dt;
  walk(npc, p.speed);
}

void think_patrol(NpcBrain& b, Entity& npc, const NpcParams& p) {
  // Position along the leg; turn round at either end.
  const double along = (npc.x - b.anchor_x) * b.axis_x + (npc.y - b.anchor_y) * b.axis_y;
  const double half = p.patrol_length * 0.5;
  if (along >= half) b.sign = -1.0;
  if (along <= -half) b.sign = 1.0;
  npc.heading = std::atan2(b.axis_y * b.sign, b.axis_x * b.sign);
  walk(npc, p.speed);
}

void steer(const NpcBrain& b, Entity& npc, double dt) {
  const double dx = b.goal_x - npc.x, dy = b.goal_y - npc.y;
  const double gap = std::hypot(dx, dy);
  // Arrived (to well under a millimetre: the last step's rounding).
  if (gap < 1e-6 || dt <= 0.0) {
    stand(npc);
    return;
  }
  // The last step lands on the goal instead of walking past it.
  const double speed = std::min(b.goal_speed, gap / dt);
  npc.heading = std::atan2(dy, dx);
  npc.vx = dx / gap * speed;
  npc.vy = dy / gap * speed;
}

}  // namespace

void think(NpcBrain& brain, Entity& npc, const NpcParams& params, util::SplitMix64& rng,
           double dt) {
  if (brain.control == NpcControl::kSteer) {
    steer(brain, npc, dt);
    return;
  }
  if (brain.control == NpcControl::kHold) {
    stand(npc);
    return;
  }
  switch (params.behaviour) {
    case NpcBehaviour::kIdle:
      stand(npc);
      break;
    case NpcBehaviour::kWander:
      think_wander(brain, npc, params, rng, dt);
      break;
    case NpcBehaviour::kPatrol:
      think_patrol(brain, npc, params);
      break;
  }
}

void turn_back(NpcBrain& brain, Entity& npc, const NpcParams& params) {
  if (brain.control != NpcControl::kBehaviour) return;
  switch (params.behaviour) {
    case NpcBehaviour::kIdle:
      break;
    case NpcBehaviour::kWander:
      npc.heading += 3.14159265358979323846;
      break;
    case NpcBehaviour::kPatrol:
      // Walk the leg back from here: the leg moves so that this point is the end the NPC
      // leaves (think_patrol would otherwise turn it straight back into the object when
      // it stands beyond the leg's end).
      brain.sign = -brain.sign;
      brain.anchor_x = npc.x + brain.sign * params.patrol_length * 0.5 * brain.axis_x;
      brain.anchor_y = npc.y + brain.sign * params.patrol_length * 0.5 * brain.axis_y;
      break;
  }
}

}  // namespace zone::world
