#include "client/prediction.hpp"

#include <algorithm>
#include <cmath>

namespace zone::client {

void Predictor::reset(const PredictorConfig& config, std::uint32_t tick, double x, double y,
                      std::uint32_t first_sequence) {
  config_ = config;
  first_seq_ = std::max<std::uint32_t>(first_sequence, 1);
  last_seq_ = first_seq_ - 1;
  base_ = horizon_ = newest_frame_ = tick;
  newest_frame_seq_ = 0;
  slot(tick) = {tick, true, 0, {}, x, y};
  px_ = x;
  py_ = y;
  ox_ = oy_ = 0.0;
  since_correction_ = 0.0;
  lead_count_ = lead_next_ = 0;
  // A first guess until frames tell: the first input arrives a tick or two after the
  // frame that started the prediction. (Ticks and sequences count from unrelated starts.)
  lead_ = tick + 2 - first_seq_;
  teleports_ = 0;
  err_x_ = err_y_ = {};
}

void Predictor::move(double& x, double& y, motion::Velocity v) const {
  motion::integrate(x, y, v, 1.0 / config_.tick_rate);
  // A player is stopped by the world's edge (the server's keep_inside for a player that
  // has no neighbour to cross into).
  motion::clamp_axis(x, config_.min_x, config_.max_x);
  motion::clamp_axis(y, config_.min_y, config_.max_y);
}

bool Predictor::holds(std::uint32_t tick) const {
  return tick >= base_ && tick <= horizon_ && horizon_ - tick < kHistory &&
         ticks_[tick % kHistory].tick == tick;
}

motion::Velocity Predictor::velocity_of(std::uint32_t sequence) const {
  // Before the first input the player stands (a new session, or one just handed over).
  if (sequence < first_seq_ || sequence > last_seq_ || last_seq_ - sequence >= kHistory) return {};
  return inputs_[sequence % kHistory];
}

std::uint32_t Predictor::expected(std::uint32_t tick) const {
  std::int64_t n = static_cast<std::int64_t>(tick) - lead_;
  // Never an input older than one the server already used, nor one not sent yet.
  n = std::max<std::int64_t>(n, newest_frame_seq_);
  n = std::min<std::int64_t>(n, last_seq_);
  return static_cast<std::uint32_t>(std::max<std::int64_t>(n, 0));
}

void Predictor::replay(std::uint32_t from) {
  double x = slot(from).x, y = slot(from).y;
  for (std::uint32_t t = from + 1; t <= horizon_ && t > from; ++t) {
    Tick& k = slot(t);
    // A guess stays as it was made: a change of the lead estimate then shows tick by tick
    // as frames arrive, not as a jump of every tick ahead. Only a guess the server has
    // since passed (an input older than one a frame showed used) is made again.
    if (k.tick != t || (!k.known && k.input < newest_frame_seq_)) {
      const std::uint32_t n = expected(t);
      k = {t, false, n, velocity_of(n), 0.0, 0.0};
    }
    move(x, y, k.v);
    k.x = x;
    k.y = y;
  }
  px_ = x;
  py_ = y;
}

void Predictor::apply_input(std::uint32_t sequence, float move_x, float move_y) {
  if (sequence <= last_seq_) return;
  const motion::Velocity previous = velocity_of(last_seq_);
  // Sequences never sent (a caller that skipped some) hold the previous intent, as the
  // server does for an input it never got.
  while (last_seq_ + 1 < sequence) inputs_[++last_seq_ % kHistory] = previous;
  inputs_[sequence % kHistory] = motion::player_velocity(move_x, move_y, config_.max_speed);
  last_seq_ = sequence;
  // The prediction reaches the tick this input will be used at.
  const std::uint32_t to = std::max(horizon_, sequence + lead_);
  const std::uint32_t from = horizon_;
  horizon_ = to;
  if (horizon_ - base_ >= kHistory) base_ = horizon_ - kHistory + 1;
  replay(std::max(from, base_));
}

void Predictor::learn_lead(std::uint32_t tick, std::uint32_t seq) {
  // The frame right after another shows an input the previous one did not: that input
  // was first used at this tick.
  if (tick != newest_frame_ + 1 || seq <= newest_frame_seq_ || seq < first_seq_ || tick < seq)
    return;
  lead_samples_[lead_next_] = tick - seq;
  lead_next_ = (lead_next_ + 1) % kLeadSamples;
  lead_count_ = std::min(lead_count_ + 1, kLeadSamples);
  std::array<std::uint32_t, kLeadSamples> sorted = lead_samples_;
  const auto n = static_cast<std::ptrdiff_t>(lead_count_);
  std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.begin() + n);
  lead_ = sorted[static_cast<std::size_t>(n / 2)];
}

