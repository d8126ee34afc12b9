// SPDX-License-Identifier: Apache-2.0
#pragma once
// A QDQ int8 group (analysis/qdq_pattern.cc: DequantizeLinear -> Conv | MatMul | Gemm
// [-> Relu] -> QuantizeLinear) as one oneDNN int8 convolution or matmul: it reads the
// 8-bit activation, multiplies by the 8-bit weights into int32, adds the bias and
// writes the requantized 8-bit output (runtime/int8_conv.h, runtime/int8_matmul.h).
// The float tensors of the unfused form never exist. The output may differ from the
// unfused run by one quantum where the float and the integer arithmetic round a value
// near a half differently.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace fx {

struct QdqInt8Plan {
  NodeId dq_x = kNoNode, dq_w = kNoNode, dq_b = kNoNode, anchor = kNoNode, relu = kNoNode,
         q = kNoNode;
  ValueId x = kNoValue;       // the 8-bit activation (the step's input)
  ValueId output = kNoValue;  // the QuantizeLinear's output
};

// `nodes`: a group's members. nullopt with `why` when they are not exactly one QDQ
// anchor with constant weights and quantization parameters.
std::optional<QdqInt8Plan> plan_qdq_int8(const Graph& g, const std::vector<NodeId>& nodes,
                                         std::string* why);

// The kernel of a plan (step input {plan.x}, output {plan.output}). Throws fx::Error
// when a constant is missing or of an unsupported type.
std::shared_ptr<Kernel> make_qdq_int8_kernel(const Graph& g, const QdqInt8Plan& plan);

}  // namespace fx
