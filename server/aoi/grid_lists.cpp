// GridAoi's candidate lists: each observer's targets within r + skin, rebuilt from the
// broad phase every few ticks, and the tests that teleports and arrivals need in between.

#include "aoi/grid_aoi.hpp"

#include "aoi/grid_aoi_internal.hpp"
#include "aoi/simd.hpp"

#include <algorithm>
#include <cmath>

namespace zone::aoi {
namespace {

// With workers, a tick's list rebuilds are cut into pieces of this many lists (a phase of
// fewer than kMinPieces pieces runs on the calling thread).
constexpr std::uint32_t kListsPerPiece = 64;

// Spreads the expiry ticks of lists built together (at start-up, after a settings change).
std::uint32_t stagger(std::uint32_t slot, std::uint32_t life) {
  return ((slot * 2654435761u) >> 8) % life;
}

}  // namespace

std::uint32_t GridAoi::Scratch::next_epoch() {
  if (epoch >= 0xFFFFFFF0u) {  // wrap: forget every old mark
    std::fill(stamp.begin(), stamp.end(), 0u);
    epoch = 0;
  }
  epoch += 2;
  return epoch;
}

bool GridAoi::list_is_current(std::uint32_t a) const {
  const std::uint8_t f = hot_[a].flags;
  return (f & (kAlive | kObserver | kRemoved | kRebuild)) == (kAlive | kObserver) &&
         now_ - hot_[a].base_tick < life_;
}

// Whether the pair of observer a with the entity b that just moved (or arrived) is
// decided by b's list: a mutual pair with b the lower slot. b's list is rebuilt this tick
// (b teleported or is new), so a needs no test of the pair.
bool GridAoi::decided_by(std::uint32_t b, std::uint32_t a) const {
  return classmates(hot_[b].mutual_class, hot_[a].mutual_class) && b < a;
}

// Entity b left its position of the last update (removed or teleported); its version has
// been bumped, so every scheduled test naming it is stale. The observers that see it lie
// within reach of that position (within r + h at the last update, and they moved at most
// the bound since): each gets a test of the pair this tick. Hidden pairs need nothing here:
// if b arrived near an observer, notify_arrival() finds it.
void GridAoi::notify_departure(const Departure& d) {
  const double two_step = inv_two_step_ > 0.0 ? 1.0 / inv_two_step_ : 0.0;
  const double reach = max_radius_ + config_.hysteresis + two_step;
  const double r = reach + sched_eps(reach);
  const double r2 = r * r;
  for_each_span(d.from, r, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end; ++j) {
      const double dx = ord_x_[j] - d.from.x;
      const double dy = ord_y_[j] - d.from.y;
      if (dx * dx + dy * dy > r2) continue;
      const std::uint32_t a = ord_slot_[j];
      if (a == d.slot || !list_is_current(a) || decided_by(d.slot, a) || crowd_pair(a, d.slot)) {
        continue;
      }
      // (A mutual pair that a decides is held by a's view.)
      const std::uint32_t i = find_slot(view_[a], d.slot);
      if (i != kNotVisible) schedule(now_, a, d.slot, i);
    }
  });
}

// Entity b is new or arrived from afar. Every current list that could need it before it
// expires (the observer is within r + skin) gets a test of the pair this tick.
void GridAoi::notify_arrival(const Departure& arrival) {
  const std::uint32_t b = arrival.slot;
  const Vec2 p = hot_[b].pos;
  // A pair can have been visible only if the observer is near where b was (within its
  // r + h at the last update, and it moved at most the bound since): no view to search
  // for the others (nor for a new entity, which has no last position: NaN).
  const Vec2 from = arrival.from;
  const double reach = max_radius_ + skin_;
  const double r = reach + sched_eps(reach);
  const double r2 = r * r;
  for_each_span(p, r, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end; ++j) {
      const double fx = ord_x_[j] - p.x;
      const double fy = ord_y_[j] - p.y;
      if (fx * fx + fy * fy > r2) continue;
      const std::uint32_t a = ord_slot_[j];
      if (a == b || !list_is_current(a) || decided_by(b, a) || crowd_pair(a, b)) continue;
      const double dx = p.x - ord_x_[j];
      const double dy = p.y - ord_y_[j];
      const double need = hot_[a].radius + skin_;
      const double need_r = need + sched_eps(need);
      if (dx * dx + dy * dy > need_r * need_r) continue;
      // A visible pair already has its test from notify_departure().
      const double ox = ord_x_[j] - from.x;
      const double oy = ord_y_[j] - from.y;
      const double was = hot_[a].radius + config_.hysteresis + step_check_;
      const double was_r = was + sched_eps(was);
      const bool near_before = ox * ox + oy * oy <= was_r * was_r;
      if (!near_before || find_slot(view_[a], b) == kNotVisible) {
        schedule(now_, a, b, kNotVisible);
      }
    }
  });
}

// Marks the members of b's view with a fresh stamp, returned.
std::uint32_t GridAoi::mark_view(std::uint32_t b, Scratch& scratch) const {
  const std::uint32_t mark = scratch.next_epoch();
  for (const std::uint32_t t : view_[b]) scratch.stamp[t] = mark;
  return mark;
}

