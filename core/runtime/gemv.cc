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

// Four blocks (64 outputs) at a time: four independent FMA chains per x[i], each
// over its own contiguous stream; then single blocks with two chains (even, odd i).
FX_GEMV_CLONES void packed_blocks(const float* x, const float* p, int64_t k, int64_t blocks,
                                  float* y) {
  const int64_t bs = k * 16;
  int64_t b = 0;
  for (; b + 4 <= blocks; b += 4) {
    const float* p0 = p + b * bs;
    const float* p1 = p0 + bs;
    const float* p2 = p1 + bs;
    const float* p3 = p2 + bs;
    V16 a0{}, a1{}, a2{}, a3{};
    for (int64_t i = 0; i < k; ++i) {
      const float xi = x[i];
      a0 += load(p0 + i * 16) * xi;
      a1 += load(p1 + i * 16) * xi;
      a2 += load(p2 + i * 16) * xi;
      a3 += load(p3 + i * 16) * xi;
    }
    std::memcpy(y + b * 16, &a0, sizeof a0);
    std::memcpy(y + b * 16 + 16, &a1, sizeof a1);
    std::memcpy(y + b * 16 + 32, &a2, sizeof a2);
    std::memcpy(y + b * 16 + 48, &a3, sizeof a3);
  }
  for (; b < blocks; ++b) {
    const float* p0 = p + b * bs;
    V16 a{}, c{};
    int64_t i = 0;
    for (; i + 2 <= k; i += 2) {
      a += load(p0 + i * 16) * x[i];
      c += load(p0 + i * 16 + 16) * x[i + 1];
    }
    if (i < k) a += load(p0 + i * 16) * x[i];
    a += c;
    std::memcpy(y + b * 16, &a, sizeof a);
  }
}

}  // namespace

AlignedFloats pack_rows16(const float* w, int64_t n, int64_t k) {
  AlignedFloats p(static_cast<std::size_t>(n * k));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < k; ++i)
      p[static_cast<std::size_t>(((j / 16) * k + i) * 16 + j % 16)] = w[j * k + i];
  return p;
}

void gemv_packed16(const float* x, const float* packed, int64_t k, int64_t blocks, float* y) {
  packed_blocks(x, packed, k, blocks, y);
}

void gemv_rows(const float* x, const float* w, const float* c, float alpha, int64_t n, int64_t k,
               float* y) {
  parallel_for(n, k, [&](int64_t j0, int64_t j1) {
    rows(x, w, k, j0, j1, y);
    for (int64_t j = j0; j < j1; ++j) y[j] = alpha * y[j] + (c ? c[j] : 0.0f);
  });
}

}  // namespace fx
