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

// Median absolute deviation from the median (raw, not scaled); NaN when empty.
double median_abs_deviation(const std::vector<double>& v);
// 1.4826 x MAD: the standard deviation a normal sample of this MAD has, robust to the
// few measurements a scheduler slice or a page fault spoils; NaN when empty.
double robust_sd(const std::vector<double>& v);
// robust_sd / |median|: the spread of repeated measurements of one figure, relative to
// it (0.05 = 5%); NaN when empty or the median is 0.
double relative_dispersion(const std::vector<double>& v);
// sqrt(median^2 + robust_sd^2): how far a typical residual is from 0, its bias included.
double robust_rms(const std::vector<double>& v);

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
