// The AOI's vector kernels, with a runtime choice of instruction set.
//
// The binary is built for baseline x86-64 (no -march=native needed): every kernel has a
// baseline version (SSE2 intrinsics or plain C++), and an AVX2 version compiled for that
// target alone and chosen once, at start-up, when the CPU has AVX2
// (__builtin_cpu_supports). Other architectures get plain C++. All versions return
// exactly the same results.
#pragma once

#include <cstdint>

namespace zone::aoi::simd {

// Index of the first v in p[0, n), or n when absent.
std::uint32_t find_u32(const std::uint32_t* p, std::uint32_t n, std::uint32_t v);

// Indices j in [begin, end) with (xs[j] - cx)^2 + (ys[j] - cy)^2 <= r2, computed exactly
// so in double (no fused multiply-add), appended to out in ascending order; returns how
// many. May write up to 8 entries past the last one it returns.
std::uint32_t filter_disc(const double* xs, const double* ys, std::uint32_t begin,
                          std::uint32_t end, double cx, double cy, double r2, std::uint32_t* out);

// Name of the kernels in use: "avx2", "sse2" or "scalar".
const char* kernel_name();

}  // namespace zone::aoi::simd
