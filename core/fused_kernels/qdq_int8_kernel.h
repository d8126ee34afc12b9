// SPDX-License-Identifier: Apache-2.0
#pragma once
// A QDQ int8 group (analysis/qdq_pattern.cc: DequantizeLinear -> Conv | MatMul | Gemm
// [-> Relu] -> QuantizeLinear) as one oneDNN int8 convolution or matmul: it reads the
// 8-bit activation, multiplies by the 8-bit weights into int32, adds the bias and
// writes the requantized 8-bit output (runtime/int8_conv.h, runtime/int8_matmul.h).
// The float tensors of the unfused form never exist. The output may differ from the
// unfused run by one quantum where the float and the integer arithmetic round a value
// near a half differently.
//
// The groups between them (DequantizeLinear(a), DequantizeLinear(b) -> Add [-> Relu]
// -> QuantizeLinear; DequantizeLinear -> MaxPool -> QuantizeLinear with one scale and
// zero point) run on the 8-bit tensors too: the Add dequantizes, adds and requantizes
// element by element in the float arithmetic of the unfused kernels (so its output is
// the unfused one exactly), the MaxPool pools the 8-bit values.

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
  // An Add's second operand: its DequantizeLinear and 8-bit input (the step's second).
  NodeId dq_x2 = kNoNode;
  ValueId x2 = kNoValue;

  // The step's inputs: x, and x2 for an Add.
  std::vector<ValueId> inputs() const {
    return x2 == kNoValue ? std::vector<ValueId>{x} : std::vector<ValueId>{x, x2};
  }
};

// `nodes`: a group's members. nullopt with `why` when they are not exactly one QDQ
// anchor (Conv, MatMul, Gemm with constant weights; Add; MaxPool) and its
// (de)quantizers with constant quantization parameters.
std::optional<QdqInt8Plan> plan_qdq_int8(const Graph& g, const std::vector<NodeId>& nodes,
                                         std::string* why);

// The kernel of a plan (step inputs plan.inputs(), output {plan.output}). Throws
// fx::Error when a constant is missing or of an unsupported type.
std::shared_ptr<Kernel> make_qdq_int8_kernel(const Graph& g, const QdqInt8Plan& plan);

// The layout plan's view (conv_layout_plan.h). A QDQ 2-D Conv kernel reads x and writes
// its output in NCHW or NHWC memory order (oneDNN's int8 convolution runs on NHWC, so
// NHWC neighbours spare it both reorders): true when `k` is one, with its orders.
bool qdq_int8_conv_layouts(const Kernel* k, bool* x_nhwc, bool* y_nhwc);
// That kernel for other memory orders (a fresh copy; throws for another kernel).
std::shared_ptr<Kernel> qdq_int8_conv_with_layouts(const Kernel& k, bool x_nhwc, bool y_nhwc);
// True for the QDQ Add kernel: elementwise over two 8-bit tensors of the output's
// shape, so it runs unchanged on either memory order.
bool is_qdq_int8_add_kernel(const Kernel* k);

}  // namespace fx
