// SPDX-License-Identifier: Apache-2.0
#pragma once
// Direct depthwise 2-D convolution on NCHW float32 (group == in channels == out
// channels). oneDNN handles plain-layout depthwise convolutions through im2col+gemm,
// which is several times slower than this loop over output rows.

#include <cstdint>

namespace fx {

struct DepthwiseShape {
  int64_t n, c, h, w;      // input
  int64_t oh, ow;          // output
  int64_t kh, kw;          // kernel
  int64_t sh, sw, dh, dw;  // strides, dilations
  int64_t pt, pl;          // leading pads (trailing pads are implied by oh/ow)
};

// y[n,c] = bias[c] + sum over the window of x[n,c] * w[c]; bias may be null.
void depthwise_conv2d(const DepthwiseShape& s, const float* x, const float* w, const float* bias,
                      float* y);

}  // namespace fx