// The candidates of a crowd's member (class byte cls) within reach of c, as rebuild_list
// collects them, less its crowd mates: the cells that hold only those (mark_crowd_cells) are
// skipped, the others filtered by class byte. (Out of line: the other lists' rebuilds stay
// as compact as they were.)
std::uint32_t GridAoi::crowd_member_candidates(Vec2 c, double reach, std::uint8_t cls,
                                               std::uint32_t* hits) const {
  std::uint32_t n = 0;
  const std::uint8_t* const crowd_cells = cell_crowd_.data();
  for_each_cell_run(c, reach, [&](std::uint32_t first, std::uint32_t last) {
    for (std::uint32_t j = first; j < last;) {
      if (crowd_cells[j] == cls) {
        ++j;
        continue;
      }
      std::uint32_t k = j + 1;
      while (k < last && crowd_cells[k] != cls) ++k;
      n += simd::filter_disc(ord_x_.data(), ord_y_.data(), ord_class_.data(), cls, cell_begin_[j],
                             cell_begin_[k], c.x, c.y, reach * reach, hits + n);
      j = k;
    }
  });
  return n;
}

// Rebuilds a's view and schedule from the grid: the view diff (enters, then leaves) and,
// for every pair that could change before the list expires, a test at the first tick it
// could. The list's life starts at base_tick (now, or earlier to stagger expiries).
template <typename Sink>
void GridAoi::rebuild_list(std::uint32_t a, std::uint32_t base_tick, Scratch& scratch, Sink& sink) {
  std::vector<std::uint32_t>& view = view_[a];
  hot_[a].base_tick = base_tick;
  // (At most life_ ticks ahead, so possibly this tick's slot, which has been emptied.)
  sink.expire((base_tick + life_) & wheel_.mask(), a);
  ++hot_[a].observer_version;  // every test scheduled by the old list is stale
  const std::uint32_t expiry = base_tick + life_;
  const std::uint32_t old_mark = mark_view(a, scratch);
  std::uint32_t* const stamp = scratch.stamp.data();
  const std::uint32_t kept_mark = old_mark + 1;

  const Vec2 c = hot_[a].pos;
  const double r = hot_[a].radius;
  const double outer = r + config_.hysteresis;
  const double r2 = r * r;
  const double outer2 = outer * outer;
  const double list_radius = r + skin_;
  const double eps = eps_;
  const double reach = list_radius + 4.0 * eps;

  // Filter over each contiguous span (the same double arithmetic as the decision below);
  // survivors are compacted into the scratch hits. A crowd's member leaves out its crowd
  // mates, whose class byte is its own (those pairs are the crowd's).
  const std::uint8_t cls = hot_[a].mutual_class;  // (with kCrowdBit for a crowd's member)
  std::uint32_t n = 0;
  std::uint32_t* hits = scratch.hits.data();
  if (cls & kCrowdBit) {
    n = crowd_member_candidates(c, reach, cls, hits);
  } else {
    for_each_span(c, reach, [&](std::uint32_t begin, std::uint32_t end) {
      n += simd::filter_disc(ord_x_.data(), ord_y_.data(), nullptr, 0, begin, end, c.x, c.y,
                             reach * reach, hits + n);
    });
  }

  // The new view, in scratch as long as the candidates (so no capacity checks).
  std::uint32_t* const fresh = scratch.view.data();
  std::uint32_t kept = 0;
  const std::uint32_t first = now_ + 1;
  const std::uint8_t version = hot_[a].observer_version;
  // Pairs that cannot change before the list expires need no test (and no square root):
  // visible ones within deep_r of the observer, hidden ones beyond far_r.
  const double span =  // how far the pair may move apart or together until the expiry
      inv_two_step_ > 0.0 ? static_cast<double>(expiry - first) / inv_two_step_ : 0.0;
  const double deep_r = outer - 2.0 * eps - span;
  const double deep_r2 = deep_r > 0.0 ? deep_r * deep_r : -1.0;
  const double far_r = r + 3.0 * eps + span;
  const double far_r2 = inv_two_step_ > 0.0 ? far_r * far_r : 0.0;
  // Locals for everything the loop reads: its stores (stamps, the view, the wheel) could
  // otherwise alias the members, which the compiler would then reload at every candidate.
  const std::uint32_t* const slots = ord_slot_.data();
  const std::uint8_t* const classes = ord_class_.data();
  const std::uint8_t* const versions = ord_version_.data();
  const double* const xs = ord_x_.data();
  const double* const ys = ord_y_.data();
  const double inv_two_step = inv_two_step_;
  const auto life = static_cast<double>(life_);
  const double eps2 = 2.0 * eps;  // the gaps' rounding allowances (see ticks_for_gap)
  const double eps3 = 3.0 * eps;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t j = hits[k];
    const std::uint32_t t = slots[j];
    if (t == a) continue;
    // A mutual pair is t's (the lower slot's) to decide, and t's view holds it.
    const bool mutual = classmates(cls, classes[j]);
    if (mutual && t < a) continue;
    const double dx = xs[j] - c.x;
    const double dy = ys[j] - c.y;
    const double d2 = dx * dx + dy * dy;
    bool visible = false;
    if (stamp[t] == old_mark) {
      if (d2 <= outer2) {
        stamp[t] = kept_mark;
        visible = true;
      }
    } else if (d2 <= r2) {
      sink.emit(a, t, EventKind::kEnter);
      if (mutual) {  // and t sees a
        sink.emit(t, a, EventKind::kEnter);
        sink.visible(1);
      }
      visible = true;
    }
    std::uint32_t index = kNotVisible;
    if (visible) {
      index = kept;
      fresh[kept++] = t;
      if (d2 < deep_r2) continue;
    } else if (d2 > far_r2) {
      continue;
    }
    const double d = std::sqrt(d2);
    const double gap = visible ? outer - d - eps2 : d - r - eps3;
    const std::uint32_t wake = first + ticks_for_gap(gap, inv_two_step, life);
    if (static_cast<std::int32_t>(wake - expiry) < 0) {
      sink.file(wake, encode({a, t, version, versions[j], 0}, index));
    }
  }
  // Old members still carrying the old mark are beyond r + h, or gone: they leave (both
  // ways for a mutual pair).
  for (const std::uint32_t t : view) {
    if (stamp[t] != old_mark) continue;
    sink.emit(a, t, EventKind::kLeave);
    if (classmates(cls, hot_[t].mutual_class)) {
      sink.emit(t, a, EventKind::kLeave);
      sink.visible(-1);
    }
  }
  sink.visible(static_cast<std::int64_t>(kept) - static_cast<std::int64_t>(view.size()));
  // Headroom for the enters to come: a view that must grow mid-tick costs an allocation and
  // a copy (at start-up that is every view at once).
  if (view.capacity() < kept) view.reserve(kept + kept / 4 + 4);
  view.assign(fresh, fresh + kept);
}

