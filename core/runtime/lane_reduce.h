// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sum and max of a contiguous float32 run in 32 independent lanes (four 8-wide vector
// accumulators), combined at the end. A plain `acc += x[i]` loop is one dependent add
// per element: without -ffast-math the compiler may not reorder it, so it neither
// vectorizes nor overlaps, and a global average pool ran at 8 GB/s. The lanes change
// the order of the additions (pairwise-like, no less accurate).

#include <cstdint>

namespace fx {

namespace lane_detail {
typedef float v8 __attribute__((vector_size(32), aligned(4)));  // unaligned loads
}  // namespace lane_detail
// A macro, not a function: returning a 32-byte vector from a function compiled without
// AVX changes its ABI (-Wpsabi).
#define FX_LANE_LOAD8(p) (*reinterpret_cast<const ::fx::lane_detail::v8*>(p))

inline float lane_sum(const float* x, int64_t n) {
  using lane_detail::v8;
  v8 a0{}, a1{}, a2{}, a3{};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 += FX_LANE_LOAD8(x + i);
    a1 += FX_LANE_LOAD8(x + i + 8);
    a2 += FX_LANE_LOAD8(x + i + 16);
    a3 += FX_LANE_LOAD8(x + i + 24);
  }
  for (; i + 8 <= n; i += 8) a0 += FX_LANE_LOAD8(x + i);
  const v8 s = (a0 + a1) + (a2 + a3);
  float acc = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < n; ++i) acc += x[i];
  return acc;
}

// Sum of (x[i] - mu)^2, in the same lanes (a variance's second pass).
inline float lane_sum_sq_centered(const float* x, int64_t n, float mu) {
  using lane_detail::v8;
  v8 a0{}, a1{}, a2{}, a3{};
  const v8 m = v8{} + mu;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const v8 d0 = FX_LANE_LOAD8(x + i) - m, d1 = FX_LANE_LOAD8(x + i + 8) - m,
             d2 = FX_LANE_LOAD8(x + i + 16) - m, d3 = FX_LANE_LOAD8(x + i + 24) - m;
    a0 += d0 * d0;
    a1 += d1 * d1;
    a2 += d2 * d2;
    a3 += d3 * d3;
  }
  for (; i + 8 <= n; i += 8) {
    const v8 d = FX_LANE_LOAD8(x + i) - m;
    a0 += d * d;
  }
  const v8 s = (a0 + a1) + (a2 + a3);
  float acc = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < n; ++i) acc += (x[i] - mu) * (x[i] - mu);
  return acc;
}

// Largest element, at least `init`; a NaN anywhere gives NaN (the reduce kernels' rule).
inline float lane_max(const float* x, int64_t n, float init) {
  using lane_detail::v8;
  typedef int32_t i8 __attribute__((vector_size(32)));
  v8 m0 = v8{} + init, m1 = m0;
  i8 nan{};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v8 u = FX_LANE_LOAD8(x + i), v = FX_LANE_LOAD8(x + i + 8);
    m0 = u > m0 ? u : m0;
    m1 = v > m1 ? v : m1;
    nan |= (u != u) | (v != v);  // lanes that saw a NaN
  }
  float acc = init;
  bool any_nan = false;
  for (int l = 0; l < 8; ++l) {
    acc = m0[l] > acc ? m0[l] : acc;
    acc = m1[l] > acc ? m1[l] : acc;
    any_nan = any_nan || nan[l] != 0;
  }
  for (; i < n; ++i) {
    any_nan = any_nan || x[i] != x[i];
    acc = x[i] > acc ? x[i] : acc;
  }
  return any_nan ? __builtin_nanf("") : acc;
}

}  // namespace fx
