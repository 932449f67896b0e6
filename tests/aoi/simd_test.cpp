// The AOI's vector kernels against the plain definitions in simd.hpp, on whichever
// instruction set this machine runs (kernel_name()).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "aoi/simd.hpp"

namespace {

using zone::aoi::simd::CellPass;

// Whether the kernels in use are the vector ones (the baselines leave every entry and every
// test to their callers).
bool vector_kernels() {
  return std::string(zone::aoi::simd::kernel_name()) == "avx2";
}

// The 32-byte record the cell pass reads (the layout simd.hpp documents).
struct Record {
  double x = 0.0;
  double y = 0.0;
  double radius = 0.0;
  std::uint32_t base_tick = 0;
  std::uint8_t flags = 0;
  std::uint8_t observer_version = 0;
  std::uint8_t target_version = 0;
  std::uint8_t mutual_class = 0;
};
static_assert(sizeof(Record) == 32);

constexpr std::uint8_t kSpecial = 4 | 64;
constexpr std::uint8_t kObserverFlag = 2;

// The cell pass's state: records by slot, and the order arrays.
struct Pass {
  std::vector<Record> records;
  std::vector<std::uint32_t> slots;
  std::vector<std::uint32_t> keys;
  std::vector<double> xs;
  std::vector<double> ys;
  std::vector<std::uint8_t> versions;
  std::vector<std::uint8_t> classes;
  double step2 = 0.25 * 0.25;
  double min_x = -100.0;
  double min_y = -50.0;
  double inv_cell = 1.0 / 16.0;
  std::uint32_t cols = 12;
  std::uint32_t rows = 9;

