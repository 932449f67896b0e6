#include "aoi/simd.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ZONE_AOI_X86 1
#endif

namespace zone::aoi::simd {
namespace {

// ---- Portable versions (also the tails of the vector ones) ------------------------------

std::uint32_t find_scalar(const std::uint32_t* p, std::uint32_t n, std::uint32_t v) {
  for (std::uint32_t i = 0; i < n; ++i) {
    if (p[i] == v) return i;
  }
  return n;
}

std::uint32_t filter_scalar(const double* xs, const double* ys, const std::uint8_t* tags,
                            std::uint8_t skip, std::uint32_t begin, std::uint32_t end, double cx,
                            double cy, double r2, std::uint32_t* out) {
  std::uint32_t k = 0;
  for (std::uint32_t j = begin; j < end; ++j) {
    const double dx = xs[j] - cx;
    const double dy = ys[j] - cy;
    out[k] = j;
    k += dx * dx + dy * dy <= r2 && (tags == nullptr || tags[j] != skip) ? 1u : 0u;
  }
  return k;
}

std::uint64_t column_scalar(const std::uint64_t* rows, std::uint32_t n, std::uint32_t bit) {
  std::uint64_t bits = 0;
  for (std::uint32_t r = 0; r < n; ++r) bits |= (rows[r] >> bit & 1u) << r;
  return bits;
}

std::uint32_t cell_pass_none(const CellPass&, std::uint32_t begin, std::uint32_t, double&) {
  return begin;
}

std::uint32_t pair_tests_none(const PairTests&, std::uint32_t begin, std::uint32_t,
                              std::uint32_t*) {
  return begin;
}

#if ZONE_AOI_X86

// ---- SSE2 (every x86-64 CPU) --------------------------------------------------------------

std::uint32_t find_sse2(const std::uint32_t* p, std::uint32_t n, std::uint32_t v) {
  const __m128i x = _mm_set1_epi32(static_cast<int>(v));
  std::uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i a = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), x);
    const __m128i b =
        _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 4)), x);
    const auto m = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi32(a, b)));
    if (m) return i + static_cast<std::uint32_t>(__builtin_ctz(m)) / 2;
  }
  return i + find_scalar(p + i, n - i, v);
}

// ---- AVX2 (chosen at run time) -------------------------------------------------------------

__attribute__((target("avx2"))) std::uint32_t find_avx2(const std::uint32_t* p, std::uint32_t n,
                                                        std::uint32_t v) {
  const __m256i x = _mm256_set1_epi32(static_cast<int>(v));
  std::uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a =
        _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)), x);
    const __m256i b =
        _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)), x);
    const auto ma = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(a)));
    const auto mb = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(b)));
    const unsigned m = ma | (mb << 8);
    if (m) return i + static_cast<std::uint32_t>(__builtin_ctz(m));
  }
  return i + find_sse2(p + i, n - i, v);
}

// For each 8-bit lane mask, the lanes that are set, packed to the front: the permutation
// that compacts the survivors of 8 candidates.
struct CompactTable {
  alignas(32) std::uint32_t lanes[256][8];
  constexpr CompactTable() : lanes{} {
    for (unsigned m = 0; m < 256; ++m) {
      unsigned k = 0;
      for (unsigned b = 0; b < 8; ++b) {
        if (m & (1u << b)) lanes[m][k++] = b;
      }
    }
  }
};
constexpr CompactTable kCompact;

// (kTags: tags given.)
template <bool kTags>
__attribute__((target("avx2"))) std::uint32_t filter_avx2_of(
    const double* xs, const double* ys, const std::uint8_t* tags, std::uint8_t skip,
    std::uint32_t begin, std::uint32_t end, double cx, double cy, double r2, std::uint32_t* out) {
  const __m128i skipped = _mm_set1_epi8(static_cast<char>(skip));
  const __m256d vx = _mm256_set1_pd(cx);
  const __m256d vy = _mm256_set1_pd(cy);
  const __m256d vr = _mm256_set1_pd(r2);
  const __m256i step = _mm256_set1_epi32(8);
  __m256i index = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(begin)),
                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  std::uint32_t k = 0;
  std::uint32_t j = begin;
  for (; j + 8 <= end; j += 8) {
    // Separate multiplies and adds (no fused multiply-add): the same rounding as the
    // scalar version and as the exact decision.
    const __m256d dx0 = _mm256_sub_pd(_mm256_loadu_pd(xs + j), vx);
    const __m256d dy0 = _mm256_sub_pd(_mm256_loadu_pd(ys + j), vy);
    const __m256d dx1 = _mm256_sub_pd(_mm256_loadu_pd(xs + j + 4), vx);
    const __m256d dy1 = _mm256_sub_pd(_mm256_loadu_pd(ys + j + 4), vy);
    const __m256d d0 = _mm256_add_pd(_mm256_mul_pd(dx0, dx0), _mm256_mul_pd(dy0, dy0));
    const __m256d d1 = _mm256_add_pd(_mm256_mul_pd(dx1, dx1), _mm256_mul_pd(dy1, dy1));
    const auto m0 = static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(d0, vr, _CMP_LE_OQ)));
    const auto m1 = static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(d1, vr, _CMP_LE_OQ)));
    unsigned m = m0 | (m1 << 4);
    if constexpr (kTags) {
      std::uint64_t eight_tags;
      std::memcpy(&eight_tags, tags + j, 8);
      m &= ~static_cast<unsigned>(_mm_movemask_epi8(
          _mm_cmpeq_epi8(_mm_cvtsi64_si128(static_cast<long long>(eight_tags)), skipped)));
    }
    const __m256i perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCompact.lanes[m]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k),
                        _mm256_permutevar8x32_epi32(index, perm));
    k += static_cast<std::uint32_t>(__builtin_popcount(m));
    index = _mm256_add_epi32(index, step);
  }
  return k + filter_scalar(xs, ys, tags, skip, j, end, cx, cy, r2, out + k);
}

