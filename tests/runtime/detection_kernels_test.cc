// SPDX-License-Identifier: Apache-2.0
// TopK, NonMaxSuppression and RoiAlign on cases small enough to work out by hand,
// and NonMaxSuppression of thousands of boxes against the plain all-pairs algorithm.

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

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

// ONNX's greedy NMS written the plain way: every candidate, best score first (ties
// by lower index), against every box kept so far in its class.
std::vector<int64_t> nms_reference(const std::vector<float>& boxes,
                                   const std::vector<float>& scores, int64_t classes,
                                   int64_t max_out, float iou_thr) {
  const int64_t n = static_cast<int64_t>(boxes.size() / 4);
  auto iou = [&](int64_t a, int64_t b) {
    auto lo = [&](int64_t i, int k) { return std::min(boxes[i * 4 + k], boxes[i * 4 + k + 2]); };
    auto hi = [&](int64_t i, int k) { return std::max(boxes[i * 4 + k], boxes[i * 4 + k + 2]); };
    const float ih = std::min(hi(a, 0), hi(b, 0)) - std::max(lo(a, 0), lo(b, 0));
    const float iw = std::min(hi(a, 1), hi(b, 1)) - std::max(lo(a, 1), lo(b, 1));
    if (ih <= 0 || iw <= 0) return 0.0f;
    const float inter = ih * iw;
    const float uni = (hi(a, 0) - lo(a, 0)) * (hi(a, 1) - lo(a, 1)) +
                      (hi(b, 0) - lo(b, 0)) * (hi(b, 1) - lo(b, 1)) - inter;
    return uni > 0 ? inter / uni : 0.0f;
  };
  std::vector<int64_t> out;
  for (int64_t c = 0; c < classes; ++c) {
    const float* sp = scores.data() + c * n;
    std::vector<int64_t> order(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return sp[a] > sp[b]; });
    std::vector<int64_t> kept;
    for (int64_t i : order) {
      if (static_cast<int64_t>(kept.size()) >= max_out) break;
      bool keep = true;
      for (int64_t k : kept) keep = keep && !(iou(i, k) > iou_thr);
      if (!keep) continue;
      kept.push_back(i);
      out.insert(out.end(), {0, c, i});
    }
  }
  return out;
}

// Boxes as torchvision's batched NMS exports them: each of `regions` groups shifted
// to its own square, so that nearly every box survives; a few boxes of every size
// (down to none, and with `spanning` one as wide as all regions together) mixed in.
std::vector<float> batched_boxes(int64_t n, int regions, uint32_t seed, bool spanning) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> b;
  for (int64_t i = 0; i < n; ++i) {
    const float off = static_cast<float>(i % regions) * 330.0f;
    const float y = u(rng) * 300, x = u(rng) * 300;
    const float h = i % 97 == 5 ? 0.0f : 2 + u(rng) * 60, w = 2 + u(rng) * 60;
    // Corners in either order: NMS takes the min and max of each pair.
    if (i % 7 == 3)
      b.insert(b.end(), {off + y + h, off + x + w, off + y, off + x});
    else
      b.insert(b.end(), {off + y, off + x, off + y + h, off + x + w});
  }
  if (spanning) {
    b[4 * (n / 2) + 1] = 0.0f;
    b[4 * (n / 2) + 3] = 330.0f * static_cast<float>(regions);
  }
  return b;
}

TEST(DetectionKernels, NonMaxSuppressionOfManyBoxesMatchesThePlainAlgorithm) {
  const int64_t n = 3000, classes = 2;
  for (const float thr : {0.5f, 0.0f, 0.9f, -0.5f}) {
    for (const bool spanning : {false, true}) {
      const auto boxes = batched_boxes(n, 40, 7, spanning);
      std::mt19937 rng(11);
      std::uniform_real_distribution<float> u(0.0f, 1.0f);
      std::vector<float> scores(static_cast<std::size_t>(classes * n));
      // Scores on a coarse grid, so that ties (broken by the lower index) are common.
      for (auto& s : scores) s = std::floor(u(rng) * 50) / 50;
      for (const int64_t max_out : {int64_t{100000}, int64_t{25}}) {
        auto out =
            run_op("NonMaxSuppression", {floats({1, n, 4}, boxes), floats({1, classes, n}, scores),
                                         int64s({1}, {max_out}), floats({1}, {thr})});
        const auto want = nms_reference(boxes, scores, classes, max_out, thr);
        EXPECT_EQ(out[0].to_int64s(), want)
            << "iou_threshold " << thr << ", max " << max_out << ", spanning box " << spanning;
        EXPECT_EQ(out[0].dims()[0] * 3, static_cast<int64_t>(want.size()));
      }
    }
  }
}

TEST(DetectionKernels, NonMaxSuppressionWithCoordinatesThatAreNotFinite) {
  // An infinite box overlaps nothing by a finite IoU (inf / inf); the NaN box never
  // suppresses. Both still come out as kept, in score order.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0, inf, inf, 0, 0, NAN, 1, 0, 0, 1, 1.1f};
  const std::vector<float> scores = {0.9f, 0.8f, 0.7f, 0.6f};
  auto out = run_op("NonMaxSuppression", {floats({1, 4, 4}, boxes), floats({1, 1, 4}, scores),
                                          int64s({1}, {10}), floats({1}, {0.5f})});
  EXPECT_EQ(out[0].to_int64s(), nms_reference(boxes, scores, 1, 10, 0.5f));
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
