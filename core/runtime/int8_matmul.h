// SPDX-License-Identifier: Apache-2.0
#pragma once
// An integer matrix product of 8-bit rows by constant 8-bit weights, as
// QLinearMatMul, MatMulInteger and a fused QDQ MatMul/Gemm group compute it:
//
//   acc[i, j] = bias[j] + sum_k (a[i, k] - a_zero_point) * b[k, j]     (exact)
//   y = acc | saturate(round(acc * scale[j]) + y_zp) | acc * scale[j]   (Int32 | 8-bit | Float32)
//
// Runs as one oneDNN int8 matmul (split over rows) when b fits int8 after its zero
// point is taken out, else as an exact reference loop.

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

  Int8MatMulSpec s_;
  std::string impl_ = "reference";
  std::vector<DnnlPart> parts_;
};

}  // namespace fx
