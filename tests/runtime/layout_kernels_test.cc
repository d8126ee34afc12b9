// SPDX-License-Identifier: Apache-2.0
// DepthToSpace, SpaceToDepth, MaxPool's Indices with MaxUnpool, LRN and
// MeanVarianceNormalization on values worked out by hand.

#include <cmath>

#include "runtime_test_util.h"
#include "util/error.h"

namespace fx::test {
namespace {

std::vector<float> iota_floats(int n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(LayoutKernels, DepthToSpaceBothChannelOrders) {
  const Tensor x = floats({1, 8, 1, 1}, iota_floats(8));
  // DCR: output channel c, position (i, j) reads channel (i * 2 + j) * 2 + c.
  auto dcr = run_op("DepthToSpace", {x}, {{"blocksize", int64_t{2}}})[0];
  EXPECT_EQ(dcr.dims(), (std::vector<int64_t>{1, 2, 2, 2}));
  EXPECT_THAT(dcr, FloatsNear(std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7}));
  // CRD: reads channel c * 4 + i * 2 + j.
  auto crd =
      run_op("DepthToSpace", {x}, {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}})[0];
  EXPECT_THAT(crd, FloatsNear(iota_floats(8)));
}

TEST(LayoutKernels, SpaceToDepthUndoesDepthToSpace) {
  const Tensor x = floats({2, 8, 3, 2}, random_floats(96, 11));
  auto space = run_op("DepthToSpace", {x}, {{"blocksize", int64_t{2}}})[0];
  EXPECT_EQ(space.dims(), (std::vector<int64_t>{2, 2, 6, 4}));
  auto back = run_op("SpaceToDepth", {space}, {{"blocksize", int64_t{2}}})[0];
  EXPECT_EQ(back.dims(), x.dims());
  EXPECT_THAT(back, FloatsNear(x.to_floats()));
  EXPECT_THROW(
      run_op("SpaceToDepth", {floats({1, 1, 3, 2}, iota_floats(6))}, {{"blocksize", int64_t{2}}}),
      Error);
}

TEST(LayoutKernels, MaxPoolIndicesRowAndColumnMajorThenMaxUnpool) {
  // [[1, 5, 2], [7, 3, 4]] with 2x2 windows: 7 at (1, 0), then 5 at (0, 1).
  const Tensor x = floats({1, 1, 2, 3}, {1, 5, 2, 7, 3, 4});
  GraphBuilder::AttrList k = {{"kernel_shape", std::vector<int64_t>{2, 2}}};
  auto rows = run_op("MaxPool", {x}, k, 2);
  EXPECT_THAT(rows[0], FloatsNear(std::vector<float>{7, 5}));
  EXPECT_EQ(rows[1].to_int64s(), (std::vector<int64_t>{3, 1}));
  auto attrs = k;
  attrs.push_back({"storage_order", int64_t{1}});
  auto cols = run_op("MaxPool", {x}, attrs, 2);
  EXPECT_EQ(cols[1].to_int64s(), (std::vector<int64_t>{1, 2}));
  auto up =
      run_op("MaxUnpool", {rows[0], rows[1]}, {{"kernel_shape", std::vector<int64_t>{2, 2}}})[0];
  EXPECT_EQ(up.dims(), x.dims());
  EXPECT_THAT(up, FloatsNear(std::vector<float>{0, 5, 0, 7, 0, 0}));
}

TEST(LayoutKernels, MaxUnpoolIntoALargerOutputShapeKeepsCoordinates) {
  // Indices 5, 7, 13, 15 of the default 4 x 4 output are (1, 1), (1, 3), (3, 1),
  // (3, 3); in the requested 5 x 5 output they land at offsets 6, 8, 16, 18.
  auto out = run_op(
      "MaxUnpool",
      {floats({1, 1, 2, 2}, {5, 6, 7, 8}), int64s({1, 1, 2, 2}, {5, 7, 13, 15}),
       int64s({4}, {1, 1, 5, 5})},
      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}})[0];
  EXPECT_EQ(out.dims(), (std::vector<int64_t>{1, 1, 5, 5}));
  std::vector<float> want(25, 0.0f);
  want[6] = 5;
  want[8] = 6;
  want[16] = 7;
  want[18] = 8;
  EXPECT_THAT(out, FloatsNear(want));
}

TEST(LayoutKernels, LrnSumsSquaresOverNeighbouringChannels) {
  const float a = 0.3f, b = 0.75f, bias = 2.0f;
  auto out = run_op("LRN", {floats({1, 2, 1, 1}, {1, 2})},
                    {{"size", int64_t{3}}, {"alpha", a}, {"beta", b}, {"bias", bias}})[0];
  const float denom = std::pow(bias + a / 3 * (1 + 4), b);
  EXPECT_THAT(out, FloatsNear(std::vector<float>{1 / denom, 2 / denom}));
}

TEST(LayoutKernels, MeanVarianceNormalizationPerChannel) {
  // Channel 0 holds {1, 3} (mean 2, std 1), channel 1 {10, 10} (std 0).
  auto out = run_op("MeanVarianceNormalization", {floats({1, 2, 1, 2}, {1, 3, 10, 10})})[0];
  EXPECT_THAT(out, FloatsNear(std::vector<float>{-1, 1, 0, 0}));
}

}  // namespace
}  // namespace fx::test
