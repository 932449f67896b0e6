#include "client/interpolation.hpp"

#include <cmath>
#include <numbers>

namespace zone::client {

double lerp_heading(double a, double b, double t) {
  constexpr double kTurn = 2.0 * std::numbers::pi;
  double d = std::fmod(b - a, kTurn);
  if (d > std::numbers::pi) d -= kTurn;
  if (d < -std::numbers::pi) d += kTurn;
  return a + d * t;
}

bool InterpolationBuffer::push(const EntitySample& s) {
  // Find the place from the newest end: samples nearly always arrive in order.
  std::size_t pos = count_;
  while (pos > 0 && at(pos - 1).tick > s.tick) --pos;
  if (pos > 0 && at(pos - 1).tick == s.tick) return false;
  if (count_ == kCapacity) {
    if (pos == 0) return false;         // older than everything kept
    first_ = (first_ + 1) % kCapacity;  // the oldest makes room
    --count_;
    --pos;
  }
  for (std::size_t i = count_; i > pos; --i) at(i) = at(i - 1);
  at(pos) = s;
  ++count_;
  return true;
}

bool InterpolationBuffer::sample(double tick, EntitySample& out) const {
  if (count_ == 0) return false;
  if (tick <= static_cast<double>(at(0).tick)) {
    out = at(0);
    return true;
  }
  const EntitySample& last = at(count_ - 1);
  if (tick >= static_cast<double>(last.tick)) {
    out = last;
    if (count_ < 2) return true;
    const EntitySample& prev = at(count_ - 2);
    if (prev.teleports != last.teleports) return true;
    // Along the last segment, for a little while: a lost frame then costs no stop.
    const double span = static_cast<double>(last.tick - prev.tick);
    const double ahead = std::min(tick - static_cast<double>(last.tick), kMaxExtrapolationTicks);
    const double t = ahead / span;
    out.x = last.x + (last.x - prev.x) * t;
    out.y = last.y + (last.y - prev.y) * t;
    out.heading = lerp_heading(prev.heading, last.heading, 1.0 + t);
    return true;
  }
  std::size_t hi = count_ - 1;
  while (hi > 0 && static_cast<double>(at(hi - 1).tick) > tick) --hi;
  const EntitySample& a = at(hi - 1);
  const EntitySample& b = at(hi);
  if (a.teleports != b.teleports) {
    out = a;  // no path between two places a teleport joins
    return true;
  }
  const double t = (tick - static_cast<double>(a.tick)) / static_cast<double>(b.tick - a.tick);
  out.tick = a.tick;
  out.teleports = a.teleports;
  out.x = a.x + (b.x - a.x) * t;
  out.y = a.y + (b.y - a.y) * t;
  out.heading = lerp_heading(a.heading, b.heading, t);
  return true;
}

void InterpolationBuffer::drop_before(double tick) {
  // The newest two stay: past the newest sample the entity goes on along their segment.
  while (count_ > 2 && static_cast<double>(at(1).tick) <= tick) {
    first_ = (first_ + 1) % kCapacity;
    --count_;
  }
}

}  // namespace zone::client
