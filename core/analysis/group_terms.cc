// SPDX-License-Identifier: Apache-2.0
#include "analysis/group_terms.h"

namespace fx {

double unfused_group_us(const DeviceProfile& p, const GroupTermsSample& g) {
  double before = 0;
  for (const auto& t : g.unfused) before += kernel_time(p, t);
  return before * 1e6;
}

double predict_group_us(const DeviceProfile& p, const GroupTermsSample& g) {
  double after = 0;
  if (g.after_kernels.empty()) after = kernel_time(p, g.fused);
  for (const auto& t : g.after_kernels) after += kernel_time(p, t);
  return unfused_group_us(p, g) - after * 1e6;
}

std::vector<GroupTermsSample> resolved_groups(const std::vector<GroupTermsSample>& groups,
                                              double k) {
  std::vector<GroupTermsSample> out;
  for (const auto& g : groups)
    if (std::isfinite(g.noise_us) && std::fabs(g.measured_us) >= k * g.noise_us) out.push_back(g);
  return out;
}

PredictionError group_error(const DeviceProfile& p, const std::vector<GroupTermsSample>& groups) {
  std::vector<double> pred, meas;
  for (const auto& g : groups)
    pred.push_back(predict_group_us(p, g)), meas.push_back(g.measured_us);
  return prediction_error(pred, meas);
}

PredictionError recorded_group_error(const std::vector<GroupTermsSample>& groups) {
  std::vector<double> pred, meas;
  for (const auto& g : groups) pred.push_back(g.predicted_us), meas.push_back(g.measured_us);
  return prediction_error(pred, meas);
}

}  // namespace fx
