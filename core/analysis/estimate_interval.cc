// SPDX-License-Identifier: Apache-2.0
#include "analysis/estimate_interval.h"

#include "analysis/default_rule.h"

#include <algorithm>
#include <cmath>

namespace fx {

void set_interval(GroupEstimate& e, const DeviceProfile& p, KernelClass fused_class) {
  e.fused_class = kernel_class_name(fused_class);
  const SavingUncertainty& u = p.uncertainty(fused_class);
  if (!e.known || u.groups == 0) return;
  // The residuals' own quantile where calibration recorded one; older profiles: two
  // robust standard deviations.
  const double rel = u.rel_half_width > 0 ? u.rel_half_width : kIntervalSigmas * u.rel_rms;
  const double half = rel * std::fabs(e.time_before_s);
  e.saved_low_s = e.time_saved_s() - half;
  e.saved_high_s = e.time_saved_s() + half;
}

bool default_plan_accepts(const FusionGroup& g, double threshold) {
  return g.status == GroupStatus::Candidate && g.estimate.traffic_reduction() >= threshold &&
         default_accepts(g.estimate);
}

UnmeasuredMix unmeasured_mix(const std::vector<KernelClass>& group_classes,
                             const std::vector<std::string>& kernel_ops, const DeviceProfile& p) {
  UnmeasuredMix m;
  if (p.has_uncertainty())
    for (KernelClass c : group_classes)
      if (p.uncertainty(c).groups == 0) m.classes.push_back(kernel_class_name(c));
  if (!p.measured_ops.empty())
    for (const std::string& op : kernel_ops)
      if (!std::binary_search(p.measured_ops.begin(), p.measured_ops.end(), op))
        m.ops.push_back(op);
  for (auto* v : {&m.classes, &m.ops}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return m;
}

}  // namespace fx
