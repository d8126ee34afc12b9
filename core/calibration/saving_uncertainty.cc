// SPDX-License-Identifier: Apache-2.0
#include "calibration/saving_uncertainty.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "util/statistics.h"

namespace fx {
namespace {

// Per class, the residuals of `groups` against `pred` (one prediction per group).
std::array<SavingUncertainty, kKernelClassCount> summarize(
    const std::vector<GroupTermsSample>& groups, const std::vector<SavingPrediction>& pred,
    const DeviceProfile& p) {
  std::array<std::vector<double>, kKernelClassCount> residuals;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GroupTermsSample& g = groups[i];
    if (!std::isfinite(g.measured_us)) continue;
    const double before = unfused_group_us(p, g);
    if (!(before > 0)) continue;
    residuals[std::size_t(pred[i].fused_class)].push_back((g.measured_us - pred[i].saved_us) /
                                                          before);
  }
  std::array<SavingUncertainty, kKernelClassCount> out{};
  for (int c = 0; c < kKernelClassCount; ++c)
    out[std::size_t(c)] = summarize_residuals(residuals[std::size_t(c)]);
  return out;
}

}  // namespace

SavingUncertainty summarize_residuals(const std::vector<double>& r) {
  if (static_cast<int>(r.size()) < kMinUncertaintyGroups) return {};
  std::vector<double> a;
  for (double x : r) a.push_back(std::fabs(x));
  std::sort(a.begin(), a.end());
  // The smallest |r| that at least kIntervalCoverage of the residuals do not exceed.
  const auto k = static_cast<std::size_t>(std::ceil(kIntervalCoverage * double(a.size()))) - 1;
  SavingUncertainty u;
  u.groups = static_cast<int>(r.size());
  u.rel_rms = robust_rms(r);
  u.rel_half_width = a[std::min(k, a.size() - 1)];
  u.coverage = kIntervalCoverage;
  return u;
}

std::array<SavingUncertainty, kKernelClassCount> saving_uncertainty(
    const std::vector<GroupTermsSample>& groups, const DeviceProfile& p,
    const SavingModelOptions& o) {
  return summarize(groups, leave_one_out_predictions(groups, p, o), p);
}

std::array<SavingUncertainty, kKernelClassCount> saving_uncertainty(
    const std::vector<GroupTermsSample>& groups, const std::vector<int>& model,
    const DeviceProfile& p, const SavingModelOptions& o) {
  if (model.size() != groups.size())
    throw std::invalid_argument("saving_uncertainty: one model id per group");
  const std::set<int> models(model.begin(), model.end());
  if (models.size() < 2) return saving_uncertainty(groups, p, o);
  std::vector<SavingPrediction> pred(groups.size());
  for (int m : models) {
    std::vector<GroupTermsSample> others;
    for (std::size_t i = 0; i < groups.size(); ++i)
      if (model[i] != m) others.push_back(groups[i]);
    const SavingModel fit = fit_saving_model(others, p, o);
    for (std::size_t i = 0; i < groups.size(); ++i)
      if (model[i] == m) pred[i] = fit.predict(p, groups[i]);
  }
  return summarize(groups, pred, p);
}

}  // namespace fx
