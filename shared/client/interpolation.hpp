// An interpolation buffer for one entity that the client does not control: its states by
// server tick, and its state at any (fractional) tick between them. A game shows other
// entities a fixed delay in the past (render tick = ClockSync's tick - delay), so that
// the two frames around the render tick have usually both arrived: a lost frame only
// widens one interpolated segment, a reordered one is put in its place.
//
// A move across which the entity's teleport count changed (docs/protocol.md, move_state)
// is not interpolated: the entity stays at the old place until the new one's tick, then
// appears there.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace zone::client {

struct EntitySample {
  std::uint32_t tick = 0;
  double x = 0.0;              // metres
  double y = 0.0;              // metres
  double heading = 0.0;        // radians
  std::uint8_t teleports = 0;  // move_state >> 2
};

class InterpolationBuffer {
 public:
  // Samples kept: 1.6 s at 20 Hz, far more than any sensible delay needs.
  static constexpr std::size_t kCapacity = 32;
  // Past its newest sample an entity is carried on along its last segment for at most
  // this many ticks (a frame or two lost in a row), then held.
  static constexpr double kMaxExtrapolationTicks = 2.0;

  // Adds a sample; one of a tick already held, or older than everything held while the
  // buffer is full, is ignored. Returns whether it was kept.
  bool push(const EntitySample& s);
  // The state at `tick` (fractional). False when the buffer is empty.
  bool sample(double tick, EntitySample& out) const;
  // Forgets the samples older than the newest one at or before `tick` (they can no longer
  // be needed by a render tick that only moves forward), but never the newest two.
  void drop_before(double tick);
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const EntitySample& newest() const { return at(count_ - 1); }
  const EntitySample& oldest() const { return at(0); }
  void clear() { count_ = 0; }

 private:
  // Ascending by tick: at(0) is the oldest.
  const EntitySample& at(std::size_t i) const { return ring_[(first_ + i) % kCapacity]; }
  EntitySample& at(std::size_t i) { return ring_[(first_ + i) % kCapacity]; }
  std::array<EntitySample, kCapacity> ring_{};
  std::size_t first_ = 0;
  std::size_t count_ = 0;
};

// Heading from a to b by the shorter way round, at t in [0, 1].
double lerp_heading(double a, double b, double t);

}  // namespace zone::client
