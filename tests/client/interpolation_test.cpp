// The interpolation buffer (shared/client/interpolation.hpp) and the clock sync
// (clock_sync.hpp) together, as a client draws another entity: frames of an entity
// walking a circle cross a link with 5% loss and reordering, and are drawn at 60 Hz a
// tenth of a second in the past.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "client/clock_sync.hpp"
#include "client/interpolation.hpp"
#include "lossy_link.hpp"
#include "protocol/quantize.hpp"

using zone::client::ClockSync;
using zone::client::EntitySample;
using zone::client::InterpolationBuffer;

namespace {

constexpr double kRate = 20.0;
constexpr double kRadius = 10.0;
constexpr double kSpeed = 5.0;  // m/s along the circle

// Where the entity truly is at server time `s` seconds.
void truth(double s, double& x, double& y) {
  const double a = kSpeed * s / kRadius;
  x = kRadius * std::cos(a);
  y = kRadius * std::sin(a);
}

EntitySample at_tick(std::uint32_t tick, std::uint8_t teleports = 0) {
  double x = 0, y = 0;
  truth(tick / kRate, x, y);
  // As a frame holds it: whole centimetres.
  return {tick, zone::protocol::quantize_position(x) * 0.01,
          zone::protocol::quantize_position(y) * 0.01, 0.0, teleports};
}

}  // namespace

TEST_CASE(
    "interpolation: an entity drawn 100 ms in the past stays on its path and moves smoothly "
    "through 5% loss and reordering") {
  zone::test::LossyLink<EntitySample> link({0.05, 20, 80}, 7);
  InterpolationBuffer buffer;
  ClockSync clock(kRate);
  // The server's clock runs 1,000 s ahead of the client's.
  constexpr double kServerAhead = 1000.0;
  constexpr double kDelay = 0.1;
  std::vector<EntitySample> arrived;
  double worst_error = 0.0, worst_step_excess = 0.0, last_render = -1.0;
  double px = 0, py = 0;
  bool have_previous = false;
  std::uint64_t drawn = 0, went_back = 0;
  for (std::int64_t ms = 0; ms <= 60'000; ++ms) {
    const double local = static_cast<double>(ms) / 1000.0;
    const double server_time = local + kServerAhead;
    // The server sends a frame every tick (server time multiples of 50 ms).
    if (ms % 50 == 0)
      link.send(ms, at_tick(static_cast<std::uint32_t>(std::lround(server_time * kRate))));
    link.receive(ms, arrived);
    for (const EntitySample& s : arrived) {
      clock.on_frame(s.tick, local);
      buffer.push(s);
    }
    if (ms % 16 != 0 || !clock.synced()) continue;  // about 60 frames a second
    clock.update(local);
    const double render = clock.server_tick(local) - kDelay * kRate;
    if (render < last_render) ++went_back;
    last_render = render;
    EntitySample e;
    REQUIRE(buffer.sample(render, e));
    buffer.drop_before(render);
    if (ms < 3'000) continue;  // the clock settles
    ++drawn;
    double tx = 0, ty = 0;
    truth(render / kRate, tx, ty);
    worst_error = std::max(worst_error, std::hypot(e.x - tx, e.y - ty));
    if (have_previous) {
      // No faster than the entity moves (a render tick may run up to 5% fast while the
      // clock slews), and a centimetre of rounding.
      const double step = std::hypot(e.x - px, e.y - py);
      worst_step_excess = std::max(worst_step_excess, step - kSpeed * 0.016 * 1.06);
    }
    px = e.x;
    py = e.y;
    have_previous = true;
  }
  MESSAGE("drawn ", drawn, " times; worst distance from the path ", worst_error * 100.0,
          " cm; worst step beyond the speed ", worst_step_excess * 100.0, " cm; ", link.lost(),
          " lost, ", link.reordered(), " reordered");
  CHECK(link.lost() > 30);
  CHECK(link.reordered() > 0);
  CHECK(went_back == 0);
  // On the path: chords of a 10 m circle over a tick or two, and the centimetres.
  CHECK(worst_error < 0.03);
  CHECK(worst_step_excess < 0.02);
}

TEST_CASE("interpolation: the clock estimates the newest tick that can have arrived") {
  zone::test::LossyLink<std::uint32_t> link({0.05, 20, 80}, 5);
  ClockSync clock(kRate);
  std::vector<std::uint32_t> arrived;
  double worst = 0.0;
  for (std::int64_t ms = 0; ms <= 20'000; ++ms) {
    const double local = static_cast<double>(ms) / 1000.0;
    if (ms % 50 == 0) link.send(ms, static_cast<std::uint32_t>(500 + ms / 50));
    link.receive(ms, arrived);
    for (const std::uint32_t tick : arrived) clock.on_frame(tick, local);
    clock.update(local);
    if (ms < 5'000) continue;
    // The server's tick at `local` is 500 + local * 20; the fastest frames come 20 ms late.
    const double fastest = 500.0 + (local - 0.020) * kRate;
    worst = std::max(worst, std::abs(clock.server_tick(local) - fastest));
  }
  MESSAGE("worst error ", worst, " ticks");
  CHECK(worst < 0.5);  // within 25 ms of the least delayed arrival
}

TEST_CASE("interpolation: no path is drawn across a teleport") {
  InterpolationBuffer b;
  b.push({10, 0.0, 0.0, 0.0, 0});
  b.push({11, 0.3, 0.0, 0.0, 0});
  b.push({12, 50.0, 50.0, 0.0, 1});  // teleported
  EntitySample e;
  REQUIRE(b.sample(10.5, e));
  CHECK(e.x == doctest::Approx(0.15));
  REQUIRE(b.sample(11.9, e));
  CHECK(e.x == doctest::Approx(0.3));  // still at the old place
  REQUIRE(b.sample(12.0, e));
  CHECK(e.x == doctest::Approx(50.0));
  // Past the newest sample after a teleport: held, not extrapolated from the jump.
  REQUIRE(b.sample(13.0, e));
  CHECK(e.x == doctest::Approx(50.0));
}

TEST_CASE("interpolation: samples are kept in tick order, duplicates and stale ones dropped") {
  InterpolationBuffer b;
  CHECK(b.push({5, 5.0, 0.0, 0.0, 0}));
  CHECK(b.push({3, 3.0, 0.0, 0.0, 0}));  // late, put in its place
  CHECK(b.push({4, 4.0, 0.0, 0.0, 0}));
  CHECK_FALSE(b.push({4, 9.0, 0.0, 0.0, 0}));  // a duplicate
  EntitySample e;
  REQUIRE(b.sample(3.5, e));
  CHECK(e.x == doctest::Approx(3.5));
  // Past the newest: carried on along the last segment for at most two ticks.
  REQUIRE(b.sample(6.0, e));
  CHECK(e.x == doctest::Approx(6.0));
  REQUIRE(b.sample(20.0, e));
  CHECK(e.x == doctest::Approx(7.0));
  for (std::uint32_t t = 6; t < 6 + InterpolationBuffer::kCapacity; ++t)
    b.push({t, 1.0 * t, 0, 0, 0});
  CHECK(b.size() == InterpolationBuffer::kCapacity);
  CHECK_FALSE(b.push({1, 1.0, 0.0, 0.0, 0}));  // older than everything kept, and full
  b.drop_before(20.5);
  CHECK(b.oldest().tick == 20);
  CHECK(zone::client::lerp_heading(3.0, -3.0, 0.5) ==
        doctest::Approx(std::numbers::pi).epsilon(0.01));
}
