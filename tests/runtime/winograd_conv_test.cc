// SPDX-License-Identifier: Apache-2.0
// oneDNN's Winograd convolution (runtime/winograd_conv.h): against a double reference in
// NCHW and NHWC, split over rows and over channels, with a ReLU and a residual sum
// (also written over the residual); the shape rule; the Conv kernel takes it for an
// eligible convolution and falls back to the direct one for the others.

#include <cmath>
#include <cstdlib>

#include "runtime/winograd_conv.h"
#include "runtime_test_util.h"

namespace fx {
namespace {

using Ints = std::vector<int64_t>;

// The scaled allclose of fxc profile (profile/equivalence.h).
::testing::AssertionResult scaled_close(const std::vector<float>& got,
                                        const std::vector<double>& want) {
  double scale = 1;
  for (double e : want) scale = std::max(scale, std::fabs(e));
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-5 * scale + 1e-3 * std::fabs(want[i])))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got[i] << " vs " << want[i];
  return ::testing::AssertionSuccess();
}

std::vector<float> to_nhwc(const std::vector<float>& v, int64_t c, int64_t hw) {
  std::vector<float> o(v.size());
  for (int64_t k = 0; k < c; ++k)
    for (int64_t p = 0; p < hw; ++p) o[p * c + k] = v[k * hw + p];
  return o;
}

std::vector<float> to_nchw(const std::vector<float>& v, int64_t c, int64_t hw) {
  std::vector<float> o(v.size());
  for (int64_t k = 0; k < c; ++k)
    for (int64_t p = 0; p < hw; ++p) o[k * hw + p] = v[p * c + k];
  return o;
}

struct Case {
  int64_t c, hw;
  bool nhwc, in_place;
  int threads;
};

// relu(conv3x3(x, pad 1) + bias + residual), NCHW, in double.
std::vector<double> reference(const Case& k, const std::vector<float>& x,
                              const std::vector<float>& w, const std::vector<float>& b,
                              const std::vector<float>& r) {
  const int64_t c = k.c, h = k.hw;
  std::vector<double> y(static_cast<std::size_t>(c * h * h));
  for (int64_t o = 0; o < c; ++o)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < h; ++j) {
        double acc = b[o] + r[(o * h + i) * h + j];
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t u = 0; u < 3; ++u)
            for (int64_t v = 0; v < 3; ++v) {
              const int64_t ii = i + u - 1, jj = j + v - 1;
              if (ii < 0 || ii >= h || jj < 0 || jj >= h) continue;
              acc += double(x[(ci * h + ii) * h + jj]) * w[((o * c + ci) * 3 + u) * 3 + v];
            }
        y[(o * h + i) * h + j] = std::max(acc, 0.0);
      }
  return y;
}

// A 3x3 "same" convolution of `c` channels on a square map of `hw`, one image.
WinogradConvSpec same_3x3(int64_t c, int64_t hw, const float* weights) {
  WinogradConvSpec s;
  s.ic = s.oc = c;
  s.ih = s.iw = s.oh = s.ow = hw;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  s.weights = weights;
  return s;
}

class WinogradCases : public ::testing::TestWithParam<Case> {};
INSTANTIATE_TEST_SUITE_P(
    Splits, WinogradCases,
    ::testing::Values(Case{64, 28, false, false, 2},  // row parts
                      Case{64, 28, true, true, 2},    // row parts, NHWC, over the residual
                      Case{64, 14, false, false, 2},  // channel parts
                      Case{64, 14, true, true, 2},    // channel parts, NHWC, over the residual
                      Case{64, 9, true, false, 1}),   // one part, odd map
    [](const auto& info) {
      const Case& k = info.param;
      return "hw" + std::to_string(k.hw) + (k.nhwc ? "_nhwc" : "_nchw") +
             (k.in_place ? "_in_place" : "") + "_t" + std::to_string(k.threads);
    });

TEST_P(WinogradCases, MatchesReference) {
  const Case k = GetParam();
  const int64_t c = k.c, hw = k.hw * k.hw;
  auto x = test::random_floats(c * hw, 1), w = test::random_floats(c * c * 9, 2),
       b = test::random_floats(c, 3), r = test::random_floats(c * hw, 4);
  for (auto& e : w) e *= 0.1f;
  WinogradConvSpec s = same_3x3(c, k.hw, w.data());
  s.name = "wino";
  s.x_nhwc = s.y_nhwc = s.residual_nhwc = k.nhwc;
  s.bias = b.data();
  s.post_ops.append_sum(1.f);
  s.post_ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  s.has_sum = true;
  unsetenv("FX_WINOGRAD");
  auto conv = WinogradConv::make(s, k.threads);
  ASSERT_TRUE(conv);
  EXPECT_NE(conv->description().find("wino"), std::string::npos) << conv->description();
  const auto xin = k.nhwc ? to_nhwc(x, c, hw) : x;
  const auto rin = k.nhwc ? to_nhwc(r, c, hw) : r;
  std::vector<float> y(static_cast<std::size_t>(c * hw), -7.f);
  if (k.in_place) y = rin;
  const auto want = reference(k, x, w, b, r);
  for (int run = 0; run < 2; ++run) {
    if (k.in_place) y = rin;
    conv->run(xin.data(), k.in_place ? y.data() : rin.data(), y.data(), k.threads);
    EXPECT_TRUE(scaled_close(k.nhwc ? to_nchw(y, c, hw) : y, want)) << "run " << run;
  }
}

