// SPDX-License-Identifier: Apache-2.0
#pragma once
// Conv (+ folded BatchNormalization) + elementwise epilogue as one oneDNN convolution
// with post-ops: the epilogue is applied by oneDNN to each output block while it is in
// registers/cache, and needs no C++ compiler. The parts, one file each:
//
//   conv_post_op_plan.h  which groups qualify, and how each epilogue op is applied
//                        (folded into the weights, oneDNN's sum, eltwise or binary post-op)
//   conv_prep.h          the weights and bias with BatchNormalization and the foldable
//                        post-ops folded in, prepared once per group
//   conv_path.h          the execution paths (depthwise, Winograd, channels-last, plain),
//                        one chosen when the kernel first meets an input's dims
//   conv_layout_plan.h   which tensors stay NHWC between fused Conv steps
//   nhwc_max_pool.h      the MaxPool and AveragePool that keep a chain NHWC
//   pool_pad_fold.h      a zero Pad before an AveragePool folded into the pool
//   nhwc_batch_norm.h    a BatchNormalization (+ Relu) no Conv takes, on NHWC
//
// This kernel picks the path and converts the tensors whose layout (ConvLayouts) is not
// the path's own.

#include <memory>

#include "fused_kernels/conv_post_op_plan.h"
#include "ir/graph.h"
#include "runtime/kernel.h"

namespace fx {

struct ConvPrep;

// Which of a fused Conv kernel's tensors are NHWC in memory (dims stay NCHW).
struct ConvLayouts {
  bool x = false;    // step input 0
  bool sum = false;  // the residual of the Sum post-op
  bool out = false;  // the output
  bool operator==(const ConvLayouts&) const = default;
};

// The kernel of a plan; step inputs/outputs are plan.step_inputs / {plan.output}; all
// tensors NCHW. Throws fx::Error when the weights are not constant float32.
std::shared_ptr<Kernel> make_fused_conv_kernel(const Graph& g, const ConvPostOpPlan& plan);

// A layout variant of a prepared group (the layout plan's).
std::shared_ptr<Kernel> make_fused_conv_kernel(std::shared_ptr<const ConvPrep> prep,
                                               ConvLayouts layouts);

// The prep of a fused Conv kernel and, when `layouts` is given, its layouts; null when
// `k` is not one.
std::shared_ptr<const ConvPrep> fused_conv_prep(const Kernel* k, ConvLayouts* layouts = nullptr);

}  // namespace fx