  CellPass view() {
    return {.records = records.data(),
            .slots = slots.data(),
            .keys = keys.data(),
            .xs = xs.data(),
            .ys = ys.data(),
            .versions = versions.data(),
            .classes = classes.data(),
            .step2 = step2,
            .min_x = min_x,
            .min_y = min_y,
            .inv_cell = inv_cell,
            .cols = cols,
            .rows = rows,
            .special_flags = kSpecial,
            .observer_flag = kObserverFlag};
  }
  static std::uint32_t index(double v, double min, double inv_cell, std::uint32_t count) {
    const double f = (v - min) * inv_cell;
    if (!(f > 0.0)) return 0;
    if (f >= static_cast<double>(count)) return count - 1;
    return static_cast<std::uint32_t>(f);
  }
  std::uint32_t key_of(const Record& r) const {
    return index(r.y, min_y, inv_cell, rows) * cols + index(r.x, min_x, inv_cell, cols);
  }
  bool routine(std::uint32_t i) const {
    const Record& r = records[slots[i]];
    const double dx = r.x - xs[i];
    const double dy = r.y - ys[i];
    return (r.flags & kSpecial) == 0 && !(dx * dx + dy * dy > step2) && key_of(r) == keys[i];
  }
};

// n entities in a 192 x 144 m grid (and up to 40 m beyond it), listed in a shuffled
// order; each has moved since its listed position by up to `step`, with about one in
// `odd` given something the kernel must leave alone (a special flag, a jump, another cell).
Pass make_pass(std::uint32_t n, std::uint32_t odd, std::mt19937& rng) {
  Pass p;
  std::uniform_real_distribution<double> ux(p.min_x - 40.0, p.min_x + 192.0 + 40.0);
  std::uniform_real_distribution<double> uy(p.min_y - 40.0, p.min_y + 144.0 + 40.0);
  std::uniform_real_distribution<double> turn(0.0, 6.283185307179586);
  std::uniform_real_distribution<double> length(0.0, 0.25);
  p.records.resize(n);
  for (std::uint32_t s = 0; s < n; ++s) p.slots.push_back(s);
  std::shuffle(p.slots.begin(), p.slots.end(), rng);
  for (std::uint32_t i = 0; i < n; ++i) {
    Record& r = p.records[p.slots[i]];
    const double x0 = ux(rng);
    const double y0 = uy(rng);
    const double a = turn(rng);
    const double len = length(rng);
    r.x = x0 + std::cos(a) * len;
    r.y = y0 + std::sin(a) * len;
    r.radius = static_cast<double>(rng() % 100) + 0.5;
    r.base_tick = static_cast<std::uint32_t>(rng());
    r.flags = static_cast<std::uint8_t>(1 | (rng() % 2 ? kObserverFlag : 0));
    r.observer_version = static_cast<std::uint8_t>(rng());
    r.target_version = static_cast<std::uint8_t>(rng());
    r.mutual_class = static_cast<std::uint8_t>(rng());
    p.xs.push_back(x0);
    p.ys.push_back(y0);
    p.keys.push_back(p.key_of(r));
    if (odd != 0 && rng() % odd == 0) {
      switch (rng() % 4) {
        case 0:
          r.flags |= 4;  // removed
          break;
        case 1:
          r.flags |= 64;  // reclassed
          break;
        case 2:
          r.x += 0.3;  // a jump
          break;
        default:
          p.keys.back() += 1;  // listed under another cell
          break;
      }
    }
  }
  p.versions.assign(n, 0xEE);
  p.classes.assign(n, 0xEE);
  return p;
}

// Runs the kernel from `begin` and checks it against the definition: the entries before
// the returned index are all routine, taken in whole groups of 4, and refreshed; the group
// at the returned index (if any) holds an entry that is not; nothing else was written.
// Returns the index.
std::uint32_t check_run(Pass& p, std::uint32_t begin, double& max_radius) {
  const Pass before = p;
  const double max_before = max_radius;
  const CellPass view = p.view();
  const auto n = static_cast<std::uint32_t>(p.slots.size());
  const std::uint32_t stop = zone::aoi::simd::cell_pass(view, begin, n, max_radius);
  REQUIRE(stop >= begin);
  REQUIRE(stop <= n);
  CHECK((stop - begin) % 4 == 0);
  double expected_max = max_before;
  for (std::uint32_t i = begin; i < n; ++i) {
    const Record& r = p.records[p.slots[i]];
    if (i < stop) {
      CHECK(before.routine(i));
      CHECK(p.xs[i] == r.x);
      CHECK(p.ys[i] == r.y);
      CHECK(p.versions[i] == r.target_version);
      CHECK(p.classes[i] == r.mutual_class);
      if (r.flags & kObserverFlag) expected_max = std::max(expected_max, r.radius);
    } else {
      CHECK(p.xs[i] == before.xs[i]);
      CHECK(p.ys[i] == before.ys[i]);
      CHECK(p.versions[i] == before.versions[i]);
      CHECK(p.classes[i] == before.classes[i]);
    }
  }
  CHECK(max_radius == expected_max);
  if (vector_kernels()) {
    // The vector version stops only where it must: at a group of 4 with an entry that is
    // not routine, or at a tail shorter than a group.
    if (stop + 4 <= n) {
      bool any = false;
      for (std::uint32_t i = stop; i < stop + 4; ++i) any = any || !before.routine(i);
      CHECK(any);
    }
  } else {
    CHECK(stop == begin);
  }
  return stop;
}

}  // namespace

TEST_CASE("cell pass kernel: refreshes routine entries, stops at the first group with another") {
  std::mt19937 rng(7);
  for (const std::uint32_t odd : {0u, 40u, 7u, 2u}) {
    CAPTURE(odd);
    Pass p = make_pass(1003, odd, rng);
    double max_radius = 3.0;
    // As GridAoi::maintain_cells drives it: the group it stops at is handled entry by
    // entry (here: refreshed by hand), then the kernel goes on.
    std::uint32_t i = 0;
    std::uint32_t calls = 0;
    while (i < p.slots.size()) {
      i = check_run(p, i, max_radius);
      ++calls;
      const auto stop = std::min<std::uint32_t>(i + 4, static_cast<std::uint32_t>(p.slots.size()));
      for (; i < stop; ++i) {
        const Record& r = p.records[p.slots[i]];
        p.xs[i] = r.x;
        p.ys[i] = r.y;
      }
    }
    if (vector_kernels() && odd == 0) {
      CHECK(calls == 1);  // every group routine: one call does them all but the tail
    }
  }
}

