// Prediction of the client's own player, and its reconciliation with the server.
//
// The client moves its player at once by the inputs it sends, with the server's own
// movement rule (shared/motion), instead of waiting a round trip to see it move. The
// predicted position of each tick is kept. When a frame arrives, its own position is
// compared with the prediction for that frame's tick: if the prediction rounds to the
// frame's value (the frame holds the position to half its unit) and agrees with what
// earlier frames said, nothing changes; otherwise the prediction is moved the least
// distance that makes it agree and the ticks after it are replayed from there.
//
// The prediction is kept per server tick: the server moves the player every tick with
// the newest input that has arrived (a lost or late input leaves the previous intent for
// that tick, an early one is used a tick sooner), and each frame names that input
// (last_input_sequence). So every tick a frame arrived for is replayed with the intent
// the server really used, and only the ticks whose frames were lost are guesses. Ticks
// not seen yet use the input sent `lead` ticks before (the median delay from sending an
// input to the tick that first uses it, learnt from the frames), and keep that guess
// until a frame names the input really used; the prediction reaches the tick the newest
// input will be used at.
//
// The displayed position is the prediction plus an offset that hides each correction and
// shrinks to nothing within `correction_seconds`; a correction longer than `snap_metres`,
// or a teleport, is shown at once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "motion/player_motion.hpp"

namespace zone::client {

struct PredictorConfig {
  double max_speed = 7.0;  // m/s: the player's top speed (players.max_speed)
  double tick_rate = 20.0;
  double min_x = -1e9, min_y = -1e9, max_x = 1e9, max_y = 1e9;  // the world (Welcome)
  double correction_seconds = 0.25;  // a correction is blended out within this
  double snap_metres = 4.0;          // longer corrections are shown at once
};

struct Correction {
  bool corrected = false;  // the prediction disagreed with the frame
  bool snapped = false;    // shown at once (a teleport, or longer than snap_metres)
  double dx = 0.0;         // how far the predicted position moved (metres)
  double dy = 0.0;
};

class Predictor {
 public:
  // Ticks (and inputs) remembered: 12.8 s at 20 Hz; a frame older than that rebases.
  static constexpr std::uint32_t kHistory = 256;
  static constexpr std::size_t kLeadSamples = 15;

  // Starts again (a Welcome, a transfer) from the player's position in the frame of
  // `tick`, with `first_sequence` the next input to be sent.
  void reset(const PredictorConfig& config, std::uint32_t tick, double x, double y,
             std::uint32_t first_sequence = 1);
  // The input of `sequence` (one per tick, consecutive) was sent: the prediction reaches
  // one tick further.
  void apply_input(std::uint32_t sequence, float move_x, float move_y);
  // The own state of the frame of `tick`: the server had applied inputs up to
  // `last_input_sequence`, the player stood at (x, y) metres, read from a position of
  // `unit_metres` units, and had teleported `teleports` times (move_state >> 2).
  Correction reconcile(std::uint32_t tick, std::uint32_t last_input_sequence, double x, double y,
                       double unit_metres, std::uint8_t teleports);
  // Lets `seconds` of display time pass (the correction offset shrinks).
  void advance_display(double seconds);

  // Where to draw the player.
  double x() const { return px_ + offset_x(); }
  double y() const { return py_ + offset_y(); }
  // Where the server will have the player once it applied the newest input.
  double predicted_x() const { return px_; }
  double predicted_y() const { return py_; }
  double offset_x() const { return ox_ * blend(); }
  double offset_y() const { return oy_ * blend(); }
  // Ticks from an input's sequence number to the tick the server first uses it at.
  std::uint32_t lead() const { return lead_; }
  // The tick whose position predicted_x/y() is.
  std::uint32_t horizon() const { return horizon_; }
  std::uint32_t last_sequence() const { return last_seq_; }

 private:
  struct Tick {
    std::uint32_t tick = 0;
    bool known = false;       // a frame of this tick named the input the server used
    std::uint32_t input = 0;  // the input whose intent it uses (known, or guessed)
    motion::Velocity v;
    double x = 0.0, y = 0.0;  // after this tick
  };
  // An interval of the server's exact position less the prediction, on one axis.
  struct Range {
    double lo = -1e300, hi = 1e300;
  };
  static Range narrow(Range known, double lo, double hi);
  // Widens what is known by what the ticks between two frames, whose own frames were
  // lost, may have done differently from the guess.
  void widen_for_unseen(std::uint32_t from_tick, std::uint32_t from_seq, std::uint32_t to_tick,
                        std::uint32_t to_seq);
  // More inputs than this between two frames: the known range starts again.
  static constexpr std::uint32_t kMaxUnseenInputs = 64;
  static double nearest_to_zero(Range r);
  Tick& slot(std::uint32_t tick) { return ticks_[tick % kHistory]; }
  bool holds(std::uint32_t tick) const;
  motion::Velocity velocity_of(std::uint32_t sequence) const;
  // The input the server will most likely use at `tick` (no frame of it yet).
  std::uint32_t expected(std::uint32_t tick) const;
  void move(double& x, double& y, motion::Velocity v) const;
  // Recomputes the ticks after `from` up to the horizon.
  void replay(std::uint32_t from);
  void learn_lead(std::uint32_t tick, std::uint32_t seq);
  double blend() const;

  PredictorConfig config_;
  std::array<Tick, kHistory> ticks_{};
  std::array<motion::Velocity, kHistory> inputs_{};  // by sequence
  std::uint32_t first_seq_ = 1;
  std::uint32_t last_seq_ = 0;  // newest input sent; first_seq_ - 1: none
  std::uint32_t base_ = 0;      // the oldest tick held
  std::uint32_t horizon_ = 0;   // the newest tick predicted
  std::uint32_t newest_frame_ = 0;
  std::uint32_t newest_frame_seq_ = 0;  // what it said the server had applied
  double px_ = 0.0, py_ = 0.0;
  double ox_ = 0.0, oy_ = 0.0;  // display offset when the last correction was made
  double since_correction_ = 0.0;
  std::array<std::uint32_t, kLeadSamples> lead_samples_{};
  std::size_t lead_count_ = 0, lead_next_ = 0;
  std::uint32_t lead_ = 1;
  std::uint8_t teleports_ = 0;
  Range err_x_, err_y_;  // what the frames said, relative to the prediction
};

}  // namespace zone::client
