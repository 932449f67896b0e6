// GridAoi's pair tests: running the ones due this tick (filed in wheel_, a TestWheel), and
// applying the view changes they find.

#include "aoi/grid_aoi.hpp"

#include "aoi/grid_aoi_internal.hpp"
#include "aoi/simd.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace zone::aoi {
namespace {

// A tick's pair tests name random slots: their records are fetched this many tests ahead.
constexpr std::uint32_t kTestAhead = 8;

}  // namespace

// Runs pair tests in the order given. Enters and leaves are put into and taken out of
// the views afterwards (apply_enters, apply_leaves), where their cache misses can overlap;
// each entered pair's next test is filed then.
template <typename Sink>
void GridAoi::run_tests(const PairTest* tests, std::uint32_t count, Sink& sink) {
  const double h = config_.hysteresis;
  const double eps2 = 2.0 * eps_;  // the gaps' rounding allowances (see ticks_for_gap)
  const double eps3 = 3.0 * eps_;
  const double inv_two_step = inv_two_step_;
  const auto life = static_cast<double>(life_);
  const std::uint32_t life_ticks = life_;
  const Hot* const hot = hot_.data();
  const std::uint32_t first = now_ + 1;
  // A visible pair found beyond r + h: its leave (both ways for a mutual pair), the view
  // removal to apply after the tests.
  auto leave_pair = [&](std::uint32_t a, std::uint32_t b, std::uint16_t view_index, bool mutual) {
    sink.emit(a, b, EventKind::kLeave);
    sink.leave({a, b, view_index});
    if (mutual) {
      sink.emit(b, a, EventKind::kLeave);
      sink.visible(-1);
    }
  };
  // One test, whatever it finds (the vector kernel below takes the routine ones).
  auto test_one = [&](std::uint32_t k) {
    if (k + kTestAhead < count) {
      const PairTest& ahead = tests[k + kTestAhead];
      __builtin_prefetch(&hot[ahead.observer]);
      __builtin_prefetch(&hot[ahead.target & ~kVisibleBit]);
    }
    PairTest test = tests[k];
    const std::uint32_t a = test.observer;
    const std::uint32_t b = test.target & ~kVisibleBit;
    const Hot& ha = hot[a];
    const Hot& hb = hot[b];
    if (test.observer_version != ha.observer_version || test.target_version != hb.target_version) {
      return;
    }
    const bool visible = (test.target & kVisibleBit) != 0;
    if (hb.flags & kRemoved) {  // only for visible pairs (see notify_departure, grid_lists.cpp)
      sink.emit(a, b, EventKind::kLeave);
      sink.leave({a, b, test.view_index});
      return;
    }
    // A mutual pair is decided by the lower slot's list, for both directions. A test the
    // other way round was filed by a's list before a joined b's class (try_join, grid_classes.cpp),
    // when a still decided its own direction: b's list covers the pair now.
    const bool mutual = classmates(ha.mutual_class, hb.mutual_class);
    if (mutual && b < a) return;
    // A crowd's pair: the test was filed before both joined the crowd, whose tier decides
    // the pair now (grid_crowds.cpp).
    if (crowd_mates(ha.mutual_class, hb.mutual_class)) return;
    const double r = ha.radius;
    const double outer = r + h;
    const double dx = hb.pos.x - ha.pos.x;
    const double dy = hb.pos.y - ha.pos.y;
    const double d2 = dx * dx + dy * dy;
    const double d = std::sqrt(d2);
    const std::uint32_t expiry = ha.base_tick + life_ticks;
    double gap;
    if (visible) {
      if (d2 > outer * outer) {
        leave_pair(a, b, test.view_index, mutual);
        test.target = b;  // now hidden
        gap = d - r - eps3;
      } else {
        gap = outer - d - eps2;
      }
    } else if (d2 <= r * r) {
      // Put into the views after the tests (apply_enters), with the pair's next test.
      sink.emit(a, b, EventKind::kEnter);
      if (mutual) sink.emit(b, a, EventKind::kEnter);
      const std::uint32_t wake = first + ticks_for_gap(outer - d - eps2, inv_two_step, life);
      sink.enter({a, b, test.observer_version, test.target_version, mutual,
                  static_cast<std::int32_t>(wake - expiry) < 0, wake});
      return;
    } else {
      gap = d - r - eps3;
    }
    const std::uint32_t wake = first + ticks_for_gap(gap, inv_two_step, life);
    if (static_cast<std::int32_t>(wake - expiry) < 0) {
      sink.file(wake, test);  // the same pair, versions and view index
    }
  };
  // Tests whose versions are current, whose target is not removed and that this list
  // decides: the kernel decides those four at a time (the same arithmetic), the event if any
  // and the bucket of the pair's next test, and marks every other test, which test_one() runs
  // in its place, in order, as it does the last tests of the chunk (fewer than four).
  static_assert(sizeof(PairTest) == 12 && offsetof(PairTest, target) == 4 &&
                offsetof(PairTest, observer_version) == 8 &&
                offsetof(PairTest, target_version) == 9);
  // (The rest of the records' layout the kernel reads is asserted in grid_cells.cpp.)
  static_assert(offsetof(Hot, base_tick) == 24 && offsetof(Hot, observer_version) == 29);
  const simd::PairTests batch{.records = hot,
                              .tests = tests,
                              .h = h,
                              .eps2 = eps2,
                              .eps3 = eps3,
                              .inv_two_step = inv_two_step,
                              .life = life,
                              .life_ticks = life_ticks,
                              .first = first,
                              .mask = wheel_.mask(),
                              .removed_flag = kRemoved};
  // An enter or a leave the kernel found: what test_one() does with it, the pair's next test
  // (the bucket, or none) already decided.
  auto apply_event = [&](std::uint32_t k, std::uint32_t code) {
    PairTest test = tests[k];
    const std::uint32_t a = test.observer;
    const std::uint32_t b = test.target & ~kVisibleBit;
    const bool mutual = classmates(hot[a].mutual_class, hot[b].mutual_class);
    const bool next = (code & simd::kDropBit) == 0;
    const std::uint32_t bucket = code & simd::kBucketBits;
    if (code & simd::kLeaveBit) {
      leave_pair(a, b, test.view_index, mutual);
      test.target = b;  // now hidden
      if (next) sink.file_in(bucket, test);
    } else {
      sink.emit(a, b, EventKind::kEnter);
      if (mutual) sink.emit(b, a, EventKind::kEnter);
      // A scheduled wake is less than a wheel's turn after `first`: its bucket names it.
      const std::uint32_t wake = first + ((bucket - first) & wheel_.mask());
      sink.enter({a, b, test.observer_version, test.target_version, mutual, next, wake});
    }
  };
  std::uint32_t codes[TestWheel::kChunkTests];  // a run never holds more than one chunk
  const std::uint32_t done = simd::pair_tests(batch, 0, count, codes);
  for (std::uint32_t k = 0; k < done; ++k) {
    const std::uint32_t code = codes[k];
    if (code == simd::kScalarTest) {
      test_one(k);
    } else if (code & (simd::kLeaveBit | simd::kEnterBit)) {
      apply_event(k, code);
    } else if (!(code & simd::kDropBit)) {
      sink.file_in(code, tests[k]);
    }
  }
  for (std::uint32_t k = done; k < count; ++k) test_one(k);
}