__attribute__((target("avx2"))) std::uint32_t filter_avx2(const double* xs, const double* ys,
                                                          const std::uint8_t* tags,
                                                          std::uint8_t skip, std::uint32_t begin,
                                                          std::uint32_t end, double cx, double cy,
                                                          double r2, std::uint32_t* out) {
  return tags != nullptr ? filter_avx2_of<true>(xs, ys, tags, skip, begin, end, cx, cy, r2, out)
                         : filter_avx2_of<false>(xs, ys, tags, skip, begin, end, cx, cy, r2, out);
}

// Lanes of a and b that differ (all ones), and lanes of v with any bit of `bits` set.
__attribute__((target("avx2"), always_inline)) inline __m128i not_equal(__m128i a, __m128i b) {
  return _mm_xor_si128(_mm_cmpeq_epi32(a, b), _mm_set1_epi32(-1));
}
__attribute__((target("avx2"), always_inline)) inline __m128i any_of(__m128i v, __m128i bits) {
  return not_equal(_mm_and_si128(v, bits), _mm_setzero_si128());
}

// Two 16-byte halves of records, as one vector: lo's in the low lane, hi's in the high.
__attribute__((target("avx2"), always_inline)) inline __m256d load_halves(const char* lo,
                                                                          const char* hi) {
  return _mm256_insertf128_pd(
      _mm256_castpd128_pd256(_mm_loadu_pd(reinterpret_cast<const double*>(lo))),
      _mm_loadu_pd(reinterpret_cast<const double*>(hi)), 1);
}
inline int word_at(const char* p) {
  int w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

__attribute__((target("avx2"))) std::uint32_t cell_pass_avx2(const CellPass& p, std::uint32_t begin,
                                                             std::uint32_t end,
                                                             double& max_radius) {
  const auto* bytes = static_cast<const char*>(p.records);
  const __m256d step2 = _mm256_set1_pd(p.step2);
  const __m256d min_x = _mm256_set1_pd(p.min_x);
  const __m256d min_y = _mm256_set1_pd(p.min_y);
  const __m256d inv_cell = _mm256_set1_pd(p.inv_cell);
  const __m256d zero = _mm256_setzero_pd();
  const __m256d last_col = _mm256_set1_pd(static_cast<double>(p.cols - 1));
  const __m256d last_row = _mm256_set1_pd(static_cast<double>(p.rows - 1));
  const __m128i cols = _mm_set1_epi32(static_cast<int>(p.cols));
  const __m128i special = _mm_set1_epi32(p.special_flags);
  const __m128i observer = _mm_set1_epi32(p.observer_flag);
  const __m256i odd_words = _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7);
  // Bytes 2 and 3 of each 32-bit lane (target version, class) to the low 8 bytes.
  const __m128i pick = _mm_setr_epi8(2, 6, 10, 14, 3, 7, 11, 15, -1, -1, -1, -1, -1, -1, -1, -1);
  __m256d top = _mm256_set1_pd(max_radius);
  std::uint32_t i = begin;
  for (; i + 4 <= end; i += 4) {
    if (i + 20 <= end) {  // the slots come in cell order, not memory order
      for (std::uint32_t k = 16; k < 20; ++k)
        __builtin_prefetch(bytes + 32 * std::size_t{p.slots[i + k]});
    }
    // The four records in 16-byte halves (x, y; radius, base tick and the last word: flags,
    // versions and class), put together lane by lane.
    const char* rec[4];
    for (int j = 0; j < 4; ++j) rec[j] = bytes + 32 * std::size_t{p.slots[i + j]};
    const __m256d front02 = load_halves(rec[0], rec[2]);
    const __m256d front13 = load_halves(rec[1], rec[3]);
    const __m256d back02 = load_halves(rec[0] + 16, rec[2] + 16);
    const __m256d back13 = load_halves(rec[1] + 16, rec[3] + 16);
    const __m256d x = _mm256_unpacklo_pd(front02, front13);
    const __m256d y = _mm256_unpackhi_pd(front02, front13);
    const __m256d radius = _mm256_unpacklo_pd(back02, back13);
    const __m128i meta = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
        _mm256_castpd_si256(_mm256_unpackhi_pd(back02, back13)), odd_words));
    // Separate multiplies and adds, as in the scalar pass.
    const __m256d dx = _mm256_sub_pd(x, _mm256_loadu_pd(p.xs + i));
    const __m256d dy = _mm256_sub_pd(y, _mm256_loadu_pd(p.ys + i));
    const __m256d d2 = _mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy));
    const auto jumped =
        static_cast<unsigned>(_mm256_movemask_pd(_mm256_cmp_pd(d2, step2, _CMP_GT_OQ)));
    // The cell: (v - min) * inv_cell clamped to [0, count - 1] (NaN: 0), then truncated.
    const __m256d fx = _mm256_min_pd(
        _mm256_max_pd(_mm256_mul_pd(_mm256_sub_pd(x, min_x), inv_cell), zero), last_col);
    const __m256d fy = _mm256_min_pd(
        _mm256_max_pd(_mm256_mul_pd(_mm256_sub_pd(y, min_y), inv_cell), zero), last_row);
    const __m128i key =
        _mm_add_epi32(_mm_mullo_epi32(_mm256_cvttpd_epi32(fy), cols), _mm256_cvttpd_epi32(fx));
    const __m128i listed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p.keys + i));
    const __m128i odd = _mm_or_si128(not_equal(key, listed), any_of(meta, special));
    if (jumped | static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(odd)))) break;
    _mm256_storeu_pd(p.xs + i, x);
    _mm256_storeu_pd(p.ys + i, y);
    const __m128i picked = _mm_shuffle_epi8(meta, pick);
    const int versions = _mm_cvtsi128_si32(picked);
    const int classes = _mm_extract_epi32(picked, 1);
    std::memcpy(p.versions + i, &versions, 4);
    std::memcpy(p.classes + i, &classes, 4);
    const __m128i is_observer = _mm_cmpeq_epi32(_mm_and_si128(meta, observer), observer);
    const __m256d observed =
        _mm256_and_pd(radius, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(is_observer)));
    top = _mm256_max_pd(top, observed);
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, top);
  max_radius = std::max(std::max(lanes[0], lanes[1]), std::max(lanes[2], lanes[3]));
  return i;
}

