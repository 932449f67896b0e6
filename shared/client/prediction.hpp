// Prediction of the client's own player, and its reconciliation with the server.
//
// The client moves its player at once by the inputs it sends, with the server's own
// movement rule (shared/motion), instead of waiting a round trip to see it move. Each
// input's predicted position is kept. When a frame arrives, its own position is compared
// with the prediction for that frame's tick: if the prediction rounds to the frame's
// value (the frame holds the position to half its unit), nothing changes; otherwise the
// prediction is moved the least distance that makes it agree (into the frame's
// quantisation cell) and the inputs after it are replayed from there.
//
// Which tick each input counts for: the server moves the player every tick, with the
// newest input that has arrived (a lost or late one leaves the previous intent for that
// tick, an early one is used a tick sooner). So with one input sent per tick, the
// position at tick T is the prediction after input T - offset, whichever inputs the
// server happened to use, and a late, lost or early input only swaps one tick's intent
// for its neighbour's (nothing at all while the intent holds). The offset is first taken
// from the frame that shows the first input applied, and then kept, unless a frame agrees
// with the prediction one input earlier or later instead (the client's pacing slipped a
// tick against the server's: a stall, a clock drift), when it moves by one.
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
  // Inputs remembered: 12.8 s at 20 Hz; a frame older than that is not compared.
  static constexpr std::uint32_t kHistory = 256;

  // Starts again (a Welcome, a transfer) from the player's position, with no input sent.
  void reset(const PredictorConfig& config, double x, double y, std::uint32_t first_sequence = 1);
  // The input of `sequence` (one per tick, consecutive) was sent: the player moves one tick
  // with it.
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
  // Ticks from sending an input to the tick whose position it decides (the offset above,
  // less the sequence numbers' own start); 0 until known.
  std::uint32_t lead() const { return lead_; }
  std::uint32_t last_sequence() const { return last_seq_; }

 private:
  struct Step {
    std::uint32_t sequence = 0;
    motion::Velocity v;
    double x = 0.0, y = 0.0;  // after this input's tick
  };
  Step& step(std::uint32_t seq) { return history_[seq % kHistory]; }
  bool holds(std::uint32_t seq) const;
  // Whether the prediction after input `seq` lies in the frame's cell around (x, y).
  bool agrees(std::uint32_t seq, double x, double y, double half) const;
  void move(double& x, double& y, motion::Velocity v) const;
  double blend() const;

  PredictorConfig config_;
  std::array<Step, kHistory> history_{};
  std::uint32_t first_seq_ = 1;  // history_ holds first_seq_ - 1 (the start) onwards
  std::uint32_t last_seq_ = 0;   // newest input applied; first_seq_ - 1: none
  double px_ = 0.0, py_ = 0.0;
  double ox_ = 0.0, oy_ = 0.0;  // display offset when the last correction was made
  double since_correction_ = 0.0;
  // Tick T's position is the prediction after input T - lead_.
  std::uint32_t lead_ = 0;
  bool lead_known_ = false;
  std::uint32_t prev_tick_ = 0;
  std::uint8_t teleports_ = 0;
  bool have_frame_ = false;
};

}  // namespace zone::client
