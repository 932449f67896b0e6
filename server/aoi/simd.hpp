// The AOI's vector kernels, with a runtime choice of instruction set.
//
// The binary is built for baseline x86-64 (no -march=native needed): every kernel has a
// baseline version (SSE2 intrinsics or plain C++), and an AVX2 version compiled for that
// target alone and chosen once, at start-up, when the CPU has AVX2
// (__builtin_cpu_supports). Other architectures get plain C++. All versions return
// exactly the same results, except that the cell pass's baseline leaves every entry to its
// caller (which then does the same work entry by entry).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace zone::aoi::simd {

// Index of the first v in p[0, n), or n when absent.
std::uint32_t find_u32(const std::uint32_t* p, std::uint32_t n, std::uint32_t v);

// Indices j in [begin, end) with (xs[j] - cx)^2 + (ys[j] - cy)^2 <= r2, computed exactly
// so in double (no fused multiply-add), and tags[j] != skip (tags may be null: no tags),
// appended to out in ascending order; returns how many. May write up to 8 entries past the
// last one it returns.
std::uint32_t filter_disc(const double* xs, const double* ys, const std::uint8_t* tags,
                          std::uint8_t skip, std::uint32_t begin, std::uint32_t end, double cx,
                          double cy, double r2, std::uint32_t* out);

// The common case of the AOI's cell pass (GridAoi::maintain_cells) over order positions
// [begin, end). The entity at order position i has slot slots[i] and a 32-byte record at
// records + 32 * slots[i]: x, y and radius (doubles) at bytes 0, 8 and 16, flags at byte
// 28, target version at 30, class at 31. An entry is routine when its flags have none of
// `special_flags`, its squared step from (xs[i], ys[i]) is <= step2 (separate multiplies
// and adds), and its cell ((v - min) * inv_cell clamped to [0, count - 1], truncated;
// row * cols + column) is keys[i]. For a routine entry the pass copies the position into
// xs[i], ys[i], the target version into versions[i] and the class into classes[i], and
// raises max_radius to the radius if the flags have `observer_flag`. It goes in groups of
// 4 and stops at the first group (or tail of fewer than 4) that holds an entry that is
// not routine, returning its first index (end when there is none): the caller handles
// that group entry by entry and calls again. The baseline version processes nothing.
struct CellPass {
  const void* records;
  const std::uint32_t* slots;
  const std::uint32_t* keys;
  double* xs;
  double* ys;
  std::uint8_t* versions;
  std::uint8_t* classes;
  double step2;
  double min_x;
  double min_y;
  double inv_cell;
  std::uint32_t cols;
  std::uint32_t rows;
  std::uint8_t special_flags;
  std::uint8_t observer_flag;
};
std::uint32_t cell_pass(const CellPass& pass, std::uint32_t begin, std::uint32_t end,
                        double& max_radius);

// The common case of the AOI's scheduled pair tests (GridAoi::run_tests) over tests
// [begin, end) of `tests`, 12-byte records: observer slot and target slot (u32; bit 31 of
// the target: the pair is visible), observer version and target version (u8), view index
// (u16). Records are the entities' 32-byte records, as for the cell pass (base tick u32
// at byte 24, observer version at 29). A test is routine when both versions match the
// records', the target's flags have none of `removed_flag`, and the pair is not one the
// target's list decides (both in one mutual class, a class other than 0, and the target
// the lower slot; the records' class bytes, byte 31, hold the class in bits 0-6). For a
// routine test of a crowd's pair (both class bytes equal, with the crowd bit 7 set) the
// kernel writes kDropBit alone: nothing to do. For any other routine test it writes to
// codes[k]: the wheel bucket of the pair's next test, (first + t) & mask with
// t = trunc(min(max(gap, 0) * inv_two_step, life)) and gap = (r + h - d) - eps2 when the pair
// is visible after the test, (d - r) - eps3 when hidden (r the observer's radius, d^2 with
// separate multiplies and adds); plus kDropBit when first + t does not come before the
// list's expiry (base tick + life_ticks, compared modulo 2^32); plus kLeaveBit when the pair
// was visible and d^2 > (r + h)^2 (it is hidden after the test), or kEnterBit when it was
// hidden and d^2 <= r^2 (visible after). For any other test it writes kScalarTest: the
// caller runs that one itself. It goes in groups of 4 and returns where the tail of fewer
// than 4 begins, left to the caller too; the baseline version processes nothing (returns
// begin).
struct PairTests {
  const void* records;
  const void* tests;
  double h;
  double eps2;
  double eps3;
  double inv_two_step;
  double life;
  std::uint32_t life_ticks;
  std::uint32_t first;
  std::uint32_t mask;
  std::uint8_t removed_flag;
};
constexpr std::uint32_t kBucketBits = 0x1FFFFFFFu;
constexpr std::uint32_t kEnterBit = 1u << 29;
constexpr std::uint32_t kLeaveBit = 1u << 30;
constexpr std::uint32_t kDropBit = 1u << 31;
constexpr std::uint32_t kScalarTest = 0xFFFFFFFFu;  // (an enter and a leave at once: no code)
std::uint32_t pair_tests(const PairTests& batch, std::uint32_t begin, std::uint32_t end,
                         std::uint32_t* codes);

