// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-channel ops on NHWC tensors, so that a squeeze-excitation block (MobileNetV3's,
// EfficientNet's) or a classifier head does not convert its Conv's output to NCHW:
//
//   GlobalAveragePool  NHWC in, [N, C, 1, 1] out (the same memory in either layout)
//   Mul by a scale     x [N, C, H, W] NHWC times s [N or 1, C, 1, 1], NHWC out
//
// Adopted by the layout plan (conv_layout_plan.h) only where the full-size tensors are
// NHWC; the tensors keep their logical NCHW dims.

#include <memory>
#include <optional>

#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

namespace fx {

// True when the step is a lone GlobalAveragePool of a rank-4 float32 value.
bool is_nhwc_global_pool_candidate(const Graph& g, const Step& s);
std::shared_ptr<Kernel> make_nhwc_global_pool_kernel();
bool is_nhwc_global_pool_kernel(const Kernel* k);

// For a lone Mul of a static rank-4 float32 [N, C, H, W] value and a [N or 1, C, 1, 1]
// one (either order, H * W > 1): the index of the full-size input; nullopt otherwise.
std::optional<int> nhwc_channel_scale_input(const Graph& g, const Step& s);
// The kernel for a Mul whose full-size input is input `x_index`.
std::shared_ptr<Kernel> make_nhwc_channel_scale_kernel(int x_index);
bool is_nhwc_channel_scale_kernel(const Kernel* k);

}  // namespace fx
