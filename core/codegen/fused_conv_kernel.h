#pragma once
// Conv (+ folded BatchNormalization) + elementwise epilogue as one oneDNN convolution
// with post-ops: the epilogue is applied by oneDNN to each output block while it is in
// registers/cache, and needs no C++ compiler.
//
// plan_conv_post_ops() says whether a group's epilogue is expressible: a chain of
// Relu, LeakyRelu, Clip (constant bounds), Sigmoid, x*Sigmoid(x) (swish), Tanh,
// HardSwish, Elu, Gelu, and Add/Sub/Mul/Div with a second operand that broadcasts to
// the output (per-channel bias, scalar, residual tensor).
//
// Binary post-ops are slow in oneDNN's gemm convolution on plain layouts (an order of
// magnitude over the convolution itself), so they are avoided where possible:
//   Fold  a constant per-channel or scalar Add/Sub/Mul/Div before any nonlinearity
//         goes into the weights and bias (like BatchNormalization);
//   Sum   the first Add of a tensor of the output's shape (a residual) becomes
//         oneDNN's sum post-op: the residual is copied into the output first and
//         accumulated by the convolution's own store. Where the residual and output
//         are both NHWC (layout plan) the kernel says the output may be written over
//         the residual (runtime/overwrite_input.h): when the residual dies there the
//         memory plan gives both one buffer and nothing is copied.
// The rest runs as oneDNN binary post-ops.
//
// How a kernel runs (chosen on its first run, for the input's dims):
//   channels-last  NHWC activations through oneDNN's brgemm convolutions with every
//                  post-op in oneDNN (applied in registers), a single image split into
//                  parts over output rows on the runtime's pool (runtime/dnnl_parts.h);
//                  taken when the layout plan keeps the input or output NHWC, or for an
//                  NCHW kernel larger than 1x1 where oneDNN prefers NHWC (then the input
//                  and output are reordered around it). A map of few rows (7x7) is
//                  split over output channels instead, each part into its own buffer.
//   depthwise      our direct loops: NHWC (codegen/depthwise_nhwc.h, the epilogue on each
//                  row while in cache) when a tensor of it is NHWC, else the runtime's
//                  NCHW loop and our epilogue pass
//   plain          NCHW through oneDNN's gemm convolution; without Binary post-ops the
//                  bias and epilogue are our own pass after it (conv_epilogue.h), much
//                  cheaper than oneDNN's post-ops there. FX_CONV_PLAIN=1 forces this
//                  path (and no channels-last plan) for comparisons.
//
// Layout plan (plan_conv_layouts): a tensor that a fused Conv step writes and only fused
// Conv steps read (as their input or residual) stays NHWC between them; it is converted
// only where something else reads it (Flatten, a generated kernel, a graph output). A
// MaxPool between such steps runs on NHWC too (our direct loop). The tensor keeps its
// logical NCHW dims; only its memory order differs.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

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

// The kernel of a plan; step inputs/outputs are plan.step_inputs / {plan.output}; all
// tensors NCHW. Throws fx::Error when the weights are not constant float32.
std::shared_ptr<Kernel> make_fused_conv_kernel(const Graph& g, const ConvPostOpPlan& plan);

// Which of a fused Conv kernel's tensors are NHWC in memory (dims stay NCHW).
struct ConvLayouts {
  bool x = false;    // step input 0
  bool sum = false;  // the residual of the Sum post-op
  bool out = false;  // the output
  bool operator==(const ConvLayouts&) const = default;
};

// The layout plan over a program's steps: replaces the kernels of fused Conv steps
// (make_fused_conv_kernel) that exchange NHWC tensors by variants that read/write
// them so (sharing the folded weights). A lone Conv step (a runtime kernel, constant
// weights) between such steps becomes a fused Conv kernel without post-ops (its step
// inputs then omit the weights and bias), so that it does not break the chain. Other
// steps are left alone. Returns the number of values kept NHWC. Call it again on the
// full step list after any change to it.
int plan_conv_layouts(const Graph& g, std::vector<Step>& steps);

}  // namespace fx
