// SPDX-License-Identifier: Apache-2.0
#include "runtime/half.h"

#include "runtime/parallel.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define FX_HAVE_F16C_PATH 1
#endif

namespace fx {
namespace {

#ifdef FX_HAVE_F16C_PATH
// The CPU's own conversions (F16C, on every x86-64 CPU since 2012): IEEE round to
// nearest even with subnormals, as the scalar code; a half model widens and narrows
// every activation, so the branchy scalar form would cost more than the kernels.
bool has_f16c() {
  static const bool yes = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return yes;
}

__attribute__((target("avx,f16c"))) void widen_f16c(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = half_to_float(in[i]);
}

__attribute__((target("avx,f16c"))) void narrow_f16c(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = float_to_half(in[i]);
}
#endif

}  // namespace

void half_to_floats(DType t, const uint16_t* in, float* out, int64_t n) {
  const bool bf = t == DType::BFloat16;
  parallel_for(n, 4, [&](int64_t b, int64_t e) {
#ifdef FX_HAVE_F16C_PATH
    if (!bf && has_f16c()) return widen_f16c(in + b, out + b, e - b);
#endif
    for (int64_t i = b; i < e; ++i) out[i] = bf ? bfloat16_to_float(in[i]) : half_to_float(in[i]);
  });
}

void floats_to_half(DType t, const float* in, uint16_t* out, int64_t n) {
  const bool bf = t == DType::BFloat16;
  parallel_for(n, 8, [&](int64_t b, int64_t e) {
#ifdef FX_HAVE_F16C_PATH
    if (!bf && has_f16c()) return narrow_f16c(in + b, out + b, e - b);
#endif
    for (int64_t i = b; i < e; ++i) out[i] = bf ? float_to_bfloat16(in[i]) : float_to_half(in[i]);
  });
}

}  // namespace fx
