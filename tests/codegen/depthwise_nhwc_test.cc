// The channels-last depthwise loop (codegen/depthwise_nhwc.h) against the runtime's
// NCHW one: kernel sizes with a fixed-size path (3x3, 5x5) and the generic one, strides,
// dilation, asymmetric padding, channel counts with a tail past the blocks of 16, a
// batch; and its epilogue (Clip, then a residual) on each row.

#include <gtest/gtest.h>

#include "codegen/depthwise_nhwc.h"
#include "codegen_test_util.h"
#include "runtime/depthwise_conv.h"

namespace fx {
namespace {

using testing::random_floats;

std::vector<float> to_nhwc(const std::vector<float>& v, int64_t n, int64_t c, int64_t hw) {
  std::vector<float> out(v.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        out[static_cast<std::size_t>((b * hw + p) * c + ch)] =
            v[static_cast<std::size_t>((b * c + ch) * hw + p)];
  return out;
}

struct Case {
  int64_t n, c, h, w, k, stride, dil, pt, pl, pb, pr;
};

class DepthwiseNhwcCases : public ::testing::TestWithParam<Case> {};

INSTANTIATE_TEST_SUITE_P(
    Shapes, DepthwiseNhwcCases,
    ::testing::Values(Case{1, 32, 9, 11, 3, 1, 1, 1, 1, 1, 1},   // 3x3, blocks only
                      Case{1, 40, 10, 10, 3, 2, 1, 1, 1, 1, 1},  // stride 2, tail of 8
                      Case{2, 24, 7, 13, 5, 1, 1, 2, 2, 2, 2},   // 5x5, batch, tail
                      Case{1, 16, 12, 12, 5, 2, 1, 1, 2, 2, 1},  // asymmetric pads
                      Case{1, 20, 8, 9, 3, 1, 2, 2, 2, 2, 2},    // dilation 2
                      Case{1, 48, 9, 9, 7, 1, 1, 3, 3, 3, 3},    // 7x7: generic path
                      Case{1, 3, 5, 6, 3, 1, 1, 0, 0, 0, 0}));   // tail only, no pad

TEST_P(DepthwiseNhwcCases, MatchesTheNchwLoop) {
  const Case t = GetParam();
  const int64_t ek = (t.k - 1) * t.dil + 1;
  const int64_t oh = (t.h + t.pt + t.pb - ek) / t.stride + 1;
  const int64_t ow = (t.w + t.pl + t.pr - ek) / t.stride + 1;
  const DepthwiseShape s{t.n, t.c,      t.h,      t.w,   oh,    ow,   t.k,
                         t.k, t.stride, t.stride, t.dil, t.dil, t.pt, t.pl};
  const auto x = random_floats(static_cast<std::size_t>(t.n * t.c * t.h * t.w), 1);
  const auto w = random_floats(static_cast<std::size_t>(t.c * t.k * t.k), 2);
  const auto b = random_floats(static_cast<std::size_t>(t.c), 3);
  const auto res = random_floats(static_cast<std::size_t>(t.n * t.c * oh * ow), 4);
  std::vector<float> want(res.size());
  depthwise_conv2d(s, x.data(), w.data(), b.data(), want.data());
  for (std::size_t i = 0; i < want.size(); ++i)
    want[i] = std::min(std::max(want[i], -0.5f), 0.5f) + res[i];
  want = to_nhwc(want, t.n, t.c, oh * ow);

  const auto x_nhwc = to_nhwc(x, t.n, t.c, t.h * t.w);
  const auto res_nhwc = to_nhwc(res, t.n, t.c, oh * ow);
  ConvEpilogue ep({{EpilogueOp::Clip, -0.5f, 0.5f}, {EpilogueOp::AddResidual}});
  DepthwiseNhwc dw(s, w, b);
  std::vector<float> got(want.size(), NAN);
  dw.run(x_nhwc.data(), got.data(), &ep, {res_nhwc.data()});
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(double(got[i]) - double(want[i]));
    if (!(d <= worst)) worst = d;  // a NaN (an output never written) sticks
  }
  EXPECT_LT(worst, 1e-5);
}

}  // namespace
}  // namespace fx
