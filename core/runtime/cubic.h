// SPDX-License-Identifier: Apache-2.0
#pragma once
// Keys' cubic convolution weights, shared by Resize (mode cubic) and GridSample
// (bicubic): the weights of the samples at offsets -1, 0, 1, 2 from floor(x), for
// the fraction t = x - floor(x) and the coefficient a (-0.75 as PyTorch and
// ONNX's default, -0.5 as TensorFlow).

#include <array>

namespace fx {

inline std::array<double, 4> cubic_weights(double t, double a) {
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };       // |d| <= 1
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

}  // namespace fx
