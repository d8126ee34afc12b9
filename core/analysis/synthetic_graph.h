// SPDX-License-Identifier: Apache-2.0
#pragma once
// A generated graph of any size with the shape of real networks, to time the analysis:
// repeated blocks of Conv -> BatchNormalization -> Relu, residual Add, a decomposed
// LayerNorm, MatMul + Add + GELU, Softmax, Reshape/Transpose and a few opaque ops, all
// with static shapes. Deterministic for a given (node_count, seed).

#include <cstdint>

#include "ir/graph.h"

namespace fx {

struct SyntheticGraphOptions {
  int node_count = 100000;  // approximate; the result has within one block of this
  uint32_t seed = 1;
  int channels = 64;
  int spatial = 28;
};

Graph make_synthetic_graph(const SyntheticGraphOptions& options = {});

}  // namespace fx