template <typename Sink>
void GridAoi::clear_view(std::uint32_t a, Sink& sink) {
  std::vector<std::uint32_t>& view = view_[a];
  for (const std::uint32_t t : view) sink.emit(a, t, EventKind::kLeave);
  sink.visible(-static_cast<std::int64_t>(view.size()));
  view.clear();
  ++hot_[a].observer_version;
}

// Rebuilds (or drops) the lists list_work_[begin, end) in order.
template <typename Sink>
void GridAoi::build_lists(std::uint32_t begin, std::uint32_t end, bool stale, Scratch& scratch,
                          Sink& sink) {
  for (std::uint32_t k = begin; k < end; ++k) {
    if (k + 2 < end) __builtin_prefetch(&view_[list_work_[k + 2]]);
    if (k + 1 < end) {
      const std::vector<std::uint32_t>& next = view_[list_work_[k + 1]];
      if (!next.empty()) __builtin_prefetch(next.data());
    }
    const std::uint32_t a = list_work_[k];
    const std::uint8_t f = hot_[a].flags;
    if ((f & (kObserver | kRemoved)) != kObserver) {
      clear_view(a, sink);
      hot_[a].flags = static_cast<std::uint8_t>(f & ~kListed);
    } else {
      const bool spread = stale || (f & kAdded);
      rebuild_list(a, spread ? now_ - stagger(a, life_) : now_, scratch, sink);
      hot_[a].flags = static_cast<std::uint8_t>((f & ~kRebuild) | kListed);
      if (f & kJoin) sink.join(a);
    }
  }
}

// This tick's list rebuilds, by ascending slot: in pieces of kListsPerPiece lists when there
// are workers (each writes only its own lists' views and records), merged in order.
void GridAoi::rebuild_lists(bool stale) {
  const auto work = static_cast<std::uint32_t>(list_work_.size());
  for (Scratch& s : scratch_) {
    if (s.stamp.size() < hot_.size()) s.stamp.resize(hot_.size(), 0);
    // + 8: the filter stores in blocks.
    if (s.hits.size() < ord_slot_.size() + 8) {
      s.hits.resize(ord_slot_.size() + 8);
      s.view.resize(ord_slot_.size() + 8);
    }
  }
  if (!parallel_ || work < kMinPieces * kListsPerPiece) {
    DirectSink sink(*this);
    build_lists(0, work, stale, scratch_[0], sink);
    return;
  }
  const std::uint32_t pieces = (work + kListsPerPiece - 1) / kListsPerPiece;
  if (pieces_.size() < pieces) pieces_.resize(pieces);
  parallel_(pieces, [&](std::uint32_t p, std::uint32_t worker) {
    Piece& piece = pieces_[p];
    piece.clear();
    PieceSink sink(*this, piece);
    build_lists(p * kListsPerPiece, std::min(work, (p + 1) * kListsPerPiece), stale,
                scratch_[worker], sink);
  });
  for (std::uint32_t p = 0; p < pieces; ++p) merge(pieces_[p]);
}

}  // namespace zone::aoi
