#include "aoi/simd.hpp"

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

std::uint32_t filter_scalar(const double* xs, const double* ys, std::uint32_t begin,
                            std::uint32_t end, double cx, double cy, double r2,
                            std::uint32_t* out) {
  std::uint32_t k = 0;
  for (std::uint32_t j = begin; j < end; ++j) {
    const double dx = xs[j] - cx;
    const double dy = ys[j] - cy;
    out[k] = j;
    k += dx * dx + dy * dy <= r2 ? 1u : 0u;
  }
  return k;
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

__attribute__((target("avx2"))) std::uint32_t filter_avx2(const double* xs, const double* ys,
                                                          std::uint32_t begin, std::uint32_t end,
                                                          double cx, double cy, double r2,
                                                          std::uint32_t* out) {
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
    const unsigned m = m0 | (m1 << 4);
    const __m256i perm = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCompact.lanes[m]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k),
                        _mm256_permutevar8x32_epi32(index, perm));
    k += static_cast<std::uint32_t>(__builtin_popcount(m));
    index = _mm256_add_epi32(index, step);
  }
  return k + filter_scalar(xs, ys, j, end, cx, cy, r2, out + k);
}

#endif  // ZONE_AOI_X86

struct Kernels {
  decltype(&find_scalar) find;
  decltype(&filter_scalar) filter;
  const char* name;
};

Kernels pick() {
#if ZONE_AOI_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) return {find_avx2, filter_avx2, "avx2"};
  return {find_sse2, filter_scalar, "sse2"};
#else
  return {find_scalar, filter_scalar, "scalar"};
#endif
}

const Kernels kernels = pick();

}  // namespace

std::uint32_t find_u32(const std::uint32_t* p, std::uint32_t n, std::uint32_t v) {
  return kernels.find(p, n, v);
}

std::uint32_t filter_disc(const double* xs, const double* ys, std::uint32_t begin,
                          std::uint32_t end, double cx, double cy, double r2, std::uint32_t* out) {
  return kernels.filter(xs, ys, begin, end, cx, cy, r2, out);
}

const char* kernel_name() {
  return kernels.name;
}

}  // namespace zone::aoi::simd
