// SPDX-License-Identifier: Apache-2.0
#include "util/statistics.h"

#include <algorithm>
#include <numeric>

namespace fx {
namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    double avg = (double(i) + double(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = double(a.size());
  double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : NAN;
}

}  // namespace

double median_or_nan(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double median_abs_deviation(const std::vector<double>& v) {
  const double m = median_or_nan(v);
  if (std::isnan(m)) return NAN;
  std::vector<double> d;
  d.reserve(v.size());
  for (double x : v) d.push_back(std::fabs(x - m));
  return median_or_nan(std::move(d));
}

double robust_sd(const std::vector<double>& v) {
  return 1.4826 * median_abs_deviation(v);
}

double relative_dispersion(const std::vector<double>& v) {
  const double m = median_or_nan(v);
  if (std::isnan(m) || m == 0) return NAN;
  return robust_sd(v) / std::fabs(m);
}

double robust_rms(const std::vector<double>& v) {
  const double m = median_or_nan(v), s = robust_sd(v);
  return std::isnan(m) ? NAN : std::sqrt(m * m + s * s);
}

double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return NAN;
  return pearson(ranks(a), ranks(b));
}

PredictionError prediction_error(const std::vector<double>& predicted,
                                 const std::vector<double>& measured) {
  PredictionError e;
  e.groups = static_cast<int>(std::min(predicted.size(), measured.size()));
  e.spearman = spearman_correlation(predicted, measured);
  std::vector<double> rel;
  for (int i = 0; i < e.groups; ++i)
    if (measured[i] != 0)
      rel.push_back(std::fabs(predicted[i] - measured[i]) / std::fabs(measured[i]));
  if (!rel.empty()) e.median_abs_rel_error = median_or_nan(std::move(rel));
  return e;
}

}  // namespace fx
