// SPDX-License-Identifier: Apache-2.0
#pragma once
// Direct depthwise 2-D convolution on channels-last (NHWC) float32, with the fused
// group's epilogue applied to each output row while it is in cache. Channels are the
// innermost axis, so every tap is a contiguous vector multiply-add over channels
// (the NCHW loop of runtime/depthwise_conv.h strides over columns instead).
//
//   DepthwiseNhwc dw(shape, folded_weights_oihw, bias);
//   dw.run(x_nhwc, y_nhwc, &epilogue, {residual_nhwc});

#include <cstdint>
#include <vector>

#include "fused_kernels/conv_epilogue.h"
#include "runtime/depthwise_conv.h"

namespace fx {

class DepthwiseNhwc {
 public:
  // `w` is [C, 1, kh, kw] (ONNX), `bias` [C] (may be empty: zero).
  DepthwiseNhwc(const DepthwiseShape& s, const std::vector<float>& w,
                const std::vector<float>& bias);
  // y[n, oh, ow, c] = epilogue(bias[c] + window sum); residuals are NHWC tensors of y's
  // shape, one per AddResidual op of `ep` (nullptr: no epilogue). Splits output rows
  // over the runtime's thread pool. With `y_nchw` (no residuals) y is written NCHW
  // instead: rows are computed and their epilogue applied in a per-thread buffer,
  // then transposed into y, in place of a separate NHWC -> NCHW reorder of the
  // whole output (EfficientNet's depthwise + SiLU feeds an NCHW squeeze-excite).
  void run(const float* x, float* y, const ConvEpilogue* ep,
           const std::vector<const float*>& residuals, bool y_nchw = false) const;
  // Whether run_in_place takes this shape: one image, a square odd kernel, stride 1, no
  // dilation, "same" padding (output rows and columns those of the input).
  bool can_run_in_place() const;
  // The convolution written over its own input `xy` (the memory plan gave the output
  // the input's memory: overwritable_input). Each band of rows keeps the rows it has
  // computed in a small ring until no later row of the band reads the input row
  // underneath, and the rows around band boundaries are saved before any band writes;
  // the output never needs memory of its own (on MobileNetV2 a 1.6-1.8 MB buffer less
  // to bring in from memory when the caches are cold). No residuals.
  void run_in_place(float* xy, const ConvEpilogue* ep) const;
  // Output rows [r0, r1) of a single image on the calling thread, reading input rows
  // from `x`, which holds them from row `first_row` on (a band of the image, e.g. one
  // just expanded by a pointwise Conv: fused_kernels/pointwise_depthwise_kernel.h); y is
  // the whole output.
  void run_rows(const float* x, int64_t first_row, float* y, const ConvEpilogue* ep, int64_t r0,
                int64_t r1) const {
    rows(x - first_row * s_.w * s_.c, y, ep, {}, r0, r1);
  }

 private:
  void rows(const float* x, float* y, const ConvEpilogue* ep,
            const std::vector<const float*>& residuals, int64_t r0, int64_t r1,
            bool y_nchw = false) const;
  DepthwiseShape s_;
  std::vector<float> w_;          // [kh * kw][C]
  std::vector<float> w_blocked_;  // [C / 16][kh * kw][16], then the last 16 channels' block
                                  // when C is no multiple of 16 (C >= 16)
  std::vector<float> bias_;       // [C]
};

}  // namespace fx
