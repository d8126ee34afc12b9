// SPDX-License-Identifier: Apache-2.0
#pragma once
// Rounding, saturation and zero-point reading shared by the quantized ops
// (QuantizeLinear, QLinearConv, ...), as the ONNX spec defines them: round half
// to even, then saturate to the integer type's range.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/tensor.h"

namespace fx {

// Round half to even (the default floating-point rounding mode), then saturate.
template <class Q>
Q saturate_round(float v) {
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::min());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  if (std::isnan(v)) return Q{0};
  return static_cast<Q>(std::clamp(std::nearbyint(v), lo, hi));
}

// Requantizes an accumulator value (already scaled to the output's units) with
// the output zero point into dtype `t` (UInt8 or Int8) at `out[i]`.
inline void store_quantized(DType t, void* out, int64_t i, float v, int32_t zero_point) {
  if (t == DType::UInt8) {
    static_cast<uint8_t*>(out)[i] = saturate_round<uint8_t>(std::nearbyint(v) + float(zero_point));
  } else {
    static_cast<int8_t*>(out)[i] = saturate_round<int8_t>(std::nearbyint(v) + float(zero_point));
  }
}

// Writes one integer-loop result (accumulator + bias) in the output's type: int32 as
// is (ConvInteger, MatMulInteger), float32 scaled, or requantized to 8 bits with the
// optional Relu of a fused QDQ group.
inline void store_accumulated(DType t, void* out, int64_t i, double total, float scale, bool relu,
                              int32_t zero_point) {
  if (t == DType::Int32) {
    static_cast<int32_t*>(out)[i] = static_cast<int32_t>(total);
  } else if (t == DType::Float32) {
    static_cast<float*>(out)[i] = static_cast<float>(total) * scale;
  } else {
    float v = static_cast<float>(total) * scale;
    if (relu) v = std::max(v, 0.f);
    store_quantized(t, out, i, v, zero_point);
  }
}

// The integer values of a zero-point (or integer) tensor, 0 when absent.
// Accepts uint8, int8 and int32.
std::vector<int32_t> zero_points_of(const Tensor* zp, const char* what);
// The single value of a per-tensor zero point (absent: 0); throws when it has
// more than one element.
int32_t scalar_zero_point(const Tensor* zp, const char* what);
// The float values of a scale tensor (float32 only); throws when empty.
std::vector<float> scales_of(const Tensor& scale, const char* what);
// True for the 8-bit quantized element types.
inline bool is_int8_type(DType t) {
  return t == DType::UInt8 || t == DType::Int8;
}

}  // namespace fx
