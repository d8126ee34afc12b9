// SPDX-License-Identifier: Apache-2.0
// The channels-last depthwise loop (fused_kernels/depthwise_nhwc.h) against the runtime's
// NCHW one: kernel sizes with a fixed-size path (3x3, 5x5) and the generic one, strides,
// dilation, asymmetric padding, channel counts with a tail past the blocks of 16, a
// batch; the fast path (3x3/5x5, stride 1/2, channels a multiple of 16) with odd map
// sizes; and its epilogues: Clip then a residual on each row, a lone Clip or Relu
// applied in registers, none; SiLU with the output written NCHW. And the loop
// written over its own input.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "codegen/codegen_test_util.h"
#include "fused_kernels/depthwise_nhwc.h"
#include "runtime/depthwise_conv.h"
#include "runtime/thread_pool.h"
#include "util/error.h"

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
                      Case{1, 3, 5, 6, 3, 1, 1, 0, 0, 0, 0},     // tail only, no pad
                      // The fast path (C a multiple of 16: groups of 64, 32 and 16
                      // channels; 8 pixels at a time inside a row, edges one by one).
                      Case{1, 112, 13, 15, 3, 1, 1, 1, 1, 1, 1},  // 64 + 32 + 16
                      Case{1, 112, 13, 15, 3, 2, 1, 1, 1, 1, 1},  // stride 2
                      Case{1, 96, 12, 12, 3, 2, 1, 0, 0, 1, 1},   // SAME_UPPER-style pads
                      Case{2, 176, 11, 19, 5, 2, 1, 2, 2, 2, 2},  // 5x5 stride 2, batch
                      Case{1, 64, 7, 7, 5, 1, 1, 2, 2, 2, 2},     // 5x5 on a 7x7 map
                      Case{1, 32, 3, 2, 3, 1, 1, 1, 1, 1, 1},     // narrower than a block
                      Case{1, 16, 17, 23, 3, 1, 1, 0, 0, 0, 0},   // no padding
                      // A channel tail past the last block of 16 (ShuffleNet's 58, 116):
                      // one more block of the last 16 channels, overlapping.
                      Case{1, 58, 14, 14, 3, 1, 1, 1, 1, 1, 1},  // 32 + 16 + last 16
                      Case{1, 116, 9, 9, 3, 2, 1, 1, 1, 1, 1},   // 64 + 32 + 16 + last 16
                      Case{1, 21, 8, 10, 5, 1, 1, 2, 2, 2, 2},   // 16 + last 16, 5x5
                      // Rows of 16 pixels or more (NCHW output: tiles of 16 x 16).
                      Case{1, 48, 6, 37, 3, 1, 1, 1, 1, 1, 1},    // 2 tiles + 1 overlapping
                      Case{2, 40, 5, 40, 5, 2, 1, 2, 2, 2, 2}));  // channel tail of 8

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
  std::vector<float> conv(res.size());
  depthwise_conv2d(s, x.data(), w.data(), b.data(), conv.data());
  const auto x_nhwc = to_nhwc(x, t.n, t.c, t.h * t.w);
  const auto res_nhwc = to_nhwc(res, t.n, t.c, oh * ow);
  DepthwiseNhwc dw(s, w, b);
  ScopedThreads threads(2);  // rows split over the pool as in a run
  // Epilogues: Clip then a residual (a separate pass over each row), a lone Clip and a
  // lone Relu (applied in registers on the fast path), none.
  struct Epi {
    const char* name;
    std::vector<EpilogueOp> ops;
    bool residual;
  };
  const std::vector<Epi> epis{
      {"clip+residual", {{EpilogueOp::Clip, -0.5f, 0.5f}, {EpilogueOp::AddResidual}}, true},
      {"clip", {{EpilogueOp::Clip, -0.25f, 0.75f}}, false},
      {"relu", {{EpilogueOp::Relu}}, false},
      {"none", {}, false}};
  for (const Epi& e : epis) {
    std::vector<float> want(conv.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      float v = conv[i];
      for (const EpilogueOp& op : e.ops) {
        if (op.kind == EpilogueOp::Clip) v = std::min(std::max(v, op.alpha), op.beta);
        if (op.kind == EpilogueOp::Relu) v = std::max(v, 0.f);
        if (op.kind == EpilogueOp::AddResidual) v += res[i];
      }
      want[i] = v;
    }
    want = to_nhwc(want, t.n, t.c, oh * ow);
    ConvEpilogue ep(e.ops);
    std::vector<float> got(want.size(), NAN);
    std::vector<const float*> residuals;
    if (e.residual) residuals.push_back(res_nhwc.data());
    dw.run(x_nhwc.data(), got.data(), e.ops.empty() ? nullptr : &ep, residuals);
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double d = std::fabs(double(got[i]) - double(want[i]));
      if (!(d <= worst)) worst = d;  // a NaN (an output never written) sticks
    }
    EXPECT_LT(worst, 1e-5) << e.name;
  }
  // SiLU (x * sigmoid(x)) written straight to an NCHW output, each row transposed from
  // the thread's row buffer: tiles of 16 pixels x 16 channels (the last overlapping),
  // and element by element for rows narrower than 16 and the channel tail.
  const ConvEpilogue silu(std::vector<EpilogueOp>{{EpilogueOp::Swish, 1.f}});
  std::vector<float> got(conv.size(), NAN);
  dw.run(x_nhwc.data(), got.data(), &silu, {}, /*y_nchw=*/true);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double v = conv[i], want = v / (1 + std::exp(-v));
    const double d = std::fabs(double(got[i]) - want);
    if (!(d <= worst)) worst = d;
  }
  EXPECT_LT(worst, 1e-5) << "silu, NCHW output";
  EXPECT_THROW(dw.run(x_nhwc.data(), got.data(), &silu, {res_nhwc.data()}, true), Error);
}

