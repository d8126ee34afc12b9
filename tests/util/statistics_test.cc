// SPDX-License-Identifier: Apache-2.0
// The statistics calibration and reports judge estimates by (util/statistics.h).

#include "util/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fx {
namespace {

TEST(Statistics, Median) {
  EXPECT_TRUE(std::isnan(median_or_nan({})));
  EXPECT_DOUBLE_EQ(median_or_nan({3}), 3);
  EXPECT_DOUBLE_EQ(median_or_nan({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median_or_nan({4, 1, 3, 2}), 2.5);
}

TEST(Statistics, SpearmanRanksWithTies) {
  EXPECT_DOUBLE_EQ(spearman_correlation({1, 2, 3, 4}, {10, 20, 30, 400}), 1.0);
  EXPECT_DOUBLE_EQ(spearman_correlation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(spearman_correlation({1, 2, 2, 3}, {1, 2, 3, 4}), 0.9486832980505138, 1e-12);
  EXPECT_TRUE(std::isnan(spearman_correlation({1}, {2})));
  EXPECT_TRUE(std::isnan(spearman_correlation({1, 2, 3}, {5, 5, 5})));
  EXPECT_TRUE(std::isnan(spearman_correlation({1, 2}, {1, 2, 3})));
}

TEST(Statistics, PredictionErrorSkipsZeroMeasurements) {
  PredictionError e = prediction_error({11, 18, 5, 7}, {10, 20, 0, 10});
  EXPECT_EQ(e.groups, 4);
  // |rel| of 0.1, 0.1, 0.3 (the 0 measurement skipped): median 0.1.
  EXPECT_DOUBLE_EQ(e.median_abs_rel_error, 0.1);
  EXPECT_TRUE(std::isfinite(e.spearman));
  PredictionError none = prediction_error({}, {});
  EXPECT_EQ(none.groups, 0);
  EXPECT_TRUE(std::isnan(none.median_abs_rel_error));
}

TEST(Statistics, RobustSpreadIgnoresOneOutlier) {
  // Nine repeats of a 10 ms figure, one hit by a scheduler slice: the MAD sees the nine.
  std::vector<double> t = {10.0, 10.1, 9.9, 10.2, 9.8, 10.0, 10.1, 9.9, 40.0};
  EXPECT_NEAR(median_abs_deviation(t), 0.1, 1e-12);
  EXPECT_NEAR(robust_sd(t), 0.14826, 1e-9);
  EXPECT_NEAR(relative_dispersion(t), 0.014826, 1e-9);
  EXPECT_TRUE(std::isnan(median_abs_deviation({})));
  EXPECT_TRUE(std::isnan(relative_dispersion({0, 0, 0})));
  // A machine that is busy half the time: the spread is the order of the figure.
  EXPECT_GT(relative_dispersion({10, 20, 10, 20, 10, 20, 30}), 0.5);
}

TEST(Statistics, RobustRmsCountsTheBias) {
  // Residuals all +0.5: no spread, but half the figure off.
  EXPECT_DOUBLE_EQ(robust_rms({0.5, 0.5, 0.5}), 0.5);
  EXPECT_NEAR(robust_rms({-1, 0, 1}), 1.4826, 1e-12);
  EXPECT_TRUE(std::isnan(robust_rms({})));
}

}  // namespace
}  // namespace fx
