// SPDX-License-Identifier: Apache-2.0
#include "cuda_runtime/cublaslt_ops.h"

#include <cublasLt.h>

#include "cuda_runtime/cuda_error.h"
#include "util/error.h"

namespace fx::cuda {

struct CublasLtMatmul::Impl {
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;  // cuBLAS's A = our B
  cublasLtMatmulAlgo_t algo{};
  std::size_t ws = 0;
  float alpha = 1.f;
  bool bias = false;
  ~Impl() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

namespace {

cublasLtMatrixLayout_t layout(uint64_t rows, uint64_t cols, int64_t ld, int64_t batch,
                              int64_t stride) {
  cublasLtMatrixLayout_t l;
  check_cublas(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, rows, cols, ld), "matrix layout");
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    check_cublas(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                  sizeof count),
                 "batch count");
    check_cublas(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &stride, sizeof stride),
                 "batch stride");
  }
  return l;
}

}  // namespace

CublasLtMatmul::CublasLtMatmul(void* lt_handle, const MatmulParams& p, bool bias, bool relu,
                               std::size_t workspace_bytes)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.lt = static_cast<cublasLtHandle_t>(lt_handle);
  m.alpha = p.alpha;
  m.bias = bias;
  if (p.bias != kNoValue && p.beta != 1.f)
    throw Error("cuBLASLt: Gemm with beta " + std::to_string(p.beta) +
                " (only a bias added as is, beta 1, runs on the GPU)");
  check_cublas(cublasLtMatmulDescCreate(&m.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc");
  const cublasOperation_t op_a = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;  // our B
  const cublasOperation_t op_b = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;  // our A
  check_cublas(
      cublasLtMatmulDescSetAttribute(m.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a),
      "transa");
  check_cublas(
      cublasLtMatmulDescSetAttribute(m.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b),
      "transb");
  const cublasLtEpilogue_t epi = bias && relu ? CUBLASLT_EPILOGUE_RELU_BIAS
                                 : bias       ? CUBLASLT_EPILOGUE_BIAS
                                 : relu       ? CUBLASLT_EPILOGUE_RELU
                                              : CUBLASLT_EPILOGUE_DEFAULT;
  check_cublas(
      cublasLtMatmulDescSetAttribute(m.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
      "epilogue");
  const auto M = static_cast<uint64_t>(p.m), N = static_cast<uint64_t>(p.n),
             K = static_cast<uint64_t>(p.k);
  // Column-major views: our B (k x n row-major) is n x k with ld n; transposed storage
  // (n x k row-major) is k x n with ld k.
  m.a = p.trans_b ? layout(K, N, p.k, p.batch, p.stride_b) : layout(N, K, p.n, p.batch, p.stride_b);
  m.b = p.trans_a ? layout(M, K, p.m, p.batch, p.stride_a) : layout(K, M, p.k, p.batch, p.stride_a);
  m.d = layout(N, M, p.n, p.batch, p.m * p.n);
  cublasLtMatmulPreference_t pref;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "preference");
  check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof workspace_bytes),
               "workspace preference");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const int st =
      cublasLtMatmulAlgoGetHeuristic(m.lt, m.desc, m.a, m.b, m.d, m.d, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  check_cublas(st, "algorithm heuristic");
  if (found == 0)
    throw Error("cuBLASLt: no algorithm for a " + std::to_string(p.m) + "x" + std::to_string(p.k) +
                " by " + std::to_string(p.k) + "x" + std::to_string(p.n) + " product (batch " +
                std::to_string(p.batch) + ")");
  m.algo = result.algo;
  m.ws = result.workspaceSize;
}

CublasLtMatmul::~CublasLtMatmul() = default;

void CublasLtMatmul::run(const void* a, const void* b, const void* bias, void* c, void* workspace,
                         void* stream) const {
  const Impl& m = *impl_;
  if (m.bias) {
    if (!bias) throw Error("cuBLASLt: the bias epilogue needs a bias buffer");
    check_cublas(cublasLtMatmulDescSetAttribute(m.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                sizeof bias),
                 "bias pointer");
  }
  const float beta = 0.f;
  check_cublas(cublasLtMatmul(m.lt, m.desc, &m.alpha, b, m.a, a, m.b, &beta, c, m.d, c, m.d,
                              &m.algo, workspace, m.ws, static_cast<cudaStream_t>(stream)),
               "matmul");
}

}  // namespace fx::cuda
