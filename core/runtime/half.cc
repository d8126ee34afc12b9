// SPDX-License-Identifier: Apache-2.0
#include "runtime/half.h"

#include "runtime/parallel.h"

namespace fx {

void half_to_floats(DType t, const uint16_t* in, float* out, int64_t n) {
  const bool bf = t == DType::BFloat16;
  parallel_for(n, 4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = bf ? bfloat16_to_float(in[i]) : half_to_float(in[i]);
  });
}

void floats_to_half(DType t, const float* in, uint16_t* out, int64_t n) {
  const bool bf = t == DType::BFloat16;
  parallel_for(n, 8, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = bf ? float_to_bfloat16(in[i]) : float_to_half(in[i]);
  });
}

}  // namespace fx
