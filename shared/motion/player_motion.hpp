// How a player moves, as the server integrates it and a client predicts it: one rule, so
// that a client replaying its own inputs lands where the server put it (docs/client.md,
// "Prediction"). The server's World calls these for every player; shared/client's
// Predictor calls the same functions with the same arithmetic, operation for operation,
// because a different order of floating-point operations would drift by a few ulps a
// tick and show as corrections.
//
// What is not here, and stays the server's alone: a player waiting at a zone's edge for
// a handoff, the catch-up walk of an adopted entity, and the static objects' collisions
// (aoi::StaticGrid). A predicting client absorbs those as corrections.
#pragma once

#include <algorithm>
#include <cmath>

namespace zone::motion {

struct Velocity {
  double vx = 0.0;
  double vy = 0.0;
  bool moving() const { return vx != 0.0 || vy != 0.0; }
};

// An input's intent (move_x, move_y) as a velocity: a non-finite intent stands still, a
// longer one than 1 is shortened to 1, and 1 is `max_speed` metres per second.
inline Velocity player_velocity(double mx, double my, double max_speed) {
  if (!std::isfinite(mx) || !std::isfinite(my)) mx = my = 0.0;
  const double len = std::hypot(mx, my);
  if (len > 1.0) {
    mx /= len;
    my /= len;
  }
  return {mx * max_speed, my * max_speed};
}

// One tick of dt seconds at velocity v.
inline void integrate(double& x, double& y, Velocity v, double dt) {
  x += v.vx * dt;
  y += v.vy * dt;
}

// Keeps one coordinate within [lo, hi]; true when it had to (the world's edge stops a
// player that has no neighbouring zone to cross into).
inline bool clamp_axis(double& value, double lo, double hi) {
  if (!(value < lo || value > hi)) return false;
  value = std::clamp(value, lo, hi);
  return true;
}

}  // namespace zone::motion