TEST(Winograd, ShapeRule) {
  const Ints k3{3, 3}, s1{1, 1}, d1{1, 1};
  EXPECT_TRUE(winograd_shape(1, 64, 64, 1, 56, 56, k3, s1, d1));
  EXPECT_TRUE(winograd_shape(1, 512, 512, 1, 7, 7, k3, {}, {}));       // ONNX defaults
  EXPECT_FALSE(winograd_shape(1, 64, 64, 1, 28, 28, k3, {2, 2}, d1));  // stride 2
  EXPECT_FALSE(winograd_shape(1, 64, 64, 1, 28, 28, {1, 1}, s1, d1));  // 1x1
  EXPECT_FALSE(winograd_shape(1, 64, 64, 1, 28, 28, k3, s1, {2, 2}));  // dilated
  EXPECT_FALSE(winograd_shape(1, 64, 64, 2, 28, 28, k3, s1, d1));      // grouped
  EXPECT_FALSE(winograd_shape(2, 64, 64, 1, 28, 28, k3, s1, d1));      // a batch
  EXPECT_FALSE(winograd_shape(1, 3, 64, 1, 28, 28, k3, s1, d1));       // few channels
  EXPECT_FALSE(winograd_shape(1, 64, 72, 1, 28, 28, k3, s1, d1));      // not whole blocks
  EXPECT_FALSE(winograd_shape(1, 64, 64, 1, 4, 4, k3, s1, d1));        // tiny map
}

TEST(Winograd, SwitchedOffByEnvironment) {
  std::vector<float> w(64 * 64 * 9, 0.01f);
  WinogradConvSpec s = same_3x3(64, 14, w.data());
  setenv("FX_WINOGRAD", "0", 1);
  EXPECT_FALSE(WinogradConv::make(s, 2));
  unsetenv("FX_WINOGRAD");
  EXPECT_TRUE(WinogradConv::make(s, 2));
}

// 512 channels at 14x14: each channel part's Winograd weights (8 MiB or more) exceed
// a core's L2 cache, so the direct convolution is kept unless FX_WINOGRAD=all.
TEST(Winograd, WeightsLargerThanTheBudgetStayDirect) {
  std::vector<float> w(512 * 512 * 9, 0.01f);
  WinogradConvSpec s = same_3x3(512, 14, w.data());
  unsetenv("FX_WINOGRAD");
  ASSERT_LT(winograd_weight_budget(), int64_t{8} << 20);
  EXPECT_FALSE(WinogradConv::make(s, 2));
  setenv("FX_WINOGRAD", "all", 1);
  EXPECT_EQ(winograd_weight_budget(), INT64_MAX);
  EXPECT_TRUE(WinogradConv::make(s, 2));
  unsetenv("FX_WINOGRAD");
}

// The Conv op with Winograd on and off (FX_WINOGRAD=0, the direct convolution).
std::pair<std::vector<float>, std::vector<float>> conv_on_off(int64_t c, int64_t hw, int64_t k,
                                                              int64_t stride) {
  auto x = test::random_floats(c * hw * hw, 5), w = test::random_floats(c * c * k * k, 6),
       b = test::random_floats(c, 7);
  const int64_t pad = k / 2, oh = (hw + 2 * pad - k) / stride + 1;
  auto run = [&] {
    auto y = test::run_op(
        "Conv",
        {test::floats({1, c, hw, hw}, x), test::floats({c, c, k, k}, w), test::floats({c}, b)},
        {{"strides", Ints{stride, stride}}, {"pads", Ints{pad, pad, pad, pad}}}, 1, {1, 2});
    EXPECT_EQ(y[0].dims(), (Ints{1, c, oh, oh}));
    return y[0].to_floats();
  };
  unsetenv("FX_WINOGRAD");
  auto on = run();
  setenv("FX_WINOGRAD", "0", 1);
  auto off = run();
  unsetenv("FX_WINOGRAD");
  return {on, off};
}

TEST(Winograd, ConvKernelTakesItForAnEligibleConv) {
  for (int64_t hw : {28, 14}) {  // row parts, channel parts
    auto [on, off] = conv_on_off(64, hw, 3, 1);
    EXPECT_TRUE(scaled_close(on, std::vector<double>(off.begin(), off.end()))) << hw;
    EXPECT_NE(on, off) << hw << ": the same bits as the direct convolution";
  }
}

TEST(Winograd, ConvKernelFallsBackToDirectForStride2And1x1) {
  auto [s2_on, s2_off] = conv_on_off(64, 28, 3, 2);
  EXPECT_EQ(s2_on, s2_off);
  auto [p_on, p_off] = conv_on_off(64, 28, 1, 1);
  EXPECT_EQ(p_on, p_off);
}

}  // namespace
}  // namespace fx
