// SPDX-License-Identifier: Apache-2.0
#pragma once
// Layout costs fixed by a test (conv_layout_costs.h), so that the layout plan's
// decision on a fixture does not depend on this machine's timings: a conversion costs
// `us_per_kib` per KiB, a depthwise Conv `nchw_us` on its NCHW loop and `nhwc_us` on
// its NHWC one.

#include "fused_kernels/conv_layout_costs.h"

namespace fx::testing {

struct FixedLayoutCosts final : LayoutCosts {
  double us_per_kib = 1, nchw_us = 0, nhwc_us = 0;
  FixedLayoutCosts(double per_kib, double nchw, double nhwc)
      : us_per_kib(per_kib), nchw_us(nchw), nhwc_us(nhwc) {}

  double conversion_us(const std::vector<int64_t>& d) const override {
    return us_per_kib * static_cast<double>(d[0] * d[1] * d[2] * d[3]) * 4 / 1024;
  }
  double depthwise_us(const ConvPrep&, const std::vector<int64_t>&, bool nhwc,
                      bool) const override {
    return nhwc ? nhwc_us : nchw_us;
  }
};

}  // namespace fx::testing
