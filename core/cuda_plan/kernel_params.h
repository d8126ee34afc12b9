// SPDX-License-Identifier: Apache-2.0
#pragma once
// The parameters a cuDNN or cuBLASLt launch needs, read from a node's attributes and
// static shapes before running, so that what the library is asked to do is tested on
// the host. Errors name the node and what does not fit (only float32, 2-D convolutions
// and pooling, MatMul batches that broadcast one operand).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_ir.h"

#include "ir/graph.h"

namespace fx::cuda {

struct ConvParams {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input NCHW
  int64_t k = 0, r = 0, s = 0;         // filters KCRS (C per group)
  int64_t out_h = 0, out_w = 0;
  std::array<int64_t, 2> pad{}, stride{1, 1}, dilation{1, 1};  // symmetric pads only
  int64_t groups = 1;
  bool has_bias = false;
  int64_t flops() const { return 2 * n * k * out_h * out_w * (c / groups) * r * s; }
};

struct PoolParams {
  enum Mode { Max, Average, AverageCountPad } mode = Max;
  int64_t n = 0, c = 0, h = 0, w = 0, out_h = 0, out_w = 0;
  std::array<int64_t, 2> window{1, 1}, pad{}, stride{1, 1};
};

// Inference batch normalization over the channel axis 1 of an [N, C, ...] tensor, seen
// by cuDNN as [N, C, H, W] (trailing dims merged into H, W 1).
struct BatchNormParams {
  int64_t n = 0, c = 0, h = 1, w = 1;
  double epsilon = 1e-5;
};

// Row-major C[b] = alpha * op(A[b]) op(B[b]) (+ beta * bias), b over `batch`; an operand
// without batch dims has batch stride 0.
struct MatmulParams {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;  // Gemm's transA / transB
  int64_t stride_a = 0, stride_b = 0;     // elements between batches (0: shared)
  float alpha = 1.f, beta = 0.f;
  ValueId bias = kNoValue;  // Gemm's C: [N] or [1,N] (row broadcast), beta-scaled
  int64_t flops() const { return 2 * batch * m * n * k; }
};

// A generated kernel's reference shape (codegen/kernel_ir.h), from its inputs' static
// shapes as the CPU's GeneratedKernel binds it: the `dims` its entry point takes.
std::vector<int64_t> generated_dims(const Graph& graph, const fx::LoweredGroup& group);

ConvParams conv_params(const Graph& graph, NodeId node);
PoolParams pool_params(const Graph& graph, NodeId node);
BatchNormParams batchnorm_params(const Graph& graph, NodeId node);
MatmulParams matmul_params(const Graph& graph, NodeId node);

}  // namespace fx::cuda
