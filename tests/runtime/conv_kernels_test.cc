// SPDX-License-Identifier: Apache-2.0
// Conv through the depthwise loop and through oneDNN (grouped, strided, dilated,
// asymmetric pads), against a direct reference.

#include <random>

#include "runtime_test_util.h"

namespace fx {
namespace {

struct ConvCase {
  int64_t n, c, h, w, oc, k, group, stride, dilation, pad_top, pad_left, pad_bottom, pad_right;
};

std::vector<float> reference_conv(const ConvCase& p, const std::vector<float>& x,
                                  const std::vector<float>& w, const std::vector<float>& b,
                                  int64_t oh, int64_t ow) {
  std::vector<float> y(static_cast<std::size_t>(p.n * p.oc * oh * ow));
  const int64_t cg = p.c / p.group, og = p.oc / p.group;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.oc; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = b[o];
          int64_t g = o / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ki = 0; ki < p.k; ++ki)
              for (int64_t kj = 0; kj < p.k; ++kj) {
                int64_t ii = i * p.stride - p.pad_top + ki * p.dilation;
                int64_t jj = j * p.stride - p.pad_left + kj * p.dilation;
                if (ii < 0 || ii >= p.h || jj < 0 || jj >= p.w) continue;
                acc += x[((n * p.c + g * cg + ci) * p.h + ii) * p.w + jj] *
                       w[((o * cg + ci) * p.k + ki) * p.k + kj];
              }
          y[((n * p.oc + o) * oh + i) * ow + j] = static_cast<float>(acc);
        }
  return y;
}

void check(const ConvCase& p) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1, 1);
  auto rnd = [&](int64_t count) {
    std::vector<float> v(static_cast<std::size_t>(count));
    for (auto& e : v) e = d(rng);
    return v;
  };
  auto x = rnd(p.n * p.c * p.h * p.w), w = rnd(p.oc * (p.c / p.group) * p.k * p.k), b = rnd(p.oc);
  const int64_t ek = (p.k - 1) * p.dilation + 1;
  const int64_t oh = (p.h + p.pad_top + p.pad_bottom - ek) / p.stride + 1;
  const int64_t ow = (p.w + p.pad_left + p.pad_right - ek) / p.stride + 1;
  auto y = test::run_op(
      "Conv",
      {test::floats({p.n, p.c, p.h, p.w}, x), test::floats({p.oc, p.c / p.group, p.k, p.k}, w),
       test::floats({p.oc}, b)},
      {{"group", p.group},
       {"strides", std::vector<int64_t>{p.stride, p.stride}},
       {"dilations", std::vector<int64_t>{p.dilation, p.dilation}},
       {"pads", std::vector<int64_t>{p.pad_top, p.pad_left, p.pad_bottom, p.pad_right}}},
      1, {1, 2});
  ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{p.n, p.oc, oh, ow}));
  EXPECT_THAT(y[0], test::FloatsNear(reference_conv(p, x, w, b, oh, ow)));
}

TEST(Conv, DepthwiseStride1Pad1) {
  check({1, 8, 9, 11, 8, 3, 8, 1, 1, 1, 1, 1, 1});
}
TEST(Conv, DepthwiseStride2AsymmetricPads) {
  check({2, 4, 10, 7, 4, 3, 4, 2, 1, 0, 1, 1, 0});
}
TEST(Conv, DepthwiseDilated5x5) {
  check({1, 3, 12, 12, 3, 5, 3, 1, 2, 4, 4, 4, 4});
}
// Stride phases with dilation: tap offsets land in every phase, pads differ per side.
TEST(Conv, DepthwiseStride3Dilation2) {
  check({1, 5, 13, 11, 5, 3, 5, 3, 2, 2, 1, 0, 2});
}
// 1x1 taps: no extra columns, the output is written in place.
TEST(Conv, DepthwiseOneByOneStride2) {
  check({1, 6, 8, 9, 6, 1, 6, 2, 1, 0, 0, 0, 0});
}
// 49 taps (not one of the unrolled tap counts), padding wider than the image's half.
TEST(Conv, Depthwise7x7) {
  check({2, 4, 5, 6, 4, 7, 4, 1, 1, 3, 3, 3, 3});
}
// Several 32-output register blocks and a tail per plane (ConvNeXt's 7x7, EfficientNet's
// 5x5 at strides 1 and 2): every block must see every tap.
TEST(Conv, Depthwise7x7SeveralBlocks) {
  check({1, 3, 17, 19, 3, 7, 3, 1, 1, 3, 3, 3, 3});
}
TEST(Conv, Depthwise5x5Stride1) {
  check({1, 5, 14, 14, 5, 5, 5, 1, 1, 2, 2, 2, 2});
}
TEST(Conv, Depthwise5x5Stride2OddSize) {
  check({2, 3, 15, 13, 3, 5, 3, 2, 1, 2, 2, 2, 2});
}
TEST(Conv, GroupedThroughOneDnn) {
  check({1, 4, 6, 6, 6, 3, 2, 1, 1, 1, 1, 1, 1});
}
TEST(Conv, DenseStridedThroughOneDnn) {
  check({1, 3, 9, 9, 5, 3, 1, 2, 1, 1, 1, 0, 0});
}
// Big enough that the output channels are split into one oneDNN part per thread.
TEST(Conv, OutputChannelsSplitOverThreads) {
  check({1, 16, 24, 24, 64, 3, 1, 1, 1, 1, 1, 1, 1});
}
// Channels-last path split over output rows, with padding inside the first and last slice.
TEST(Conv, RowSplitStridedPadded) {
  check({1, 32, 29, 27, 64, 3, 1, 2, 1, 1, 1, 1, 0});
}
TEST(Conv, RowSplitOneByOne) {
  check({1, 64, 20, 20, 96, 1, 1, 1, 1, 0, 0, 0, 0});
}
// Two images: not split, one primitive.
TEST(Conv, BatchOfTwoNotSplit) {
  check({2, 16, 12, 12, 48, 3, 1, 1, 1, 1, 1, 1, 1});
}

}  // namespace
}  // namespace fx