// Four words of a group of tests: lanes picked from lo by lo_pick, and the lanes in the
// 4-bit mask kFromHi from hi by hi_pick.
template <int kFromHi>
__attribute__((target("avx2"), always_inline)) inline __m128i field(__m256i lo, __m256i hi,
                                                                    __m256i lo_pick,
                                                                    __m256i hi_pick) {
  return _mm_blend_epi32(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(lo, lo_pick)),
                         _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(hi, hi_pick)), kFromHi);
}

__attribute__((target("avx2"))) std::uint32_t pair_tests_avx2(const PairTests& p,
                                                              std::uint32_t begin,
                                                              std::uint32_t end,
                                                              std::uint32_t* codes) {
  const auto* bytes = static_cast<const char*>(p.records);
  const auto* tests = static_cast<const int*>(p.tests);  // 3 words per test
  const __m256d zero = _mm256_setzero_pd();
  const __m128i ones = _mm_set1_epi32(-1);
  const __m128i none = _mm_setzero_si128();
  const __m256d h = _mm256_set1_pd(p.h);
  const __m256d eps2 = _mm256_set1_pd(p.eps2);
  const __m256d eps3 = _mm256_set1_pd(p.eps3);
  const __m256d inv_two_step = _mm256_set1_pd(p.inv_two_step);
  const __m256d life = _mm256_set1_pd(p.life);
  const __m128i life_ticks = _mm_set1_epi32(static_cast<int>(p.life_ticks));
  const __m128i first = _mm_set1_epi32(static_cast<int>(p.first));
  const __m128i mask = _mm_set1_epi32(static_cast<int>(p.mask));
  const __m128i removed = _mm_set1_epi32(p.removed_flag);
  const __m128i slot_bits = _mm_set1_epi32(0x7FFFFFFF);
  const __m128i byte = _mm_set1_epi32(0xFF);
  const __m128i class_bits = _mm_set1_epi32(0x7F);
  // Word k of the group's test t is word 3t + k: lanes taken from words 0-7 (lo) or, for
  // the last lanes, from words 4-11 (hi).
  const __m256i pick_observer = _mm256_setr_epi32(0, 3, 6, 0, 0, 0, 0, 0);
  const __m256i pick_observer_hi = _mm256_setr_epi32(0, 0, 0, 5, 0, 0, 0, 0);
  const __m256i pick_target = _mm256_setr_epi32(1, 4, 7, 0, 0, 0, 0, 0);
  const __m256i pick_target_hi = _mm256_setr_epi32(0, 0, 0, 6, 0, 0, 0, 0);
  const __m256i pick_versions = _mm256_setr_epi32(2, 5, 0, 0, 0, 0, 0, 0);
  const __m256i pick_versions_hi = _mm256_setr_epi32(0, 0, 4, 7, 0, 0, 0, 0);
  const __m128i scalar = _mm_set1_epi32(static_cast<int>(kScalarTest));
  const __m128i drop_bit = _mm_set1_epi32(static_cast<int>(kDropBit));
  const __m128i leave_bit = _mm_set1_epi32(static_cast<int>(kLeaveBit));
  const __m128i enter_bit = _mm_set1_epi32(static_cast<int>(kEnterBit));
  const __m256i low_halves = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const __m256i even_words = low_halves;
  const __m256i odd_words = _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7);
  std::uint32_t k = begin;
  for (; k + 4 <= end; k += 4) {
    if (k + 12 <= end) {  // the records of the group two ahead
      for (std::uint32_t j = k + 8; j < k + 12; ++j) {
        __builtin_prefetch(bytes + 32 * std::size_t{static_cast<std::uint32_t>(tests[3 * j])});
        __builtin_prefetch(
            bytes + 32 * std::size_t{static_cast<std::uint32_t>(tests[3 * j + 1]) & 0x7FFFFFFFu});
      }
    }
    // The group's 12 words in two overlapping loads (words 0-7 and 4-11), each field's
    // four words picked out of them: cheaper than three gathers.
    const int* group = tests + 3 * k;
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + 4));
    const __m128i a = field<0x8>(lo, hi, pick_observer, pick_observer_hi);
    const __m128i target = field<0x8>(lo, hi, pick_target, pick_target_hi);
    const __m128i versions = field<0xC>(lo, hi, pick_versions, pick_versions_hi);
    const __m128i b = _mm_and_si128(target, slot_bits);
    const __m128i visible = _mm_srai_epi32(target, 31);  // all ones when visible
    // The records: each observer's in two 16-byte halves (x, y; radius, base tick and
    // word 7), each target's first half and word 7, put together lane by lane. Loads in
    // place of gathers: the slots come from the test words, already in cache.
    const char* ra[4];
    const char* rb[4];
    for (int j = 0; j < 4; ++j) {
      ra[j] = bytes + 32 * std::size_t{static_cast<std::uint32_t>(group[3 * j])};
      rb[j] = bytes + 32 * std::size_t{static_cast<std::uint32_t>(group[3 * j + 1]) & 0x7FFFFFFFu};
    }
    const __m256d a_front02 = load_halves(ra[0], ra[2]);
    const __m256d a_front13 = load_halves(ra[1], ra[3]);
    const __m256d a_back02 = load_halves(ra[0] + 16, ra[2] + 16);
    const __m256d a_back13 = load_halves(ra[1] + 16, ra[3] + 16);
    const __m256d b_front02 = load_halves(rb[0], rb[2]);
    const __m256d b_front13 = load_halves(rb[1], rb[3]);
    const __m256d ax = _mm256_unpacklo_pd(a_front02, a_front13);
    const __m256d ay = _mm256_unpackhi_pd(a_front02, a_front13);
    const __m256d r = _mm256_unpacklo_pd(a_back02, a_back13);
    const __m256d bx = _mm256_unpacklo_pd(b_front02, b_front13);
    const __m256d by = _mm256_unpackhi_pd(b_front02, b_front13);
    // Words 6 (base tick) and 7 (flags, versions, class) of the observers, and word 7 of the
    // targets.
    const __m256i a_words = _mm256_castpd_si256(_mm256_unpackhi_pd(a_back02, a_back13));
    const __m128i a_base = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(a_words, even_words));
    const __m128i a_meta = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(a_words, odd_words));
    const __m128i b_meta = _mm_setr_epi32(word_at(rb[0] + 28), word_at(rb[1] + 28),
                                          word_at(rb[2] + 28), word_at(rb[3] + 28));
    // Versions: the test's observer version against the observer's (byte 1 of its word),
    // the test's target version against the target's (byte 2).
    const __m128i stale = _mm_or_si128(
        not_equal(_mm_and_si128(versions, byte), _mm_and_si128(_mm_srli_epi32(a_meta, 8), byte)),
        not_equal(_mm_and_si128(_mm_srli_epi32(versions, 8), byte),
                  _mm_and_si128(_mm_srli_epi32(b_meta, 16), byte)));
    const __m128i gone = any_of(b_meta, removed);
    // Class bytes: the class in bits 0-6, the crowd bit 7.
    const __m128i a_class = _mm_srli_epi32(a_meta, 24);
    const __m128i b_class = _mm_srli_epi32(b_meta, 24);
    // (Lanes hold 0-255: signed compares are safe, as for the slots, below 2^31.)
    const __m128i a_id = _mm_and_si128(a_class, class_bits);
    const __m128i theirs =
        _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi32(a_id, _mm_and_si128(b_class, class_bits)),
                                    _mm_cmpgt_epi32(a_id, none)),
                      _mm_cmpgt_epi32(a, b));
    const __m128i crowd =
        _mm_and_si128(_mm_cmpeq_epi32(a_class, b_class), _mm_cmpgt_epi32(a_class, class_bits));
    const __m128i odd = _mm_or_si128(_mm_or_si128(stale, gone), theirs);
    const __m256d dx = _mm256_sub_pd(bx, ax);
    const __m256d dy = _mm256_sub_pd(by, ay);
    const __m256d d2 = _mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy));
    const __m256d d = _mm256_sqrt_pd(d2);
    const __m256d outer = _mm256_add_pd(r, h);
    const __m256d seen = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(visible));
    // An event: a visible pair beyond r + h, a hidden one within r.
    const __m256d leaves = _mm256_cmp_pd(d2, _mm256_mul_pd(outer, outer), _CMP_GT_OQ);
    const __m256d enters = _mm256_cmp_pd(d2, _mm256_mul_pd(r, r), _CMP_LE_OQ);
    const __m256d event64 = _mm256_blendv_pd(enters, leaves, seen);
    // (The low halves of the 64-bit lane masks: 32-bit lane masks.)
    const __m128i event = _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(_mm256_castpd_si256(event64), low_halves));
    // The next test is of the pair as the test leaves it: visible or hidden.
    const __m256d after = _mm256_xor_pd(seen, event64);
    const __m256d gap = _mm256_blendv_pd(_mm256_sub_pd(_mm256_sub_pd(d, r), eps3),
                                         _mm256_sub_pd(_mm256_sub_pd(outer, d), eps2), after);
    const __m128i ticks = _mm256_cvttpd_epi32(
        _mm256_min_pd(_mm256_mul_pd(_mm256_max_pd(gap, zero), inv_two_step), life));
    const __m128i wake = _mm_add_epi32(first, ticks);
    const __m128i expired = _mm_xor_si128(
        _mm_cmpgt_epi32(none, _mm_sub_epi32(wake, _mm_add_epi32(a_base, life_ticks))), ones);
    const __m128i code =
        _mm_or_si128(_mm_or_si128(_mm_and_si128(wake, mask), _mm_and_si128(expired, drop_bit)),
                     _mm_or_si128(_mm_and_si128(_mm_and_si128(event, visible), leave_bit),
                                  _mm_and_si128(_mm_andnot_si128(visible, event), enter_bit)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + k),
                     _mm_blendv_epi8(_mm_blendv_epi8(code, drop_bit, crowd), scalar, odd));
  }
  return k;
}

