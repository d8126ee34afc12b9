// SPDX-License-Identifier: Apache-2.0
#include "runtime/gemv.h"

#include <cstring>

#include "runtime/parallel.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FX_GEMV_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define FX_GEMV_CLONES
#endif

namespace fx {
namespace {

// 16 floats; GCC lowers the vector extension per clone (one zmm, two ymm, four xmm).
// The helpers are always inlined into the clones, so the ABI note on passing such
// vectors by value (-Wpsabi) never applies.
#pragma GCC diagnostic ignored "-Wpsabi"
typedef float V16 __attribute__((vector_size(64)));

[[gnu::always_inline]] inline V16 load(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[gnu::always_inline]] inline float hsum(const V16& v) {
  float s = 0;
  for (int i = 0; i < 16; ++i) s += v[i];
  return s;
}

// Rows [j0, j1): four rows at a time with two accumulators each (eight FMA chains,
// enough to cover the FMA latency), then single rows; the tail of k scalar.
FX_GEMV_CLONES void rows(const float* x, const float* w, int64_t k, int64_t j0, int64_t j1,
                         float* y) {
  const int64_t kv = k / 32 * 32;
  int64_t j = j0;
  for (; j + 4 <= j1; j += 4) {
    const float* r0 = w + j * k;
    const float* r1 = r0 + k;
    const float* r2 = r1 + k;
    const float* r3 = r2 + k;
    V16 a0{}, a1{}, a2{}, a3{}, b0{}, b1{}, b2{}, b3{};
    for (int64_t i = 0; i < kv; i += 32) {
      const V16 xa = load(x + i), xb = load(x + i + 16);
      a0 += load(r0 + i) * xa;
      b0 += load(r0 + i + 16) * xb;
      a1 += load(r1 + i) * xa;
      b1 += load(r1 + i + 16) * xb;
      a2 += load(r2 + i) * xa;
      b2 += load(r2 + i + 16) * xb;
      a3 += load(r3 + i) * xa;
      b3 += load(r3 + i + 16) * xb;
    }
    float s0 = hsum(a0 + b0), s1 = hsum(a1 + b1), s2 = hsum(a2 + b2), s3 = hsum(a3 + b3);
    for (int64_t i = kv; i < k; ++i) {
      s0 += r0[i] * x[i];
      s1 += r1[i] * x[i];
      s2 += r2[i] * x[i];
      s3 += r3[i] * x[i];
    }
    y[j] = s0;
    y[j + 1] = s1;
    y[j + 2] = s2;
    y[j + 3] = s3;
  }
  for (; j < j1; ++j) {
    const float* r = w + j * k;
    V16 a{}, b{};
    for (int64_t i = 0; i < kv; i += 32) {
      a += load(r + i) * load(x + i);
      b += load(r + i + 16) * load(x + i + 16);
    }
    float s = hsum(a + b);
    for (int64_t i = kv; i < k; ++i) s += r[i] * x[i];
    y[j] = s;
  }
}

}  // namespace

void gemv_rows(const float* x, const float* w, const float* c, float alpha, int64_t n, int64_t k,
               float* y) {
  parallel_for(n, k, [&](int64_t j0, int64_t j1) {
    rows(x, w, k, j0, j1, y);
    for (int64_t j = j0; j < j1; ++j) y[j] = alpha * y[j] + (c ? c[j] : 0.0f);
  });
}

}  // namespace fx
