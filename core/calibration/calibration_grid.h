// SPDX-License-Identifier: Apache-2.0
#pragma once
// The shapes `fxc calibrate` times, as small graphs of independent chains (one chain per
// grid point, each with its own input and output), so that the analysis finds the same
// fusion groups it finds in real models and the before/after machinery times them
// unfused and fused (grid_calibration.h). No model is looked at: the grid comes from
// the machine's cache sizes and from the kernel families models are made of.
//
//   memory   elementwise chains (Add -> Relu -> Mul; Sigmoid -> Mul, i.e. Swish) and
//            row kernels (Mul -> Softmax; Add -> LayerNormalization) and relayouts
//            (Transpose -> Add) at working sets of half of L1, of L2, of L3, twice L3,
//            plus a tiny one whose time is the per-step dispatch cost
//   conv     3x3 and 1x1 convolutions with bias + Relu, with BatchNormalization + Relu,
//            with a residual Add + Relu; depthwise 3x3 + Relu; Relu -> MaxPool, over
//            channel / map sizes from 16 x 112^2 to 960 x 7^2; chains of them (a
//            residual block, an inverted bottleneck), whose fused layouts differ

//   matmul   MatMul + bias Add + Relu and Gemm (transB) + Relu over M x K x N from
//            16 x 1024 x 1024 to 128 x 768 x 3072, and a transformer MLP (two MatMuls,
//            biases, Relu, residual Add)
// Every op with its output shape written out (the graphs are not read from ONNX).

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fx {

struct CacheSizes {
  int64_t l1d = 32 * 1024, l2 = 1024 * 1024, l3 = 32 * 1024 * 1024;  // bytes
};

struct GridFamily {
  std::string name;  // "memory", "conv", "matmul"
  Graph graph;
};

// Largest working set timed (bytes of one tensor): twice L3, at most this.
inline constexpr int64_t kMaxGridTensorBytes = 64LL << 20;

// The working-set sizes (bytes of one tensor) of the memory family for these caches.
std::vector<int64_t> memory_grid_sizes(const CacheSizes& c);
std::vector<GridFamily> calibration_grid(const CacheSizes& c);

}  // namespace fx