#endif  // ZONE_AOI_X86

// The lanes of row j, word w of a crowd pass that stand for members.
inline std::uint64_t crowd_valid(const CrowdPass& p, std::uint32_t j, std::uint32_t w) {
  return crowd_valid_lanes(p.count, p.self ? j : p.count, w);
}

// Whether row j is far and has no bit of old set: nothing of it to test.
inline bool crowd_skip_row(const CrowdPass& p, std::uint32_t j) {
  if (!p.far_rows || !crowd_far_row(p, p.bx[j] + p.sx, p.by[j] + p.sy)) return false;
  const std::uint64_t* row = p.old + static_cast<std::size_t>(j) * p.words;
  for (std::uint32_t w = 0; w < p.words; ++w) {
    if (row[w] != 0) return false;
  }
  return true;
}

// The changes of a near row: every pair out of view enters.
inline std::uint32_t crowd_near_changes(const CrowdPass& p, std::uint32_t j, CrowdChange* out) {
  std::uint32_t n = 0;
  for (std::uint32_t w = 0; w < p.words; ++w) {
    const std::size_t at = static_cast<std::size_t>(j) * p.words + w;
    const std::uint64_t change = crowd_valid(p, j, w) & ~p.old[at];
    out[n] = {static_cast<std::uint32_t>(at), change};
    n += change != 0;
  }
  return n;
}