// Runs this tick's scheduled pair tests, in the order they were filed: chunk by chunk, each
// chunk a piece of its own when there are workers. Then applies the views' changes.
void GridAoi::run_due_tests() {
  TestWheel::Bucket& bucket = wheel_.due(now_);
  leaves_.clear();
  enters_.clear();
  // The bucket does not grow while it runs: every new test is due later.
  const auto chunks = static_cast<std::uint32_t>(bucket.chunks.size());
  auto run_chunk = [&](std::uint32_t c, auto& sink) {
    const std::span<const PairTest> tests = bucket.chunk(c);
    run_tests(tests.data(), static_cast<std::uint32_t>(tests.size()), sink);
  };
  if (!parallel_ || chunks < kMinPieces) {
    DirectSink sink(*this);
    for (std::uint32_t c = 0; c < chunks; ++c) {
      run_chunk(c, sink);
      // Done with this chunk: the tests filed from here on may reuse it.
      wheel_.recycle(bucket.chunks[c]);
    }
    wheel_.forget(bucket);
  } else {
    if (pieces_.size() < chunks) pieces_.resize(chunks);
    parallel_(chunks, [&](std::uint32_t c, std::uint32_t) {
      Piece& piece = pieces_[c];
      piece.clear();
      PieceSink sink(*this, piece);
      run_chunk(c, sink);
    });
    // (No test is due in this bucket again: the merge files none into it.)
    wheel_.release(bucket);
    for (std::uint32_t c = 0; c < chunks; ++c) merge(pieces_[c]);
  }
  // Leaves first: their hints name places before this tick's appends, and the appends'
  // places (the hints of the entered pairs' next tests) then stay exact.
  apply_leaves();
  apply_enters();
}

