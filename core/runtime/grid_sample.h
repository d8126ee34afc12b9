// SPDX-License-Identifier: Apache-2.0
#pragma once
// GridSample (opset 16, 4-D): each output pixel reads the input at a normalized
// (x, y) location from the grid, by nearest, bilinear or bicubic interpolation,
// with zeros, border or reflection padding.
//
//   grid_sample(attrs, {x, n, c, h, w}, grid, ho, wo, y);   // y: [n, c, ho, wo]
//
// grid_sample works on blocks of output pixels: it turns each pixel's grid point
// into its taps (1, 4 or 16 plane offsets with their weights, padding applied once)
// and then runs every channel over the same taps, spread over threads by image and
// block. grid_sample_reference samples each pixel of each channel on its own in
// double precision, as the ONNX reference does; the tests hold the two together.

#include <cstdint>

namespace fx {

enum class GridSampleMode { Nearest, Bilinear, Bicubic };
enum class GridSamplePadding { Zeros, Border, Reflection };

struct GridSampleAttrs {
  GridSampleMode mode = GridSampleMode::Bilinear;
  GridSamplePadding padding = GridSamplePadding::Zeros;
  bool align_corners = false;
};

// x: [n, c, h, w]; grid: [n, ho, wo, 2] of (x, y) in [-1, 1]; y: [n, c, ho, wo].
struct GridSampleShape {
  int64_t n, c, h, w, ho, wo;
};

void grid_sample(const GridSampleAttrs& a, const GridSampleShape& s, const float* x,
                 const float* grid, float* y);
void grid_sample_reference(const GridSampleAttrs& a, const GridSampleShape& s, const float* x,
                           const float* grid, float* y);

}  // namespace fx
