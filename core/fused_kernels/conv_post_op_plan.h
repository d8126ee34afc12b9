// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which Conv groups become one oneDNN convolution with post-ops, and how each epilogue
// op is applied.
//
// plan_conv_post_ops() says whether a group's epilogue is expressible: a chain of
// Relu, LeakyRelu, Clip (constant bounds), Sigmoid, x*Sigmoid(x) (swish), Tanh,
// HardSwish, Elu, Gelu, and Add/Sub/Mul/Div with a second operand that broadcasts to
// the output (per-channel bias, scalar, residual tensor).
//
// Binary post-ops are slow in oneDNN's gemm convolution on plain layouts (an order of
// magnitude over the convolution itself), so they are avoided where possible:
//   Fold  a constant per-channel or scalar Add/Sub/Mul/Div before any nonlinearity
//         goes into the weights and bias (like BatchNormalization; conv_prep.h);
//   Sum   the first Add of a tensor of the output's shape (a residual) becomes
//         oneDNN's sum post-op: the residual is copied into the output first and
//         accumulated by the convolution's own store. Where the residual and output
//         are both NHWC (layout plan) the kernel says the output may be written over
//         the residual (runtime/overwrite_input.h): when the residual dies there the
//         memory plan gives both one buffer and nothing is copied.
// The rest runs as oneDNN binary post-ops.

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fx {

struct ConvPostOp {
  enum class Kind { Eltwise, Binary, Fold, Sum } kind = Kind::Eltwise;
  std::string alg;  // "relu", "clip", "logistic", "swish", "tanh", "hardswish", "elu",
                    // "gelu_erf", "add", "sub", "mul", "div"
  float alpha = 0, beta = 0;
  ValueId operand = kNoValue;  // Binary/Fold/Sum: the second operand
  std::string node;            // the node(s) it comes from
};

struct ConvPostOpPlan {
  NodeId conv = kNoNode;
  NodeId bn = kNoNode;  // folded into the weights, when present
  std::vector<ConvPostOp> post_ops;
  std::vector<ValueId> step_inputs;  // [x, Binary and Sum operands in post-op order...]
  ValueId output = kNoValue;
};

// `nodes` in topological order; the Conv first. nullopt with `why` set when the group
// is not a Conv (+BN) + expressible epilogue with a single output.
std::optional<ConvPostOpPlan> plan_conv_post_ops(const Graph& g, const std::vector<NodeId>& nodes,
                                                 std::string* why);

}  // namespace fx