// Puts this tick's enters into the views and files their next tests. Each one appends to
// a random view: fetch the view headers and then their ends a few enters ahead.
void GridAoi::apply_enters() {
  const std::size_t n = enters_.size();
  constexpr std::size_t kAhead = 8;
  for (std::size_t k = 0; k < n; ++k) {
    if (k + 2 * kAhead < n) {
      const Enter& e = enters_[k + 2 * kAhead];
      __builtin_prefetch(&view_[e.observer]);
    }
    if (k + kAhead < n) {
      const Enter& e = enters_[k + kAhead];
      const std::vector<std::uint32_t>& v = view_[e.observer];
      __builtin_prefetch(v.data() + v.size(), 1);
    }
    const Enter& e = enters_[k];
    std::vector<std::uint32_t>& v = view_[e.observer];
    const auto index = static_cast<std::uint32_t>(v.size());
    v.push_back(e.target);  // (a mutual pair: e.observer is the lower slot, its view holds it)
    visible_pairs_ += e.mutual ? 2 : 1;
    if (e.schedule) {
      schedule(e.wake, {e.observer, e.target, e.observer_version, e.target_version, 0}, index);
    }
  }
}

// Takes this tick's leaves out of the views. Each removal touches a random view: fetch the
// view headers and then the entries a few removals ahead.
void GridAoi::apply_leaves() {
  const std::size_t n = leaves_.size();
  constexpr std::size_t kAhead = 8;
  for (std::size_t k = 0; k < n; ++k) {
    if (k + 2 * kAhead < n) __builtin_prefetch(&view_[leaves_[k + 2 * kAhead].observer]);
    if (k + kAhead < n) {
      const Leave& l = leaves_[k + kAhead];
      const std::vector<std::uint32_t>& v = view_[l.observer];
      if (l.hint < v.size()) {
        __builtin_prefetch(v.data() + l.hint);
      } else {  // searched from the start: fetch its first 1 KiB (measured best of 256 B - 4 KiB)
        for (std::size_t i = 0; i < 256 && i < v.size(); i += 16) __builtin_prefetch(v.data() + i);
      }
      __builtin_prefetch(v.data() + v.size() - 1);
    }
    remove_from_view(leaves_[k].observer, leaves_[k].target, leaves_[k].hint);
  }
  visible_pairs_ -= n;
}

// Removes b from a's view (for apply_leaves, and for try_join in grid_classes.cpp); `hint`
// is where it was last seen (kept exact unless another member was moved into its place
// since).
void GridAoi::remove_from_view(std::uint32_t a, std::uint32_t b, std::uint32_t hint) {
  std::vector<std::uint32_t>& v = view_[a];
  const std::uint32_t i = hint < v.size() && v[hint] == b ? hint : find_slot(v, b);
  if (i == kNotVisible) return;  // not there (cannot happen while the views are consistent)
  v[i] = v.back();
  v.pop_back();
}

}  // namespace zone::aoi
