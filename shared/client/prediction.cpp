#include "client/prediction.hpp"

#include <algorithm>
#include <cmath>

namespace zone::client {

void Predictor::reset(const PredictorConfig& config, double x, double y,
                      std::uint32_t first_sequence) {
  config_ = config;
  first_seq_ = std::max<std::uint32_t>(first_sequence, 1);
  last_seq_ = first_seq_ - 1;
  px_ = x;
  py_ = y;
  step(last_seq_) = {last_seq_, {}, x, y};
  ox_ = oy_ = 0.0;
  since_correction_ = 0.0;
  lead_ = 0;
  lead_known_ = false;
  prev_tick_ = 0;
  teleports_ = 0;
  have_frame_ = false;
}

void Predictor::move(double& x, double& y, motion::Velocity v) const {
  motion::integrate(x, y, v, 1.0 / config_.tick_rate);
  // A player is stopped by the world's edge (the server's keep_inside for a player that
  // has no neighbour to cross into).
  motion::clamp_axis(x, config_.min_x, config_.max_x);
  motion::clamp_axis(y, config_.min_y, config_.max_y);
}

void Predictor::apply_input(std::uint32_t sequence, float move_x, float move_y) {
  if (sequence <= last_seq_) return;
  // Sequences never sent (a caller that skipped some) hold the previous intent, as the
  // server does for an input it never got.
  const motion::Velocity previous = step(last_seq_).v;
  while (last_seq_ + 1 < sequence) {
    ++last_seq_;
    move(px_, py_, previous);
    step(last_seq_) = {last_seq_, previous, px_, py_};
  }
  const motion::Velocity v = motion::player_velocity(move_x, move_y, config_.max_speed);
  move(px_, py_, v);
  last_seq_ = sequence;
  step(sequence) = {sequence, v, px_, py_};
}

bool Predictor::holds(std::uint32_t seq) const {
  if (seq + 1 < first_seq_ || seq > last_seq_ || last_seq_ - seq >= kHistory) return false;
  return history_[seq % kHistory].sequence == seq;
}

bool Predictor::agrees(std::uint32_t seq, double x, double y, double half) const {
  const Step& s = history_[seq % kHistory];
  return std::abs(s.x - x) <= half && std::abs(s.y - y) <= half;
}

Correction Predictor::reconcile(std::uint32_t tick, std::uint32_t last_input_sequence, double x,
                                double y, double unit_metres, std::uint8_t teleports) {
  Correction c;
  if (have_frame_ && tick <= prev_tick_) return c;  // the replica only moves forward
  const bool teleported = have_frame_ && teleports != teleports_;
  teleports_ = teleports;
  prev_tick_ = tick;
  have_frame_ = true;
  // The frame holds the position to half a unit: the server's own lies in that cell.
  const double half = unit_metres * 0.5 + 1e-6;

  std::uint32_t at = first_seq_ - 1;  // before the first input: where the player started
  if (!lead_known_ && last_input_sequence >= first_seq_ && tick >= last_input_sequence) {
    lead_ = tick - last_input_sequence;
    lead_known_ = true;
  }
  if (lead_known_) {
    if (tick < lead_ + first_seq_ - 1) return c;  // before the first input counted
    at = std::min(tick - lead_, last_seq_);
    if (!holds(at)) return c;  // older than the inputs remembered
    // The pacing slipped by a tick: the frame is the prediction one input off.
    if (!teleported && !agrees(at, x, y, half)) {
      if (lead_ > 0 && at < last_seq_ && holds(at + 1) && agrees(at + 1, x, y, half)) {
        --lead_;
        return c;
      }
      if (at >= first_seq_ && holds(at - 1) && agrees(at - 1, x, y, half)) {
        ++lead_;
        return c;
      }
    }
  }

  // The frame names the input whose intent the server used at this tick: when it is not
  // the one the prediction assumed (a late, lost or early input), the tick is replayed
  // with it, so that only what the frame cannot explain is left to correct.
  bool rescheduled = false;
  if (lead_known_ && at >= first_seq_ && last_input_sequence >= first_seq_ &&
      last_input_sequence != at && holds(last_input_sequence) && holds(at - 1)) {
    rescheduled = true;
    Step& used = step(at);
    used.v = step(last_input_sequence).v;
    double rx = step(at - 1).x, ry = step(at - 1).y;
    move(rx, ry, used.v);
    used.x = rx;
    used.y = ry;
  }

  Step& s = step(at);
  double cx = std::clamp(s.x, x - half, x + half);
  double cy = std::clamp(s.y, y - half, y + half);
  if (teleported) {
    cx = x;
    cy = y;
  }
  if (cx == s.x && cy == s.y && !rescheduled) return c;

  const double was_x = px_, was_y = py_;
  s.x = px_ = cx;
  s.y = py_ = cy;
  for (std::uint32_t m = at + 1; m <= last_seq_ && m > at; ++m) {
    Step& later = step(m);
    move(px_, py_, later.v);
    later.x = px_;
    later.y = py_;
  }
  c.dx = px_ - was_x;
  c.dy = py_ - was_y;
  c.corrected = c.dx != 0.0 || c.dy != 0.0;
  if (!c.corrected) return c;
  c.snapped = teleported || std::hypot(c.dx, c.dy) > config_.snap_metres;
  if (c.snapped) {
    ox_ = oy_ = 0.0;
  } else {
    // Drawn where it was: the offset takes the correction and shrinks from there.
    ox_ = offset_x() - c.dx;
    oy_ = offset_y() - c.dy;
  }
  since_correction_ = 0.0;
  return c;
}

void Predictor::advance_display(double seconds) {
  since_correction_ += std::max(0.0, seconds);
}

double Predictor::blend() const {
  if (config_.correction_seconds <= 0.0) return 0.0;
  return std::max(0.0, 1.0 - since_correction_ / config_.correction_seconds);
}

}  // namespace zone::client
