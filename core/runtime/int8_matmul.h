// SPDX-License-Identifier: Apache-2.0
#pragma once
// An integer matrix product of 8-bit rows by constant 8-bit weights, as
// QLinearMatMul, MatMulInteger and a fused QDQ MatMul/Gemm group compute it:
//
//   acc[i, j] = bias[j] + sum_k (a[i, k] - a_zero_point) * b[k, j]     (exact)
//   y = acc | saturate(round(acc * scale[j]) + y_zp) | acc * scale[j]   (Int32 | 8-bit | Float32)
//
// Runs as one oneDNN int8 matmul (split over rows) when b fits int8 after its zero
// point is taken out, else as an exact reference loop. Where oneDNN's int8 kernels
// lack VNNI, the matmul runs on a u8 source with 7-bit weight halves, still exact
// (runtime/int8_exact.h).

#include <string>
#include <vector>

#include "runtime/dnnl_parts.h"
#include "runtime/tensor.h"

namespace fx {

struct Int8MatMulSpec {
  int64_t m = 0, k = 0, n = 0;  // a is [m, k] (all leading dims folded into m), b [k, n]
  DType a_type = DType::UInt8;  // UInt8 or Int8
  int32_t a_zero_point = 0;
  std::vector<int32_t> b;       // b - b_zero_point, [k, n] row-major
  std::vector<float> bias;      // empty or n, in accumulator units
  std::vector<float> scales;    // 1 or n (unused for Int32 output)
  DType y_type = DType::Int32;  // Int32, UInt8, Int8 or Float32
  int32_t y_zero_point = 0;
  bool relu = false;
};

class Int8MatMul {
 public:
  // Throws fx::Error for inconsistent sizes or types.
  Int8MatMul(Int8MatMulSpec spec, int threads);
  const std::string& impl() const { return impl_; }
  void run(const void* a, void* y, int threads);

 private:
  void run_reference(const void* a, void* y) const;
  void run_halves(void* y, int threads);

  Int8MatMulSpec s_;
  std::string impl_ = "reference";
  std::vector<DnnlPart> parts_;
  // No VNNI (runtime/int8_exact.h): an s8 source goes in as u8 + 128 (a_u8_); with
  // weights beyond 7 bits, parts_ holds the matmuls of both halves, writing int32
  // accumulators that run_halves sums and requantizes.
  bool shift_src_ = false, halves_ = false;
  std::vector<uint8_t> a_u8_;
  std::vector<int32_t> acc_lo_, acc_hi_;
};

}  // namespace fx