// The crowd tier's member-pair test (CrowdTier, crowd_tier.hpp) for one pair of cells: the
// first cell's members are lanes i < count of ax, ay (padded with far lanes to `lanes`, a
// multiple of 8), the second's rows j < rows of bx, by. With dx = ax[i] - (bx[j] + sx),
// dy = ay[i] - (by[j] + sy) and d2 = dx * dx + dy * dy in float (separate multiplies and
// adds), E and S are the lanes with d2 <= enter2 and with d2 <= stay2; the pair's current
// bit is bit i % 64 of old[j * words + i / 64]. For every row and word the kernel forms
// change = ((E & ~old) | (old & ~S)) & valid, valid being the lanes below count (and, with
// `self`, below j), and for each non-zero change appends {j * words + i / 64, change} to
// out, rows ascending, words ascending; returns how many. With far_rows set, far rows are
// left out: a row with no bit of old set whose point (px, py) = (bx[j] + sx, by[j] + sy) is
// beyond enter2 from the square [0, extent]^2 that holds the first cell's members (qx * qx +
// qy * qy > enter2 in float, qx = max(max(-px, px - extent), 0), qy alike): none of its pairs
// can enter. With near_rows set, near rows are not tested: a row whose point is within
// inner2 of every point of the square (fx * fx + fy * fy <= inner2, fx = max(px, extent - px),
// fy alike) has all its pairs within r (the caller's inner2 allows for the rounding), so its
// change is valid & ~old (they all enter). (The caller sets far_rows and near_rows for the
// cell pairs that can have such rows.) bx, by and, with one word per row, old are read up to
// the next multiple of 8 rows (padding: far points, rows of 0). Every version gives the
// same.
struct CrowdPass {
  const float* ax;
  const float* ay;
  std::uint32_t count;
  std::uint32_t lanes;
  const float* bx;
  const float* by;
  std::uint32_t rows;
  std::uint32_t words;  // at least ceil(count / 64)
  const std::uint64_t* old;
  float sx;
  float sy;
  float enter2;
  float stay2;
  float extent;
  float inner2;
  bool far_rows;
  bool near_rows;
  bool self;
};
// Whether row j of a crowd pass is a far row with its point (px, py) (see CrowdPass).
inline bool crowd_far_row(const CrowdPass& p, float px, float py) {
  const float qx = std::max(std::max(-px, px - p.extent), 0.0f);
  const float qy = std::max(std::max(-py, py - p.extent), 0.0f);
  const float qx2 = qx * qx;  // (no contraction into a multiply-add)
  const float qy2 = qy * qy;
  return qx2 + qy2 > p.enter2;
}
// Whether row j of a crowd pass is a near row with its point (px, py) (see CrowdPass).
inline bool crowd_near_row(const CrowdPass& p, float px, float py) {
  const float fx = std::max(px, p.extent - px);
  const float fy = std::max(py, p.extent - py);
  const float fx2 = fx * fx;  // (no contraction into a multiply-add)
  const float fy2 = fy * fy;
  return fx2 + fy2 <= p.inner2;
}
struct CrowdChange {
  std::uint32_t word;  // j * words + i / 64
  std::uint64_t bits;
};
std::uint32_t crowd_pass(const CrowdPass& pass, CrowdChange* out);
// The lanes of word w that stand for members: bits of the first `count` lanes, and of those
// only the ones below `below` (a row's own index within one cell; count otherwise).
inline std::uint64_t crowd_valid_lanes(std::uint32_t count, std::uint32_t below, std::uint32_t w) {
  const std::uint32_t end = below < count ? below : count;
  if (end <= 64 * w) return 0;
  return end - 64 * w >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (end - 64 * w)) - 1;
}
// Every version of the crowd pass this CPU runs (scalar, avx2), for tests; the one
// crowd_pass() uses is the last.
struct CrowdPassVersion {
  const char* name;
  std::uint32_t (*run)(const CrowdPass& pass, CrowdChange* out);
};
std::vector<CrowdPassVersion> crowd_pass_versions();

// Bit `bit` of rows[r] for r < n (n <= 64, one word per row) as bit r of the result: a
// column of a crowd tier's bit matrix. May read rows up to n rounded up to 4.
std::uint64_t column_bits(const std::uint64_t* rows, std::uint32_t n, std::uint32_t bit);

// Name of the kernels in use: "avx2", "sse2" or "scalar".
const char* kernel_name();

}  // namespace zone::aoi::simd
