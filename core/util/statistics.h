// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small statistics over measurements: the median, Spearman's rank correlation, and how
// far predictions are from measurements (what calibration and reports judge a cost
// model by).

#include <cmath>
#include <vector>

namespace fx {

// The median (the mean of the two middle values for an even count); NaN when empty
// (profile/timeline.h: median is 0 when empty).
double median_or_nan(std::vector<double> v);

// Spearman's rho with average ranks for ties; NaN for fewer than 2 pairs or no spread.
double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b);

struct PredictionError {
  int groups = 0;
  double spearman = NAN;              // NaN with fewer than 2 groups or no spread
  double median_abs_rel_error = NAN;  // 0.15 = 15%
};

// Spearman's rho of predicted against measured, and the median of
// |predicted - measured| / |measured| (pairs measured at exactly 0 skipped).
PredictionError prediction_error(const std::vector<double>& predicted,
                                 const std::vector<double>& measured);

}  // namespace fx
