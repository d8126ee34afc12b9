// SPDX-License-Identifier: Apache-2.0
#include "profile/measured_rejection.h"

#include <fmt/format.h>

#include <cmath>

namespace fx {

std::string MeasuredRejection::line() const {
  return fmt::format(
      "rejected after measurement: {} +{:.1f} \u00b5s (fused kernel slower than its members)", id,
      slower_us);
}

std::vector<MeasuredRejection> measured_rejections(const std::vector<BeforeAfterGroup>& groups) {
  std::vector<MeasuredRejection> out;
  for (const auto& g : groups) {
    if (g.status != "fused" || !std::isfinite(g.measured_saved_us) || g.measured_saved_us >= 0)
      continue;
    out.push_back({g.id, g.pattern, -g.measured_saved_us});
  }
  return out;
}

int reject_measured_slower(FusionPlan& plan, const std::vector<MeasuredRejection>& rejections) {
  int n = 0;
  for (const auto& r : rejections)
    if (plan.reject(r.id, r.line())) ++n;
  return n;
}

}  // namespace fx
