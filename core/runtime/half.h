// SPDX-License-Identifier: Apache-2.0
#pragma once
// float16 and bfloat16 as stored bits, converted to and from float32 in software so
// that no CPU feature is assumed (kernels compute half types in fp32; see
// half_adapter.h). Rounding is to nearest, ties to even, as IEEE 754 and numpy do.

#include <cstdint>
#include <cstring>

#include "ir/dtype.h"
#include "ir/half_bits.h"  // half_to_float

namespace fx {

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
  }
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (ax < 0x38800000u) {               // result is subnormal or zero
    if (ax < 0x33000000u) return sign;  // below half the smallest subnormal
    const uint32_t e = ax >> 23;
    const uint32_t man = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t q = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t r = ax - 0x38000000u;  // rebias exponent 127 -> 15
  const uint32_t lsb = (r >> 13) & 1u;
  r += 0xfffu + lsb;
  return static_cast<uint16_t>(sign | (r >> 13));
}

inline float bfloat16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

inline bool dtype_is_half(DType t) {
  return t == DType::Float16 || t == DType::BFloat16;
}

// n elements of a half type (Float16 or BFloat16) to float32 and back.
void half_to_floats(DType t, const uint16_t* in, float* out, int64_t n);
void floats_to_half(DType t, const float* in, uint16_t* out, int64_t n);

}  // namespace fx
