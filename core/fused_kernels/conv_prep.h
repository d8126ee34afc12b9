// SPDX-License-Identifier: Apache-2.0
#pragma once
// The constant part of a fused Conv kernel, prepared once per group and shared by its
// layout variants (conv_layout_plan.h): the Conv's attributes, and its weights and bias
// with BatchNormalization and the foldable post-ops (ConvPostOp::Kind::Fold) folded in.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fused_kernels/conv_epilogue.h"
#include "fused_kernels/conv_post_op_plan.h"
#include "ir/graph.h"

namespace fx {

struct ConvPrep {
  ConvPostOpPlan plan;
  std::string name;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad;
  std::vector<int64_t> w_dims;
  std::vector<float> weights, bias;
  std::optional<ConvEpilogue> epilogue;  // set when there is no Binary post-op
  int sum_input = -1;                    // the step input of the Sum operand, -1 none
  bool channels_last = false;            // may read or write NHWC (plan_conv_layouts)
  int64_t x_bytes = 0;                   // the input's size from its static shape, 0 unknown
};

// Throws fx::Error when the weights or bias are not constant (float32 weights), or a
// folded operand does not match the output channels.
std::shared_ptr<ConvPrep> prepare_conv(const Graph& g, const ConvPostOpPlan& plan);

}  // namespace fx
