// SPDX-License-Identifier: Apache-2.0
// GridSample's blocked kernel against the per-pixel double-precision reference, for
// every mode, padding and corner alignment, with grid points inside, on and outside
// the image; and the kernel through the executor on a known bilinear value.

#include "runtime/grid_sample.h"

#include <random>

#include "runtime_test_util.h"

namespace fx {
namespace {

// Grid points: random in [-1.3, 1.3], plus exact corners and pixel centres (the
// places where nearest rounds half-way and padding switches).
std::vector<float> test_grid(const GridSampleShape& s, unsigned seed) {
  std::vector<float> g = test::random_floats(s.n * s.ho * s.wo * 2, seed);
  for (float& v : g) v *= 1.3f;
  const float exact[] = {-1.0f, 1.0f, 0.0f, -0.5f, 0.5f, 1.0f / 3};
  for (std::size_t i = 0; i < g.size() && i < 2 * std::size(exact) * std::size(exact); i += 2) {
    g[i] = exact[(i / 2) % std::size(exact)];
    g[i + 1] = exact[(i / 2 / std::size(exact)) % std::size(exact)];
  }
  return g;
}

TEST(GridSample, BlockedKernelMatchesTheReferenceInEveryMode) {
  // More output pixels than one block, several channels, two images, a non-square plane.
  const GridSampleShape s{2, 3, 5, 7, 19, 23};
  const auto x = test::random_floats(s.n * s.c * s.h * s.w, 1);
  const auto grid = test_grid(s, 2);
  const std::size_t out = static_cast<std::size_t>(s.n * s.c * s.ho * s.wo);
  int compared = 0;
  for (auto mode : {GridSampleMode::Nearest, GridSampleMode::Bilinear, GridSampleMode::Bicubic})
    for (auto pad :
         {GridSamplePadding::Zeros, GridSamplePadding::Border, GridSamplePadding::Reflection})
      for (bool align : {false, true}) {
        const GridSampleAttrs a{mode, pad, align};
        std::vector<float> fast(out, -7.0f), ref(out, 7.0f);
        grid_sample(a, s, x.data(), grid.data(), fast.data());
        grid_sample_reference(a, s, x.data(), grid.data(), ref.data());
        for (std::size_t i = 0; i < out; ++i)
          ASSERT_NEAR(fast[i], ref[i], 1e-5f + 1e-5f * std::abs(ref[i]))
              << "mode " << static_cast<int>(mode) << " padding " << static_cast<int>(pad)
              << " align " << align << " element " << i;
        ++compared;
      }
  EXPECT_EQ(compared, 18);
}

TEST(GridSample, KernelSamplesBetweenPixelsAndSpreadsOverThreads) {
  // A 2x2 ramp sampled at its centre with align_corners: the mean of the four pixels.
  const Tensor x = test::floats({1, 1, 2, 2}, {0, 1, 2, 3});
  const Tensor grid = test::floats({1, 1, 1, 2}, {0, 0});
  auto y = test::run_op("GridSample", {x, grid}, {{"align_corners", int64_t{1}}})[0];
  ASSERT_EQ(y.dims(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_FLOAT_EQ(y.to_floats()[0], 1.5f);
  // Many small images (RAFT's correlation lookup: one channel, 9x9 taps each) on 4
  // threads give the reference's values.
  const GridSampleShape s{64, 1, 12, 16, 9, 9};
  const auto xv = test::random_floats(s.n * s.c * s.h * s.w, 3);
  const auto gv = test_grid(s, 4);
  auto many =
      test::run_op("GridSample",
                   {test::floats({s.n, s.c, s.h, s.w}, xv), test::floats({s.n, s.ho, s.wo, 2}, gv)},
                   {{"align_corners", int64_t{1}}}, 1, {}, 4)[0]
          .to_floats();
  std::vector<float> ref(many.size());
  grid_sample_reference({GridSampleMode::Bilinear, GridSamplePadding::Zeros, true}, s, xv.data(),
                        gv.data(), ref.data());
  for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(many[i], ref[i], 1e-5f) << i;
}

}  // namespace
}  // namespace fx
