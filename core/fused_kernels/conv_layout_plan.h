// SPDX-License-Identifier: Apache-2.0
#pragma once
// Layout plan: a tensor that a fused Conv step writes and only fused Conv steps read (as
// their input or residual) stays NHWC between them; it is converted only where
// something else reads it (Flatten, a generated kernel, a graph output). A MaxPool
// between such steps runs on NHWC too (nhwc_max_pool.h), and so do pointwise+depthwise
// kernels (pointwise_depthwise_kernel.h) and channel Concats joining such steps'
// outputs (nhwc_concat.h: Inception and SqueezeNet blocks). Elementwise steps between
// them (a Relu left unfused, a generated Add+Relu) pass NHWC through with their own
// kernels when every input has the output's shape or is a scalar: such a kernel does
// not see the memory order. Muls by a per-channel scale pass it through with a kernel
// of their own, and GlobalAveragePools read it (nhwc_channel_ops.h: squeeze-excitation
// blocks, classifier heads), and so do inference BatchNormalizations (nhwc_batch_norm.h:
// DenseNet's pre-activation after each Concat). AveragePools run on NHWC like MaxPools,
// with a zero Pad before them folded in (pool_pad_fold.h). QDQ int8 groups
// (qdq_int8_kernel.h) take part on their 8-bit tensors: 2-D Convs read and write NHWC,
// Adds pass it through, MaxPools pool it. The tensor keeps its logical NCHW dims; only its memory order differs.

#include <vector>

#include "fused_kernels/conv_layout_costs.h"
#include "ir/graph.h"
#include "runtime/executor.h"

namespace fx {

// The layout plan over a program's steps: replaces the kernels of fused Conv steps
// (make_fused_conv_kernel) that exchange NHWC tensors by variants that read/write
// them so (sharing the folded weights). A lone Conv step (a runtime kernel, constant
// weights) between such steps becomes a fused Conv kernel without post-ops (its step
// inputs then omit the weights and bias), so that it does not break the chain. Other
// steps are left alone. Returns the number of values kept NHWC. Call it again on the
// full step list after any change to it. A component of NHWC values with a depthwise
// Conv is weighed in time by `costs` (null: measured_layout_costs(), conv_layout_costs.h).
int plan_conv_layouts(const Graph& g, std::vector<Step>& steps, const LayoutCosts* costs = nullptr);

}  // namespace fx