TEST_CASE("cell pass kernel: clamps positions outside the grid into its border cells") {
  std::mt19937 rng(11);
  Pass p = make_pass(64, 0, rng);
  // Far outside on every side, and exactly on the grid's edges.
  const double xs[] = {-1.0e7, 1.0e7, p.min_x, p.min_x + 192.0, p.min_x + 191.999};
  const double ys[] = {-1.0e7, 1.0e7, p.min_y, p.min_y + 144.0, p.min_y + 143.999};
  for (std::uint32_t i = 0; i < 25; ++i) {
    Record& r = p.records[p.slots[i]];
    r.x = xs[i % 5];
    r.y = ys[i / 5];
    p.xs[i] = r.x;
    p.ys[i] = r.y;
    p.keys[i] = p.key_of(r);
  }
  double max_radius = 0.0;
  const std::uint32_t stop = check_run(p, 0, max_radius);
  if (vector_kernels()) CHECK(stop == 64);
  // And one entry listed under the wrong border cell stops the kernel at its group.
  p.keys[13] = p.keys[13] == 0 ? 1 : 0;
  max_radius = 0.0;
  const std::uint32_t again = check_run(p, 0, max_radius);
  if (vector_kernels()) CHECK(again == 12);
}

namespace {

using zone::aoi::simd::PairTests;

// A scheduled pair test as the pair-test kernel reads it (the layout simd.hpp documents).
struct Test {
  std::uint32_t observer = 0;
  std::uint32_t target = 0;  // bit 31: visible
  std::uint8_t observer_version = 0;
  std::uint8_t target_version = 0;
  std::uint16_t view_index = 0;
};
static_assert(sizeof(Test) == 12);

constexpr std::uint8_t kRemovedFlag = 4;

struct TestBatch {
  std::vector<Record> records;
  std::vector<Test> tests;
  double h = 2.0;
  double eps2 = 2e-9;
  double eps3 = 3e-9;
  double inv_two_step = 2.0;  // a bound of 0.25 m
  double life = 32.0;
  std::uint32_t life_ticks = 32;
  std::uint32_t first = 0;
  std::uint32_t mask = 63;

