// SPDX-License-Identifier: Apache-2.0
#pragma once
// A MatMul / Gemm through cuBLASLt, set up once (descriptors, the heuristic's algorithm)
// and run many times. Row-major C = A B is computed as the column-major C^T = B^T A^T,
// so no operand is copied; a bias per column (Gemm's C, or a fused bias Add) and a Relu
// run as cuBLASLt's epilogue. Float32 compute (CUBLAS_COMPUTE_32F, no TF32).

#include <cstddef>
#include <memory>

#include "cuda_plan/kernel_params.h"

namespace fx::cuda {

class CublasLtMatmul {
 public:
  CublasLtMatmul(void* lt_handle, const MatmulParams& p, bool bias, bool relu,
                 std::size_t workspace_bytes);
  ~CublasLtMatmul();
  CublasLtMatmul(const CublasLtMatmul&) = delete;
  CublasLtMatmul& operator=(const CublasLtMatmul&) = delete;

  // bias: N floats or null (must be given when constructed with bias).
  void run(const void* a, const void* b, const void* bias, void* c, void* workspace,
           void* stream) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx::cuda