// The crowd pass, lane by lane (the definition in simd.hpp).
std::uint32_t crowd_pass_scalar(const CrowdPass& p, CrowdChange* out) {
  std::uint32_t n = 0;
  for (std::uint32_t j = 0; j < p.rows; ++j) {
    if (crowd_skip_row(p, j)) continue;
    if (p.near_rows && crowd_near_row(p, p.bx[j] + p.sx, p.by[j] + p.sy)) {
      n += crowd_near_changes(p, j, out + n);
      continue;
    }
    for (std::uint32_t w = 0; w < p.words; ++w) {
      const std::uint64_t valid = crowd_valid(p, j, w);
      if (valid == 0) continue;
      std::uint64_t e = 0;
      std::uint64_t s = 0;
      for (std::uint32_t i = 64 * w; i < std::min(p.lanes, 64 * w + 64); ++i) {
        const float dx = p.ax[i] - (p.bx[j] + p.sx);
        const float dy = p.ay[i] - (p.by[j] + p.sy);
        const float dx2 = dx * dx;  // (no contraction into a multiply-add)
        const float dy2 = dy * dy;
        const float d2 = dx2 + dy2;
        e |= static_cast<std::uint64_t>(d2 <= p.enter2) << (i % 64);
        s |= static_cast<std::uint64_t>(d2 <= p.stay2) << (i % 64);
      }
      const std::size_t at = static_cast<std::size_t>(j) * p.words + w;
      const std::uint64_t change = ((e & ~p.old[at]) | (p.old[at] & ~s)) & valid;
      if (change != 0) out[n++] = {static_cast<std::uint32_t>(at), change};
    }
  }
  return n;
}

