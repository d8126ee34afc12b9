// SPDX-License-Identifier: Apache-2.0
// lane_sum / lane_max: every length (blocks of 32 and 8, scalar tails), exact on
// integers, close to a double sum on random data, NaN and -inf handled like the
// reduce kernels' scalar rule.

#include "runtime/lane_reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace fx {
namespace {

TEST(LaneReduce, SumOfEveryLengthIsExactOnSmallIntegers) {
  for (int64_t n : {0, 1, 7, 8, 9, 31, 32, 33, 40, 49, 63, 64, 65, 1000}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    double want = 0;
    for (int64_t i = 0; i < n; ++i) want += (x[static_cast<std::size_t>(i)] = float(i % 13 - 6));
    EXPECT_EQ(lane_sum(x.data(), n), float(want)) << "n=" << n;
  }
}

TEST(LaneReduce, SumIsCloseToDoubleOnRandomData) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> x(100003);
  double want = 0;
  for (float& v : x) want += (v = d(rng));
  EXPECT_NEAR(lane_sum(x.data(), int64_t(x.size())), want, 1e-3);
}

TEST(LaneReduce, MaxFindsTheLargestAtAnyPosition) {
  for (int64_t n : {1, 7, 15, 16, 17, 33, 100}) {
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> x(static_cast<std::size_t>(n), -5.f);
      x[static_cast<std::size_t>(at)] = 3.f;
      EXPECT_EQ(lane_max(x.data(), n, -INFINITY), 3.f) << "n=" << n << " at=" << at;
    }
  }
  const float lows[] = {-INFINITY, -INFINITY};
  EXPECT_EQ(lane_max(lows, 2, -INFINITY), -INFINITY);
  EXPECT_EQ(lane_max(lows, 0, -INFINITY), -INFINITY);
}

TEST(LaneReduce, MaxPropagatesNaNFromTheVectorPartAndTheTail) {
  for (int64_t at : {0, 5, 15, 16, 20}) {
    std::vector<float> x(21, 1.f);
    x[static_cast<std::size_t>(at)] = NAN;
    EXPECT_TRUE(std::isnan(lane_max(x.data(), 21, -INFINITY))) << "at=" << at;
  }
}

}  // namespace
}  // namespace fx