  PairTests view() const {
    return {.records = records.data(),
            .tests = tests.data(),
            .h = h,
            .eps2 = eps2,
            .eps3 = eps3,
            .inv_two_step = inv_two_step,
            .life = life,
            .life_ticks = life_ticks,
            .first = first,
            .mask = mask,
            .removed_flag = kRemovedFlag};
  }
  // What the kernel must write for test k (simd.hpp's definition).
  std::uint32_t expected(std::uint32_t k) const {
    const Test& t = tests[k];
    const std::uint32_t b = t.target & 0x7FFFFFFFu;
    const Record& ra = records[t.observer];
    const Record& rb = records[b];
    const bool visible = (t.target & 0x80000000u) != 0;
    if (t.observer_version != ra.observer_version || t.target_version != rb.target_version ||
        (rb.flags & kRemovedFlag) ||
        ((ra.mutual_class & 0x7F) != 0 && ((ra.mutual_class ^ rb.mutual_class) & 0x7F) == 0 &&
         b < t.observer)) {
      return zone::aoi::simd::kScalarTest;
    }
    if ((ra.mutual_class & 0x80) != 0 && ra.mutual_class == rb.mutual_class) {
      return zone::aoi::simd::kDropBit;  // a crowd's pair
    }
    const double r = ra.radius;
    const double outer = r + h;
    const double dx = rb.x - ra.x;
    const double dy = rb.y - ra.y;
    const double d2 = dx * dx + dy * dy;
    const bool event = visible ? d2 > outer * outer : d2 <= r * r;
    const bool after = visible != event;  // visible after the test
    const double d = std::sqrt(d2);
    const double gap = after ? outer - d - eps2 : d - r - eps3;
    const auto ticks =
        static_cast<std::uint32_t>(std::min(std::max(gap, 0.0) * inv_two_step, life));
    const std::uint32_t wake = first + ticks;
    std::uint32_t code = wake & mask;
    if (static_cast<std::int32_t>(wake - (ra.base_tick + life_ticks)) >= 0) {
      code |= zone::aoi::simd::kDropBit;
    }
    if (event) code |= visible ? zone::aoi::simd::kLeaveBit : zone::aoi::simd::kEnterBit;
    return code;
  }
};

// n entities within 100 m of each other, of two radii and three classes, with lists of
// various ages, and m tests between them: most routine (visible and hidden pairs at every
// distance from their thresholds, some of them to be dropped), about one in `odd` stale,
// naming a removed target, decided by the target's list or making an event.
TestBatch make_batch(std::uint32_t n, std::uint32_t m, std::uint32_t odd, std::uint32_t first,
                     std::mt19937& rng) {
  TestBatch batch;
  batch.first = first;
  std::uniform_real_distribution<double> u(0.0, 100.0);
  batch.records.resize(n);
  for (Record& r : batch.records) {
    r.x = u(rng);
    r.y = u(rng);
    r.radius = rng() % 2 ? 30.0 : 20.0;
    r.base_tick = first - 1 - static_cast<std::uint32_t>(rng() % 32);
    r.flags = 1 | 2;
    r.observer_version = static_cast<std::uint8_t>(rng());
    r.target_version = static_cast<std::uint8_t>(rng());
    // Class 1 or 2 (or none), in its crowd (bit 7) one time in three.
    r.mutual_class = static_cast<std::uint8_t>(rng() % 3);
    if (r.mutual_class != 0 && (&r - batch.records.data()) % 3 == 0) r.mutual_class |= 0x80;
  }
  while (batch.tests.size() < m) {
    const auto a = static_cast<std::uint32_t>(rng() % n);
    const auto b = static_cast<std::uint32_t>(rng() % n);
    if (a == b) continue;
    Record& ra = batch.records[a];
    const Record& rb = batch.records[b];
    const double dx = rb.x - ra.x;
    const double dy = rb.y - ra.y;
    const double d2 = dx * dx + dy * dy;
    const double outer = ra.radius + batch.h;
    // The state the pair would be in: visible within r + h, hidden beyond r (either in
    // between), so that the test is routine unless made otherwise below.
    bool visible = d2 <= ra.radius * ra.radius ? true : d2 > outer * outer ? false : rng() % 2;
    Test t{a, b, ra.observer_version, rb.target_version, static_cast<std::uint16_t>(rng())};
    const bool theirs = ((ra.mutual_class & 0x7F) != 0 &&
                         ((ra.mutual_class ^ rb.mutual_class) & 0x7F) == 0 && b < a) ||
                        ((ra.mutual_class & 0x80) != 0 && ra.mutual_class == rb.mutual_class);
    if (theirs && odd == 0) continue;
    if (odd != 0 && rng() % odd == 0) {
      switch (rng() % 4) {
        case 0:
          t.observer_version = static_cast<std::uint8_t>(t.observer_version + 1);
          break;
        case 1:
          t.target_version = static_cast<std::uint8_t>(t.target_version + 1);
          break;
        case 2:
          visible = !visible;  // an event, unless the pair is in the hysteresis band
          break;
        default:
          batch.records[b].flags |= kRemovedFlag;
          break;
      }
    }
    if (visible) t.target |= 0x80000000u;
    batch.tests.push_back(t);
  }
  return batch;
}

// How many of the tests the kernel decided were routine, and of those how many it dropped,
// and how many entered or left.
struct Outcomes {
  std::uint32_t routine = 0;
  std::uint32_t dropped = 0;
  std::uint32_t enters = 0;
  std::uint32_t leaves = 0;
  std::uint32_t crowd = 0;  // tests of a crowd's pair (left over)
};

// Runs the kernel over every test and checks each code it wrote against the definition.
Outcomes check_batch(const TestBatch& batch) {
  const auto m = static_cast<std::uint32_t>(batch.tests.size());
  std::vector<std::uint32_t> codes(m, 0xABCDABCDu);
  const PairTests view = batch.view();
  const std::uint32_t done = zone::aoi::simd::pair_tests(view, 0, m, codes.data());
  if (vector_kernels()) {
    CHECK(done == m - m % 4);
  } else {
    CHECK(done == 0);
  }
  using zone::aoi::simd::kDropBit;
  using zone::aoi::simd::kEnterBit;
  using zone::aoi::simd::kLeaveBit;
  std::uint32_t routine = 0;
  std::uint32_t dropped = 0;
  std::uint32_t enters = 0;
  std::uint32_t leaves = 0;
  std::uint32_t crowd = 0;
  for (std::uint32_t k = 0; k < done; ++k) {
    CAPTURE(k);
    const std::uint32_t want = batch.expected(k);
    CHECK(codes[k] == want);
    const std::uint8_t ca = batch.records[batch.tests[k].observer].mutual_class;
    const std::uint8_t cb = batch.records[batch.tests[k].target & 0x7FFFFFFFu].mutual_class;
    crowd += (ca & 0x80) != 0 && ca == cb ? 1 : 0;
    if (want == zone::aoi::simd::kScalarTest) continue;
    ++routine;
    dropped += (want & kDropBit) != 0 ? 1 : 0;
    enters += (want & kEnterBit) != 0 ? 1 : 0;
    leaves += (want & kLeaveBit) != 0 ? 1 : 0;
  }
  for (std::uint32_t k = done; k < m; ++k) CHECK(codes[k] == 0xABCDABCDu);
  return {routine, dropped, enters, leaves, crowd};
}

}  // namespace