void Predictor::widen_for_unseen(std::uint32_t from_tick, std::uint32_t from_seq,
                                 std::uint32_t to_tick, std::uint32_t to_seq) {
  // Between two frames the server used inputs from the first's to the second's, in order;
  // for each tick without a frame, the prediction guessed one of them. What the server's
  // position may differ by is the sum, over those ticks, of the other choices.
  if (to_seq < from_seq || to_seq - from_seq > kMaxUnseenInputs) return;
  const double dt = 1.0 / config_.tick_rate;
  for (std::uint32_t t = from_tick + 1; t < to_tick && t > from_tick; ++t) {
    if (!holds(t) || slot(t).known) continue;
    const motion::Velocity guess = slot(t).v;
    double lo_x = 0.0, hi_x = 0.0, lo_y = 0.0, hi_y = 0.0;
    for (std::uint32_t n = from_seq; n <= to_seq; ++n) {
      const motion::Velocity v = velocity_of(n);
      lo_x = std::min(lo_x, (v.vx - guess.vx) * dt);
      hi_x = std::max(hi_x, (v.vx - guess.vx) * dt);
      lo_y = std::min(lo_y, (v.vy - guess.vy) * dt);
      hi_y = std::max(hi_y, (v.vy - guess.vy) * dt);
    }
    err_x_ = {err_x_.lo + lo_x, err_x_.hi + hi_x};
    err_y_ = {err_y_.lo + lo_y, err_y_.hi + hi_y};
  }
}

Predictor::Range Predictor::narrow(Range known, double lo, double hi) {
  const Range both{std::max(known.lo, lo), std::min(known.hi, hi)};
  // Nothing fits both: something the prediction cannot know (the intent of a tick whose
  // frame was lost, a collision) moved the server; from here only this frame counts.
  if (both.lo > both.hi) return {lo, hi};
  return both;
}

double Predictor::nearest_to_zero(Range r) {
  return std::clamp(0.0, r.lo, r.hi);
}

Correction Predictor::reconcile(std::uint32_t tick, std::uint32_t last_input_sequence, double x,
                                double y, double unit_metres, std::uint8_t teleports) {
  Correction c;
  if (tick <= newest_frame_) return c;  // the replica only moves forward
  learn_lead(tick, last_input_sequence);
  const bool teleported = teleports != teleports_;
  teleports_ = teleports;
  const std::uint32_t previous_frame = newest_frame_, previous_seq = newest_frame_seq_;
  newest_frame_ = tick;
  newest_frame_seq_ = std::max(newest_frame_seq_, last_input_sequence);

  const std::uint32_t old_horizon = horizon_;
  const double was_x = px_, was_y = py_;
  // The frame holds the position to half a unit: the server's own lies in that cell.
  const double half = unit_metres * 0.5 + 1e-6;
  // Until the server has used the first input, when it will is a guess; the first frame
  // that shows it used sets the timing, and the prediction starts again from that frame
  // (not a correction: nothing the server said was contradicted).
  const bool first_used = previous_seq < first_seq_ && last_input_sequence >= first_seq_;
  if (first_used && lead_count_ == 0 && tick >= last_input_sequence) {
    lead_ = tick - last_input_sequence;  // the best there is until a sample
  }
  if (first_used || tick > horizon_ || tick - base_ >= kHistory || !holds(tick - 1)) {
    // Beyond what was predicted, or older than what is kept: start from the frame.
    horizon_ = std::max(tick, last_seq_ + lead_);
    base_ = tick;
    slot(tick) = {tick, true, last_input_sequence, velocity_of(last_input_sequence), x, y};
    err_x_ = err_y_ = {-half, half};
    replay(tick);
  } else {
    // This tick again, with the intent the server used.
    Tick& k = slot(tick);
    const Tick& before = slot(tick - 1);
    k.known = true;
    k.input = last_input_sequence;
    k.v = velocity_of(last_input_sequence);
    k.x = before.x;
    k.y = before.y;
    move(k.x, k.y, k.v);
    // What the frames have said so far about the server's exact position, relative to
    // the prediction, narrowed by this frame's cell. The prediction moves only when it
    // falls outside that, and then the least distance back inside: frame after frame the
    // range shrinks well below a unit, and the rounding of one frame shows as nothing.
    widen_for_unseen(previous_frame, previous_seq, tick, last_input_sequence);
    Range nx = narrow(err_x_, x - half - k.x, x + half - k.x);
    Range ny = narrow(err_y_, y - half - k.y, y + half - k.y);
    double dx = nearest_to_zero(nx), dy = nearest_to_zero(ny);
    if (teleported) {
      dx = x - k.x;
      dy = y - k.y;
      nx = {dx - half, dx + half};  // only this frame counts
      ny = {dy - half, dy + half};
    }
    err_x_ = {nx.lo - dx, nx.hi - dx};
    err_y_ = {ny.lo - dy, ny.hi - dy};
    k.x += dx;
    k.y += dy;
    horizon_ = std::max(horizon_, last_seq_ + lead_);
    replay(tick);
  }
  if (horizon_ - base_ >= kHistory) base_ = horizon_ - kHistory + 1;
  // The correction: how far the prediction for the same tick moved. A change of the lead
  // only changes how far ahead the player is drawn, which the display offset hides too.
  double same_x = px_, same_y = py_;
  if (holds(old_horizon)) {
    same_x = slot(old_horizon).x;
    same_y = slot(old_horizon).y;
  }
  c.dx = same_x - was_x;
  c.dy = same_y - was_y;
  if (first_used) c.dx = c.dy = 0.0;
  c.corrected = c.dx != 0.0 || c.dy != 0.0;
  c.snapped = teleported || std::hypot(c.dx, c.dy) > config_.snap_metres;
  if (c.snapped) {
    ox_ = oy_ = 0.0;
    since_correction_ = 0.0;
  } else if (px_ != was_x || py_ != was_y) {
    // Drawn where it was: the offset takes the change and shrinks from there.
    ox_ = offset_x() - (px_ - was_x);
    oy_ = offset_y() - (py_ - was_y);
    since_correction_ = 0.0;
  }
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