// Written over its own input: the same values as run() into a separate buffer, for
// 3x3 and 5x5 ("same" padding, stride 1), the fast path (C a multiple of 16, or with
// an overlapping last block: C = 58) and the generic one (C = 24, 7x7 kernel), on one to four
// threads: the map is cut into bands whose boundary rows are saved before any band writes (bands of
// 6 and 5 rows on a 17-row map with 3 threads: fewer rows than the 5x5's reach in some windows).
TEST(DepthwiseNhwcInPlace, MatchesRunIntoASeparateBuffer) {
  struct InPlaceCase {
    int64_t c, h, w, k;
  };
  for (const InPlaceCase t :
       {InPlaceCase{96, 17, 19, 3}, InPlaceCase{64, 17, 13, 5}, InPlaceCase{24, 20, 20, 7},
        InPlaceCase{144, 56, 56, 3}, InPlaceCase{58, 15, 14, 3}}) {
    const int64_t p = (t.k - 1) / 2;
    const DepthwiseShape s{1, t.c, t.h, t.w, t.h, t.w, t.k, t.k, 1, 1, 1, 1, p, p};
    const auto x = random_floats(static_cast<std::size_t>(t.c * t.h * t.w), 5);
    const auto w = random_floats(static_cast<std::size_t>(t.c * t.k * t.k), 6);
    const auto b = random_floats(static_cast<std::size_t>(t.c), 7);
    DepthwiseNhwc dw(s, w, b);
    ASSERT_TRUE(dw.can_run_in_place());
    ConvEpilogue ep({{EpilogueOp::Clip, -0.5f, 0.5f}});
    for (int threads : {1, 2, 3, 4}) {
      ScopedThreads scope(threads);
      std::vector<float> want(x.size());
      dw.run(x.data(), want.data(), &ep, {});
      std::vector<float> xy = x;
      dw.run_in_place(xy.data(), &ep);
      double worst = 0;
      for (std::size_t i = 0; i < xy.size(); ++i) {
        const double d = std::fabs(double(xy[i]) - double(want[i]));
        if (!(d <= worst)) worst = d;
      }
      EXPECT_EQ(worst, 0.0) << t.c << "x" << t.h << "x" << t.w << " k" << t.k << " threads "
                            << threads;
    }
  }
  // Shapes it does not take: stride 2, a batch, no padding (output smaller).
  EXPECT_FALSE(DepthwiseNhwc(DepthwiseShape{1, 16, 8, 8, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1},
                             std::vector<float>(144, 1.f), {})
                   .can_run_in_place());
  EXPECT_FALSE(DepthwiseNhwc(DepthwiseShape{2, 16, 8, 8, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1},
                             std::vector<float>(144, 1.f), {})
                   .can_run_in_place());
  EXPECT_FALSE(DepthwiseNhwc(DepthwiseShape{1, 16, 8, 8, 6, 6, 3, 3, 1, 1, 1, 1, 0, 0},
                             std::vector<float>(144, 1.f), {})
                   .can_run_in_place());
}

}  // namespace
}  // namespace fx