TEST_CASE(
    "pair test kernel: the event and the next test's bucket for routine tests, the others "
    "left over") {
  std::mt19937 rng(3);
  for (const std::uint32_t odd : {0u, 50u, 5u, 2u}) {
    CAPTURE(odd);
    const Outcomes o = check_batch(make_batch(200, 2047, odd, 1000, rng));
    if (!vector_kernels()) continue;
    // The cases were all there.
    CHECK(o.routine > 2047 / 16);
    CHECK(o.dropped > 0);
    CHECK(o.routine > o.dropped);
    if (odd == 0) {
      CHECK(o.enters + o.leaves == 0);  // every pair in the state its distance allows
    } else {
      CHECK(o.enters > 0);
      CHECK(o.leaves > 0);
      CHECK(o.crowd > 0);
    }
  }
}

TEST_CASE("pair test kernel: ticks and expiries compared across the 32-bit wrap") {
  std::mt19937 rng(5);
  for (const std::uint32_t first : {0xFFFFFFF0u, 0u, 5u}) {
    CAPTURE(first);
    const Outcomes o = check_batch(make_batch(100, 1001, 20, first, rng));
    if (!vector_kernels()) continue;
    CHECK(o.routine > 1001 / 16);
    CHECK(o.dropped > 0);
    CHECK(o.routine > o.dropped);
    CHECK(o.enters + o.leaves > 0);
  }
}

TEST_CASE("column kernel: a bit of each row, as the bits of one word") {
  std::mt19937_64 rng(11);
  std::vector<std::uint64_t> rows(68);  // 64 rows, and room to read past the last
  for (const std::uint32_t n : {1u, 3u, 4u, 5u, 37u, 63u, 64u}) {
    for (const std::uint32_t bit : {0u, 17u, 63u}) {
      CAPTURE(n);
      CAPTURE(bit);
      for (std::uint64_t& r : rows) r = rng();
      std::uint64_t want = 0;
      for (std::uint32_t r = 0; r < n; ++r) want |= (rows[r] >> bit & 1u) << r;
      CHECK(zone::aoi::simd::column_bits(rows.data(), n, bit) == want);
    }
  }
}
