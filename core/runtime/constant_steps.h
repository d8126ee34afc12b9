// SPDX-License-Identifier: Apache-2.0
#pragma once
// Steps computed once, when the steps are made, instead of at every run.
//
// The canonical form keeps DequantizeLinear nodes over initializers (quantized weights
// and biases) as nodes on purpose: the analysis's QDQ patterns need them to see an
// int8 Conv/MatMul. Run as they are, they widen every weight at every run, and the
// float Conv/MatMul behind them sees computed (not constant) weights, so it cannot
// prepare them once (oneDNN's reordered weights) and reorders them at every run too.
// Here such a node is computed once; its step then only hands out the result, and the
// kernels built after it see a constant.

#include <map>
#include <memory>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace fx {

struct PrecomputedSteps {
  // `graph` with the precomputed values made constant (their producers stay, so that a
  // fused group may still hold them); only set when something was precomputed.
  std::optional<Graph> graph;
  // Per precomputed node, the kernel its step runs: it views the result (no copy).
  std::map<NodeId, std::shared_ptr<Kernel>> kernels;
};

// The DequantizeLinear nodes of `g` whose inputs are all initializers, computed with
// the runtime's own kernel (so the result is the one a run would give).
PrecomputedSteps precompute_constant_steps(const Graph& g, int64_t opset);

}  // namespace fx
