// SPDX-License-Identifier: Apache-2.0
#pragma once
// The first half of MobileNet's inverted residual block: a pointwise (1x1) Conv that
// expands the channels, an optional Relu/Clip, a depthwise Conv over the expanded
// tensor, an optional Relu/Clip. As one kernel (fused_kernels/pointwise_depthwise_kernel.h)
// the expanded tensor (the block's largest, 6x its input) is produced a band of rows
// at a time and consumed by the depthwise while the band is in cache, instead of
// going to memory and back.
//
// Used by the analysis (the "pointwise_depthwise" seed pattern) and by codegen, which
// re-checks a group against it before building the kernel.

#include <limits>
#include <optional>

#include "ir/graph.h"

namespace fx {

struct PointwiseDepthwise {
  NodeId pw = kNoNode, pw_act = kNoNode;  // pw_act: Relu or Clip, or none
  NodeId dw = kNoNode, dw_act = kNoNode;
  // The activations as bounds (no activation: -inf, inf; Relu: 0, inf).
  float pw_lo = -std::numeric_limits<float>::infinity();
  float pw_hi = std::numeric_limits<float>::infinity();
  float dw_lo = -std::numeric_limits<float>::infinity();
  float dw_hi = std::numeric_limits<float>::infinity();
  ValueId x = kNoValue;               // the pointwise Conv's input
  ValueId out = kNoValue;             // the last member's output
  std::vector<NodeId> nodes() const;  // members in order
};

// The chain starting at Conv `pw`, or nullopt. Requires float32 constant weights
// (and biases), a 4-D pointwise Conv (1x1, group 1, stride 1, no padding), a 2-D
// depthwise Conv (group = channels, one filter per channel, no dilation, explicit or
// no padding), each intermediate read only by the next member and not a graph
// output; Clip bounds constant.
std::optional<PointwiseDepthwise> match_pointwise_depthwise(const Graph& g, NodeId pw);

}  // namespace fx