#if ZONE_AOI_X86

// The lanes of d2 that are <= limit, as bits.
__attribute__((target("avx2"), always_inline)) inline std::uint64_t lanes_within(__m256 d2,
                                                                                 __m256 limit) {
  return static_cast<std::uint64_t>(
      static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(d2, limit, _CMP_LE_OQ))));
}

// Two rows at a time (independent work for the out-of-order core) when rows have one word,
// eight lanes at a time; the first cell's lanes come from L1.
__attribute__((target("avx2"))) std::uint32_t crowd_pass_avx2(const CrowdPass& p,
                                                              CrowdChange* out) {
  const __m256 enter2 = _mm256_set1_ps(p.enter2);
  const __m256 stay2 = _mm256_set1_ps(p.stay2);
  std::uint32_t n = 0;
  auto emit = [&](std::uint32_t j, std::uint32_t w, std::uint64_t e, std::uint64_t s,
                  std::uint64_t valid) {
    const std::size_t at = static_cast<std::size_t>(j) * p.words + w;
    const std::uint64_t old = p.old[at];
    const std::uint64_t change = ((e & ~old) | (old & ~s)) & valid;
    out[n] = {static_cast<std::uint32_t>(at), change};
    n += change != 0;
  };
  // Two rows at a time with one word per row (rows j0 < j1, far rows left out); one at a
  // time otherwise, so that the changes stay in order.
  auto two_rows = [&](std::uint32_t j0, std::uint32_t j1) __attribute__((target("avx2"))) {
    const __m256 bx0 = _mm256_set1_ps(p.bx[j0] + p.sx);
    const __m256 by0 = _mm256_set1_ps(p.by[j0] + p.sy);
    const __m256 bx1 = _mm256_set1_ps(p.bx[j1] + p.sx);
    const __m256 by1 = _mm256_set1_ps(p.by[j1] + p.sy);
    // (One word per row: word 0 of each.)
    const std::uint64_t valid1 = crowd_valid(p, j1, 0);
    if (valid1 == 0) return;  // (row j0's are fewer still)
    std::uint64_t e0 = 0, s0 = 0, e1 = 0, s1 = 0;
    const std::uint32_t end = std::min(p.lanes, 64u);
    for (std::uint32_t i = 0; i < end; i += 8) {
      const __m256 ax = _mm256_loadu_ps(p.ax + i);
      const __m256 ay = _mm256_loadu_ps(p.ay + i);
      const __m256 dx0 = _mm256_sub_ps(ax, bx0);
      const __m256 dy0 = _mm256_sub_ps(ay, by0);
      const __m256 dx1 = _mm256_sub_ps(ax, bx1);
      const __m256 dy1 = _mm256_sub_ps(ay, by1);
      const __m256 d0 = _mm256_add_ps(_mm256_mul_ps(dx0, dx0), _mm256_mul_ps(dy0, dy0));
      const __m256 d1 = _mm256_add_ps(_mm256_mul_ps(dx1, dx1), _mm256_mul_ps(dy1, dy1));
      e0 |= lanes_within(d0, enter2) << i;
      s0 |= lanes_within(d0, stay2) << i;
      e1 |= lanes_within(d1, enter2) << i;
      s1 |= lanes_within(d1, stay2) << i;
    }
    emit(j0, 0, e0, s0, crowd_valid(p, j0, 0));
    emit(j1, 0, e1, s1, valid1);
  };
  auto one_row = [&](std::uint32_t j) __attribute__((target("avx2"))) {
    const __m256 bx = _mm256_set1_ps(p.bx[j] + p.sx);
    const __m256 by = _mm256_set1_ps(p.by[j] + p.sy);
    for (std::uint32_t w = 0; w < p.words; ++w) {
      const std::uint64_t valid = crowd_valid(p, j, w);
      if (valid == 0) break;
      std::uint64_t e = 0, s = 0;
      const std::uint32_t end = std::min(p.lanes, 64 * w + 64);
      for (std::uint32_t i = 64 * w; i < end; i += 8) {
        const __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(p.ax + i), bx);
        const __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(p.ay + i), by);
        const __m256 d2 = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy));
        const std::uint32_t shift = i - 64 * w;
        e |= lanes_within(d2, enter2) << shift;
        s |= lanes_within(d2, stay2) << shift;
      }
      emit(j, w, e, s, valid);
    }
  };
  // The rows to test and the near rows among them, 64 at a time as bits, found 8 at a time
  // (a branch per row would be mispredicted about every other row of an outer cell pair).
  const __m256 sx = _mm256_set1_ps(p.sx);
  const __m256 sy = _mm256_set1_ps(p.sy);
  const __m256 extent = _mm256_set1_ps(p.extent);
  const __m256 inner2 = _mm256_set1_ps(p.inner2);
  const __m256 zero = _mm256_setzero_ps();
  const bool screen_rows = p.far_rows || p.near_rows;
  auto row_masks = [&](std::uint32_t base, std::uint64_t & keep, std::uint64_t & near)
      __attribute__((target("avx2"))) {
    const std::uint32_t count = std::min(64u, p.rows - base);
    keep = count == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
    near = 0;
    if (!screen_rows) return;
    if (p.words != 1) {
      for (std::uint32_t k = 0; k < count; ++k) {
        const std::uint32_t j = base + k;
        if (crowd_skip_row(p, j)) keep &= ~(std::uint64_t{1} << k);
        if (p.near_rows && crowd_near_row(p, p.bx[j] + p.sx, p.by[j] + p.sy)) {
          near |= std::uint64_t{1} << k;
        }
      }
      near &= keep;
      return;
    }
    // (The lanes and matrix rows past the cell's members are padding: far, and 0.)
    std::uint64_t far = 0;
    for (std::uint32_t k = 0; k < count; k += 8) {
      const __m256 px = _mm256_add_ps(_mm256_loadu_ps(p.bx + base + k), sx);
      const __m256 py = _mm256_add_ps(_mm256_loadu_ps(p.by + base + k), sy);
      const __m256 qx =
          _mm256_max_ps(_mm256_max_ps(_mm256_sub_ps(zero, px), _mm256_sub_ps(px, extent)), zero);
      const __m256 qy =
          _mm256_max_ps(_mm256_max_ps(_mm256_sub_ps(zero, py), _mm256_sub_ps(py, extent)), zero);
      const __m256 q2 = _mm256_add_ps(_mm256_mul_ps(qx, qx), _mm256_mul_ps(qy, qy));
      const __m256 fx = _mm256_max_ps(px, _mm256_sub_ps(extent, px));
      const __m256 fy = _mm256_max_ps(py, _mm256_sub_ps(extent, py));
      const __m256 f2 = _mm256_add_ps(_mm256_mul_ps(fx, fx), _mm256_mul_ps(fy, fy));
      const auto beyond =
          static_cast<std::uint64_t>(_mm256_movemask_ps(_mm256_cmp_ps(q2, enter2, _CMP_GT_OQ)));
      const auto within =
          static_cast<std::uint64_t>(_mm256_movemask_ps(_mm256_cmp_ps(f2, inner2, _CMP_LE_OQ)));
      const __m256i old0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.old + base + k));
      const __m256i old1 =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.old + base + k + 4));
      const __m256i none = _mm256_setzero_si256();
      const auto clear = static_cast<std::uint64_t>(
          _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(old0, none))) |
          (_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(old1, none))) << 4));
      if (p.far_rows) far |= (beyond & clear) << k;
      if (p.near_rows) near |= within << k;
    }
    keep &= ~far;
    near &= keep;
  };
  constexpr std::uint32_t kNoRow = 0xFFFFFFFFu;
  std::uint32_t waiting = kNoRow;  // a row kept to go with the next one
  for (std::uint32_t base = 0; base < p.rows; base += 64) {
    std::uint64_t keep;
    std::uint64_t near;
    row_masks(base, keep, near);
    for (; keep != 0; keep &= keep - 1) {
      const auto k = static_cast<std::uint32_t>(__builtin_ctzll(keep));
      const std::uint32_t j = base + k;
      if (near >> k & 1u) {  // (after the row before it, to keep the changes in order)
        if (waiting != kNoRow) one_row(waiting);
        waiting = kNoRow;
        n += crowd_near_changes(p, j, out + n);
      } else if (p.words != 1) {
        one_row(j);
      } else if (waiting == kNoRow) {
        waiting = j;
      } else {
        two_rows(waiting, j);
        waiting = kNoRow;
      }
    }
  }
  if (waiting != kNoRow) one_row(waiting);
  return n;
}

