// SPDX-License-Identifier: Apache-2.0
#include "calibration/saving_uncertainty.h"

#include <cmath>

#include "util/statistics.h"

namespace fx {

std::array<SavingUncertainty, kKernelClassCount> saving_uncertainty(
    const std::vector<GroupTermsSample>& groups, const DeviceProfile& p,
    const SavingModelOptions& o) {
  std::array<std::vector<double>, kKernelClassCount> residuals;
  const std::vector<SavingPrediction> loo = leave_one_out_predictions(groups, p, o);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GroupTermsSample& g = groups[i];
    if (!std::isfinite(g.measured_us)) continue;
    double unfused_us = 0;
    for (const KernelTerms& u : g.unfused) unfused_us += kernel_time(p, u) * 1e6;
    if (!(unfused_us > 0)) continue;
    const SavingPrediction& pred = loo[i];
    residuals[std::size_t(pred.fused_class)].push_back((g.measured_us - pred.saved_us) /
                                                       unfused_us);
  }
  std::array<SavingUncertainty, kKernelClassCount> out{};
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto& r = residuals[std::size_t(c)];
    if (static_cast<int>(r.size()) < kMinUncertaintyGroups) continue;
    out[std::size_t(c)] = {static_cast<int>(r.size()), robust_rms(r)};
  }
  return out;
}

}  // namespace fx
