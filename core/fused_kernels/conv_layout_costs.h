// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the layout plan (conv_layout_plan.h) weighs where bytes of conversion alone do
// not decide: a depthwise Conv runs on either layout without converting anything (the
// NCHW loop of runtime/depthwise_conv.h, or depthwise_nhwc.h), so keeping its tensors
// NHWC gains only what the NHWC loop is faster, and that gain has to pay for the
// conversions the 1x1 Convs around it then run. Which one wins depends on the CPU
// (vector width, caches) and the shape, so both are measured here, once per shape in a
// process, on one thread (the plan does not know the run's thread count, and the two
// sides split over threads alike), best of a few runs.
//
//   const LayoutCosts& costs = measured_layout_costs();
//   double gain = costs.depthwise_us(prep, x, false, false) - costs.depthwise_us(prep, x, true,
//   true); bool keep = gain > costs.conversion_us(x_of_the_1x1) +
//   costs.conversion_us(out_of_the_1x1);

#include <cstdint>
#include <vector>

#include "fused_kernels/conv_prep.h"

namespace fx {

class LayoutCosts {
 public:
  virtual ~LayoutCosts() = default;
  // Microseconds to convert a float32 [n, c, h, w] tensor between NCHW and NHWC, the
  // conversion a Conv kernel runs on a tensor not in its path's layout.
  virtual double conversion_us(const std::vector<int64_t>& dims) const = 0;
  // Microseconds of the depthwise Conv `p` (with its epilogue) on input dims `x`:
  // `nhwc`: the NHWC loop reading NHWC and writing NHWC (`out_nhwc`) or NCHW; else the
  // NCHW loop and its epilogue pass.
  virtual double depthwise_us(const ConvPrep& p, const std::vector<int64_t>& x, bool nhwc,
                              bool out_nhwc) const = 0;
};

// Whether the fused Conv kernel runs `p` on input dims `x` with the depthwise path
// (conv_path_depthwise.cc), whose NCHW side converts nothing.
bool runs_depthwise_path(const ConvPrep& p, const std::vector<int64_t>& x);

// The costs measured on this machine (memoized per shape; thread-safe).
const LayoutCosts& measured_layout_costs();

}  // namespace fx
