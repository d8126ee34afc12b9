// SPDX-License-Identifier: Apache-2.0
// TopK, NonMaxSuppression and RoiAlign on cases small enough to work out by hand.

#include "runtime_test_util.h"
#include "util/error.h"

namespace fx::test {
namespace {

TEST(DetectionKernels, TopKLargestAndSmallestBreakTiesByLowerIndex) {
  const Tensor x = floats({2, 4}, {1, 3, 2, 3, 5, 0, 5, -1});
  auto big = run_op("TopK", {x, int64s({1}, {2})}, {}, 2);
  EXPECT_THAT(big[0], FloatsNear(std::vector<float>{3, 3, 5, 5}));
  EXPECT_EQ(big[1].to_int64s(), (std::vector<int64_t>{1, 3, 0, 2}));
  EXPECT_EQ(big[0].dims(), (std::vector<int64_t>{2, 2}));
  auto small = run_op("TopK", {x, int64s({1}, {3})}, {{"largest", int64_t{0}}}, 2);
  EXPECT_THAT(small[0], FloatsNear(std::vector<float>{1, 2, 3, -1, 0, 5}));
  EXPECT_EQ(small[1].to_int64s(), (std::vector<int64_t>{0, 2, 1, 3, 1, 0}));
}

TEST(DetectionKernels, TopKAlongAnInnerAxis) {
  // [2, 3] along axis 0: the larger of each column, then the smaller.
  auto out = run_op("TopK", {floats({2, 3}, {1, 9, 4, 6, 2, 8}), int64s({1}, {1})},
                    {{"axis", int64_t{0}}}, 2);
  EXPECT_THAT(out[0], FloatsNear(std::vector<float>{6, 9, 8}));
  EXPECT_EQ(out[1].to_int64s(), (std::vector<int64_t>{1, 0, 1}));
}

TEST(DetectionKernels, TopKRejectsKLargerThanTheAxis) {
  EXPECT_THROW(run_op("TopK", {floats({3}, {1, 2, 3}), int64s({1}, {4})}, {}, 2), Error);
}

// Box 1 overlaps box 0 with IoU 0.9 / 1.1; box 2 is disjoint.
std::vector<Tensor> nms_inputs(float score_threshold) {
  return {floats({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3}),
          floats({1, 1, 3}, {0.9f, 0.8f, 0.7f}), int64s({1}, {3}), floats({1}, {0.5f}),
          floats({1}, {score_threshold})};
}

TEST(DetectionKernels, NonMaxSuppressionDropsOverlapsAndLowScores) {
  auto out = run_op("NonMaxSuppression", nms_inputs(0.0f));
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out[0].to_int64s(), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  auto strict = run_op("NonMaxSuppression", nms_inputs(0.75f));
  // Box 2 (0.7) is under the threshold; box 1 still overlaps box 0.
  EXPECT_EQ(strict[0].to_int64s(), (std::vector<int64_t>{0, 0, 0}));
}

TEST(DetectionKernels, NonMaxSuppressionCenterBoxesAndOutputLimit) {
  // Centers 0, 0.05 and 5 with unit size: the second overlaps the first.
  auto in = std::vector<Tensor>{floats({1, 3, 4}, {0, 0, 1, 1, 0.05f, 0, 1, 1, 5, 5, 1, 1}),
                                floats({1, 1, 3}, {0.5f, 0.9f, 0.1f}), int64s({1}, {1}),
                                floats({1}, {0.5f})};
  auto out = run_op("NonMaxSuppression", in, {{"center_point_box", int64_t{1}}});
  EXPECT_EQ(out[0].to_int64s(), (std::vector<int64_t>{0, 0, 1}));
}

TEST(DetectionKernels, RoiAlignAveragesARampAtTheRoiCenter) {
  // x[h][w] = w on a 10 x 10 plane: bilinear samples of a linear ramp average to
  // the ramp at each bin's center (half-pixel coordinates shift them by -0.5).
  std::vector<float> ramp(100);
  for (int i = 0; i < 100; ++i) ramp[i] = static_cast<float>(i % 10);
  auto out = run_op("RoiAlign",
                    {floats({1, 1, 10, 10}, ramp), floats({1, 4}, {2, 2, 6, 6}), int64s({1}, {0})},
                    {{"sampling_ratio", int64_t{2}},
                     {"output_height", int64_t{1}},
                     {"output_width", int64_t{2}}});
  // Two bins of width 2: centers 3 - 0.5 and 5 - 0.5.
  EXPECT_THAT(out[0], FloatsNear(std::vector<float>{2.5f, 4.5f}));
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{1, 1, 1, 2}));
}

}  // namespace
}  // namespace fx::test
