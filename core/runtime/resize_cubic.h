// SPDX-License-Identifier: Apache-2.0
#pragma once
// Resize's cubic mode, done as one separable pass per resized axis (4 taps each),
// so that its cost grows with 4 x the axes rather than 4^axes. Resize computes
// each axis's source coordinates (its coordinate transformation) and calls this.

#include <cstdint>
#include <vector>

#include "runtime/tensor.h"

namespace fx {

struct CubicAxis {
  std::vector<double> coords;    // source coordinate of each output index
  std::vector<uint8_t> outside;  // tf_crop_and_resize: output index maps outside the input
  bool active = false;           // false: the axis is copied as it is (same length, identity)
};

// y (float32, already sized) from x by Keys' cubic interpolation with coefficient
// `a`; taps beyond the edge repeat the edge, or with `exclude_outside` get weight 0
// (the rest renormalized). Elements outside on any axis become `extrapolation`.
void resize_cubic(const Tensor& x, Tensor& y, const std::vector<CubicAxis>& axes, double a,
                  bool exclude_outside, float extrapolation);

}  // namespace fx
