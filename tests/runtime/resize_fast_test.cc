// SPDX-License-Identifier: Apache-2.0
// Resize over the spatial axes (resize_fast.h) against a per-element reference written
// from the ONNX operator's definition: odd sizes, up and down, every coordinate mode
// the row kernels serve, nearest rounding modes, and shapes large enough to split
// over threads.

#include <cmath>

#include "runtime_test_util.h"

namespace fx {
namespace {

using test::floats;
using test::int64s;
using test::random_floats;
using test::run_op;

double source_coord(const std::string& mode, int64_t x, int64_t in, int64_t out) {
  const double scale = double(out) / double(in);
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") return out == 1 ? 0.0 : double(x) * (in - 1) / double(out - 1);
  if (mode == "asymmetric") return x / scale;
  ADD_FAILURE() << mode;
  return 0;
}

int64_t nearest_index(const std::string& rounding, double c, int64_t in) {
  double v;
  if (rounding == "floor")
    v = std::floor(c);
  else if (rounding == "ceil")
    v = std::ceil(c);
  else if (c - std::floor(c) == 0.5)
    v = rounding == "round_prefer_ceil" ? std::ceil(c) : std::floor(c);
  else
    v = std::round(c);
  return std::clamp<int64_t>(static_cast<int64_t>(v), 0, in - 1);
}

// x: [planes, h, w] flattened; out sizes oh x ow.
std::vector<float> reference(const std::vector<float>& x, int64_t planes, int64_t h, int64_t w,
                             int64_t oh, int64_t ow, bool linear, const std::string& coord,
                             const std::string& rounding) {
  std::vector<float> y(static_cast<std::size_t>(planes * oh * ow));
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        const double cy = source_coord(coord, oy, h, oh), cx = source_coord(coord, ox, w, ow);
        const float* plane = x.data() + p * h * w;
        float v;
        if (!linear) {
          v = plane[nearest_index(rounding, cy, h) * w + nearest_index(rounding, cx, w)];
        } else {
          const double yy = std::clamp(cy, 0.0, double(h - 1)),
                       xx = std::clamp(cx, 0.0, double(w - 1));
          const int64_t y0 = int64_t(std::floor(yy)), x0 = int64_t(std::floor(xx));
          const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
          const double wy = yy - y0, wx = xx - x0;
          v = float((1 - wy) * ((1 - wx) * plane[y0 * w + x0] + wx * plane[y0 * w + x1]) +
                    wy * ((1 - wx) * plane[y1 * w + x0] + wx * plane[y1 * w + x1]));
        }
        y[static_cast<std::size_t>((p * oh + oy) * ow + ox)] = v;
      }
  return y;
}

void expect_matches(int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow, bool linear,
                    const std::string& coord, const std::string& rounding) {
  SCOPED_TRACE(::testing::Message()
               << (linear ? "linear " : "nearest ") << coord << " " << rounding << " " << h << "x"
               << w << " -> " << oh << "x" << ow << ", " << n * c << " planes");
  const auto xv = random_floats(n * c * h * w, 7);
  Tensor x = floats({n, c, h, w}, xv);
  Tensor sizes = int64s({4}, {n, c, oh, ow});
  auto y = run_op("Resize", {x, Tensor(), Tensor(), sizes},
                  {{"mode", std::string(linear ? "linear" : "nearest")},
                   {"coordinate_transformation_mode", coord},
                   {"nearest_mode", rounding}});
  ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{n, c, oh, ow}));
  const auto want = reference(xv, n * c, h, w, oh, ow, linear, coord, rounding);
  const float* got = y[0].data<float>();
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5f) << "element " << i;
}

TEST(ResizeSpatial, NearestEveryRoundingOnOddSizes) {
  for (const char* coord : {"asymmetric", "half_pixel", "align_corners", "pytorch_half_pixel"})
    for (const char* rounding : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      expect_matches(1, 3, 5, 7, 10, 14, false, coord, rounding);  // x2 up
      expect_matches(2, 1, 7, 9, 3, 4, false, coord, rounding);    // down
      expect_matches(1, 2, 5, 3, 13, 11, false, coord, rounding);  // non-integer up
    }
}

TEST(ResizeSpatial, LinearEveryCoordinateModeOnOddSizes) {
  for (const char* coord : {"asymmetric", "half_pixel", "align_corners", "pytorch_half_pixel"}) {
    expect_matches(1, 3, 5, 7, 10, 14, true, coord, "round_prefer_floor");
    expect_matches(2, 2, 7, 9, 3, 4, true, coord, "round_prefer_floor");
    expect_matches(1, 1, 5, 3, 13, 1, true, coord, "round_prefer_floor");  // one output column
    expect_matches(1, 2, 1, 6, 4, 6, true, coord, "round_prefer_floor");   // only H changes
    expect_matches(1, 2, 6, 5, 6, 9, true, coord, "round_prefer_floor");   // only W changes
  }
}

TEST(ResizeSpatial, LargeEnoughToSplitOverThreadsAndChunkBoundaries) {
  // 16 planes x 67 rows of 129: several chunks per thread, boundaries inside planes.
  expect_matches(2, 8, 34, 65, 67, 129, true, "half_pixel", "round_prefer_floor");
  expect_matches(2, 8, 34, 65, 68, 130, false, "asymmetric", "floor");
  expect_matches(1, 16, 80, 80, 40, 40, true, "align_corners", "round_prefer_floor");
}

TEST(ResizeSpatial, ScalesInputAndRankThree) {
  // Scales (not sizes) and a rank-3 tensor: leading axes are planes as well.
  const auto xv = random_floats(3 * 5 * 6, 3);
  Tensor x = floats({3, 5, 6}, xv);
  auto y = run_op("Resize", {x, Tensor(), floats({3}, {1, 2, 2})},
                  {{"mode", std::string("linear")},
                   {"coordinate_transformation_mode", std::string("half_pixel")}});
  ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{3, 10, 12}));
  const auto want = reference(xv, 3, 5, 6, 10, 12, true, "half_pixel", "round_prefer_floor");
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(y[0].data<float>()[i], want[i], 1e-5f);
}

}  // namespace
}  // namespace fx
