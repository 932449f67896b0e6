// The server's clock as a client sees it: which server tick is "now", from the ticks of
// the frames that arrive and the local times they arrive at.
//
// Each arrival gives a sample of (server time - local time), late by the one-way delay
// and its jitter. The least delayed recent sample is the best one (a packet can arrive
// late, never early), so the estimate follows the largest offset of a sliding window,
// and moves towards it at a bounded rate so that rendering never jumps or runs backwards.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace zone::client {

class ClockSync {
 public:
  // Samples the window keeps: about three seconds at 20 Hz.
  static constexpr std::size_t kWindow = 64;

  explicit ClockSync(double tick_rate = 20.0) { reset(tick_rate); }
  // Starts again (a Welcome): a new zone counts its own ticks at its own rate.
  void reset(double tick_rate);
  // A frame of `tick` arrived at local time `local_seconds` (any monotonic clock).
  void on_frame(std::uint32_t tick, double local_seconds);
  // Advances the estimate's slew to `local_seconds`; call once per rendered frame.
  void update(double local_seconds);
  bool synced() const { return samples_ > 0; }
  // The newest server tick (fractional) a frame can have arrived of by `local_seconds`.
  double server_tick(double local_seconds) const { return (local_seconds + offset_) * tick_rate_; }
  double offset_seconds() const { return offset_; }
  double tick_rate() const { return tick_rate_; }
  // Seconds per second the estimate moves by at most once synced (a quarter of the
  // clock's drift catches up within a second or so; rendering sees at most this speed-up).
  static constexpr double kMaxSlew = 0.05;

 private:
  double window_max() const;
  double tick_rate_ = 20.0;
  std::array<double, kWindow> window_{};
  std::size_t next_ = 0;
  std::size_t samples_ = 0;
  double offset_ = 0.0;       // the estimate in use (server seconds - local seconds)
  double last_update_ = 0.0;  // local time of the last update()
};

}  // namespace zone::client