// Four rows at a time: each one's bit shifted down to bit 0, then up to its row's place.
__attribute__((target("avx2"))) std::uint64_t column_avx2(const std::uint64_t* rows,
                                                          std::uint32_t n, std::uint32_t bit) {
  const __m128i down = _mm_cvtsi32_si128(static_cast<int>(bit));
  const __m256i one = _mm256_set1_epi64x(1);
  const __m256i four = _mm256_set1_epi64x(4);
  __m256i place = _mm256_setr_epi64x(0, 1, 2, 3);
  __m256i acc = _mm256_setzero_si256();
  for (std::uint32_t r = 0; r < n; r += 4) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + r));
    acc = _mm256_or_si256(
        acc, _mm256_sllv_epi64(_mm256_and_si256(_mm256_srl_epi64(v, down), one), place));
    place = _mm256_add_epi64(place, four);
  }
  const __m128i half = _mm_or_si128(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  const auto bits = static_cast<std::uint64_t>(
      _mm_cvtsi128_si64(_mm_or_si128(half, _mm_unpackhi_epi64(half, half))));
  return n == 64 ? bits : bits & ((std::uint64_t{1} << n) - 1);  // (rows read past n)
}

#endif  // ZONE_AOI_X86

struct Kernels {
  decltype(&find_scalar) find;
  decltype(&filter_scalar) filter;
  decltype(&cell_pass_none) cell_pass;
  decltype(&pair_tests_none) pair_tests;
  decltype(&crowd_pass_scalar) crowd_pass;
  decltype(&column_scalar) column;
  const char* name;
};

