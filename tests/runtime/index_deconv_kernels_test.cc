// SPDX-License-Identifier: Apache-2.0
// GatherElements, CumSum, Trilu, Hardmax and ConvTranspose against references
// computed here on random data.

#include <random>

#include "runtime_test_util.h"
#include "util/error.h"

namespace fx {
namespace {

using test::random_floats;

TEST(GatherElements, Axis1WithNegativeIndices) {
  auto x = random_floats(3 * 5, 1);
  std::vector<int64_t> idx{0, -1, 2, 4, 1, 1, -5, 3, 0};  // 3 x 3
  auto y = test::run_op("GatherElements", {test::floats({3, 5}, x), test::int64s({3, 3}, idx)},
                        {{"axis", int64_t{1}}});
  std::vector<float> want;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      int64_t c = idx[i * 3 + j];
      want.push_back(x[i * 5 + (c < 0 ? c + 5 : c)]);
    }
  EXPECT_THAT(y[0], test::FloatsNear(want));
}

TEST(GatherElements, OutOfRangeIndexIsAnError) {
  EXPECT_THROW(test::run_op("GatherElements",
                            {test::floats({2, 2}, {1, 2, 3, 4}), test::int64s({1, 2}, {0, 2})},
                            {{"axis", int64_t{0}}}),
               Error);
}

TEST(CumSum, ExclusiveReverseOnMiddleAxis) {
  const int64_t a = 2, n = 4, b = 3;
  auto x = random_floats(a * n * b, 2);
  for (int ex = 0; ex < 2; ++ex)
    for (int rev = 0; rev < 2; ++rev) {
      auto y = test::run_op("CumSum", {test::floats({a, n, b}, x), test::int64s({}, {-2})},
                            {{"exclusive", int64_t{ex}}, {"reverse", int64_t{rev}}});
      std::vector<float> want(x.size());
      for (int64_t i = 0; i < a; ++i)
        for (int64_t k = 0; k < b; ++k)
          for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t t = 0; t < n; ++t) {
              bool in = rev ? (ex ? t > j : t >= j) : (ex ? t < j : t <= j);
              if (in) s += x[(i * n + t) * b + k];
            }
            want[(i * n + j) * b + k] = static_cast<float>(s);
          }
      EXPECT_THAT(y[0], test::FloatsNear(want)) << ex << rev;
    }
}

TEST(Trilu, UpperAndLowerWithK) {
  auto x = random_floats(2 * 3 * 4, 3);
  for (int upper = 0; upper < 2; ++upper)
    for (int64_t k : {-1, 0, 2}) {
      auto y = test::run_op("Trilu", {test::floats({2, 3, 4}, x), test::int64s({}, {k})},
                            {{"upper", int64_t{upper}}});
      std::vector<float> want(x.size());
      for (int64_t m = 0; m < 2; ++m)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 4; ++j) {
            bool keep = upper ? j - i >= k : j - i <= k;
            want[(m * 3 + i) * 4 + j] = keep ? x[(m * 3 + i) * 4 + j] : 0.0f;
          }
      EXPECT_THAT(y[0], test::FloatsNear(want)) << upper << " " << k;
    }
}

TEST(Hardmax, FirstMaximumAlongAxis) {
  std::vector<float> x{1, 3, 3, 0, 5, 2};  // [2, 3]; row 0 has a tie
  auto y = test::run_op("Hardmax", {test::floats({2, 3}, x)}, {{"axis", int64_t{1}}});
  EXPECT_THAT(y[0], test::FloatsNear(std::vector<float>{0, 1, 0, 0, 1, 0}));
}

// Direct ConvTranspose: every input pixel scatters its kernel into the output.
TEST(ConvTranspose, GroupedStridedPaddedMatchesScatter) {
  const int64_t n = 1, ic = 4, g = 2, ocg = 3, h = 5, w = 4, k = 3, s = 2, p = 1, op = 1;
  auto x = random_floats(n * ic * h * w, 4), wt = random_floats(ic * ocg * k * k, 5),
       bias = random_floats(g * ocg, 6);
  const int64_t oh = s * (h - 1) + op + k - 2 * p, ow = s * (w - 1) + op + k - 2 * p;
  std::vector<double> acc(static_cast<std::size_t>(g * ocg * oh * ow));
  for (int64_t o = 0; o < g * ocg; ++o)
    for (int64_t i = 0; i < oh * ow; ++i) acc[o * oh * ow + i] = bias[o];
  const int64_t icg = ic / g;
  for (int64_t c = 0; c < ic; ++c)
    for (int64_t oo = 0; oo < ocg; ++oo)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j)
          for (int64_t ki = 0; ki < k; ++ki)
            for (int64_t kj = 0; kj < k; ++kj) {
              int64_t yi = i * s - p + ki, yj = j * s - p + kj;
              if (yi < 0 || yi >= oh || yj < 0 || yj >= ow) continue;
              int64_t o = (c / icg) * ocg + oo;
              acc[(o * oh + yi) * ow + yj] +=
                  x[(c * h + i) * w + j] * wt[((c * ocg + oo) * k + ki) * k + kj];
            }
  std::vector<float> want(acc.begin(), acc.end());
  auto y = test::run_op("ConvTranspose",
                        {test::floats({n, ic, h, w}, x), test::floats({ic, ocg, k, k}, wt),
                         test::floats({g * ocg}, bias)},
                        {{"group", g},
                         {"strides", std::vector<int64_t>{s, s}},
                         {"pads", std::vector<int64_t>{p, p, p, p}},
                         {"output_padding", std::vector<int64_t>{op, op}}},
                        1, {1, 2});
  ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{n, g * ocg, oh, ow}));
  EXPECT_THAT(y[0], test::FloatsNear(want));
}

}  // namespace
}  // namespace fx
