// SPDX-License-Identifier: Apache-2.0
#pragma once
// Branch-free float versions of exp, tanh, erf and the logistic function, written
// so that loops calling them auto-vectorize (libm's calls do not; fx_runtime is
// built with -fno-trapping-math so that GCC may if-convert the selects). Accuracy:
// exp within ~2 ulp on [-87, 88] (0 below, inf above); tanh, erf within 2e-7
// absolute; well inside ONNX's test tolerance (rtol 1e-3, atol 1e-5).

#include <cstdint>
#include <cstring>
#include <limits>

// Hot loops get an AVX2+FMA clone chosen at load time; the default clone keeps
// the library runnable on any x86-64 (no -march in the build). The clone is
// x86-64-v3, which GCC picks by CPU features: an "arch=haswell" clone is picked by
// CPU model (__builtin_cpu_is), so newer Xeons (and VMs reporting a generic model)
// ran the SSE2 default.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FX_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define FX_VECTOR_CLONES
#endif

namespace fx {

inline float fast_exp(float x) {
  // n = round(x / ln2) by the add-magic-number trick (vectorizes without SSE4.1).
  const float magic = 12582912.0f;  // 1.5 * 2^23
  float n = (x * 1.44269504088896341f + magic) - magic;
  float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  // Out of range: selects on the result (not a clamp of x, which the compiler turns
  // into branches). Underflow gives exactly 0: tiny denormal results would make
  // every later multiply (e.g. masked attention weights times V) crawl.
  float res = p * scale;
  res = x < -87.0f ? 0.0f : res;
  res = x > 88.0f ? std::numeric_limits<float>::infinity() : res;
  return res;
}

inline float fast_sigmoid(float x) {
  return 1.0f / (1.0f + fast_exp(-x));
}

inline float fast_tanh(float x) {
  float ax = x < 0 ? -x : x;
  ax = ax > 9.0f ? 9.0f : ax;  // tanh(9) == 1 in float
  float t = fast_exp(-2.0f * ax);
  float r = (1.0f - t) / (1.0f + t);
  return x < 0 ? -r : r;
}

// Abramowitz & Stegun 7.1.26.
inline float fast_erf(float x) {
  float ax = x < 0 ? -x : x;
  float t = 1.0f / (1.0f + 0.3275911f * ax);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  float r = 1.0f - p * t * fast_exp(-ax * ax);
  return x < 0 ? -r : r;
}

}  // namespace fx