Kernels pick() {
#if ZONE_AOI_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2"))
    return {find_avx2,       filter_avx2, cell_pass_avx2, pair_tests_avx2,
            crowd_pass_avx2, column_avx2, "avx2"};
  return {find_sse2,         filter_scalar, cell_pass_none, pair_tests_none,
          crowd_pass_scalar, column_scalar, "sse2"};
#else
  return {find_scalar,       filter_scalar, cell_pass_none, pair_tests_none,
          crowd_pass_scalar, column_scalar, "scalar"};
#endif
}

const Kernels kernels = pick();

}  // namespace

std::uint32_t find_u32(const std::uint32_t* p, std::uint32_t n, std::uint32_t v) {
  return kernels.find(p, n, v);
}

std::uint32_t filter_disc(const double* xs, const double* ys, const std::uint8_t* tags,
                          std::uint8_t skip, std::uint32_t begin, std::uint32_t end, double cx,
                          double cy, double r2, std::uint32_t* out) {
  return kernels.filter(xs, ys, tags, skip, begin, end, cx, cy, r2, out);
}

std::uint32_t cell_pass(const CellPass& pass, std::uint32_t begin, std::uint32_t end,
                        double& max_radius) {
  return kernels.cell_pass(pass, begin, end, max_radius);
}

std::uint32_t pair_tests(const PairTests& batch, std::uint32_t begin, std::uint32_t end,
                         std::uint32_t* codes) {
  return kernels.pair_tests(batch, begin, end, codes);
}

std::uint32_t crowd_pass(const CrowdPass& pass, CrowdChange* out) {
  return kernels.crowd_pass(pass, out);
}

std::vector<CrowdPassVersion> crowd_pass_versions() {
  std::vector<CrowdPassVersion> out{{"scalar", crowd_pass_scalar}};
#if ZONE_AOI_X86
  if (__builtin_cpu_supports("avx2")) out.push_back({"avx2", crowd_pass_avx2});
#endif
  return out;
}

std::uint64_t column_bits(const std::uint64_t* rows, std::uint32_t n, std::uint32_t bit) {
  return kernels.column(rows, n, bit);
}

const char* kernel_name() {
  return kernels.name;
}

}  // namespace zone::aoi::simd
