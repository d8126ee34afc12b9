// SPDX-License-Identifier: Apache-2.0
#include "runtime_test_util.h"

namespace fx {
namespace {

using test::floats;
using test::FloatsNear;
using test::int64s;
using test::run_op;

TEST(Pad, ConstantReflectEdgeOnOneAxis) {
  Tensor x = floats({1, 3}, {1, 2, 3});
  Tensor pads = int64s({4}, {0, 2, 0, 1});
  auto c = run_op("Pad", {x, pads, floats({}, {9})});
  EXPECT_EQ(c[0].dims(), (std::vector<int64_t>{1, 6}));
  EXPECT_THAT(c[0], FloatsNear(std::vector<float>{9, 9, 1, 2, 3, 9}));
  auto r = run_op("Pad", {x, pads}, {{"mode", std::string("reflect")}});
  EXPECT_THAT(r[0], FloatsNear(std::vector<float>{3, 2, 1, 2, 3, 2}));
  auto e = run_op("Pad", {x, pads}, {{"mode", std::string("edge")}});
  EXPECT_THAT(e[0], FloatsNear(std::vector<float>{1, 1, 1, 2, 3, 3}));
}

TEST(Pad, NegativePadsCropAndOuterAxisPads) {
  Tensor x = floats({2, 2}, {1, 2, 3, 4});
  auto y = run_op("Pad", {x, int64s({4}, {1, -1, 0, 0})});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{3, 1}));
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{0, 2, 4}));
}

TEST(Resize, NearestUpsampleByScales) {
  Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor scales = floats({4}, {1, 1, 2, 2});
  auto y = run_op("Resize", {x, Tensor(), scales}, {{"mode", std::string("nearest")}});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(Resize, LinearHalfPixelAndAlignCorners) {
  Tensor x = floats({1, 1, 1, 2}, {0, 4});
  Tensor sizes = int64s({4}, {1, 1, 1, 4});
  // half_pixel: source coords -0.25, 0.25, 0.75, 1.25 -> clamped 0, .25, .75, 1.
  auto h = run_op("Resize", {x, Tensor(), Tensor(), sizes}, {{"mode", std::string("linear")}});
  EXPECT_THAT(h[0], FloatsNear(std::vector<float>{0, 1, 3, 4}));
  auto a = run_op("Resize", {x, Tensor(), Tensor(), sizes},
                  {{"mode", std::string("linear")},
                   {"coordinate_transformation_mode", std::string("align_corners")}});
  EXPECT_THAT(a[0], FloatsNear(std::vector<float>{0, 4.0f / 3, 8.0f / 3, 4}));
}

}  // namespace
}  // namespace fx
