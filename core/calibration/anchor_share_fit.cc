// SPDX-License-Identifier: Apache-2.0
#include "calibration/anchor_share_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/cost_model.h"
#include "util/statistics.h"

namespace fx {
namespace {

struct Point {
  int model;
  double unfused_us, saved_us;
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, std::size_t(std::ceil(q * double(v.size())) - 1));
  return v[i];
}

}  // namespace

bool anchor_share_class(KernelClass c) {
  return c == KernelClass::Conv || c == KernelClass::Depthwise || c == KernelClass::Pooling ||
         c == KernelClass::MatMul;
}

AnchorGroupSaving fit_anchor_group_saving(const std::vector<GroupTermsSample>& groups,
                                          const std::vector<int>& group_model,
                                          const DeviceProfile& p, double coverage) {
  std::array<std::vector<Point>, kKernelClassCount> by_class;
  std::set<int> models;
  for (std::size_t i = 0; i < groups.size() && i < group_model.size(); ++i) {
    const GroupTermsSample& g = groups[i];
    if (!anchor_share_class(g.fused.kernel_class) || !std::isfinite(g.measured_us)) continue;
    double unfused = 0;
    for (const KernelTerms& t : g.unfused) unfused += kernel_time(p, t) * 1e6;
    if (!(unfused > 0) || !std::isfinite(unfused)) continue;
    by_class[std::size_t(g.fused.kernel_class)].push_back({group_model[i], unfused, g.measured_us});
    models.insert(group_model[i]);
  }
  AnchorGroupSaving s;
  s.models = int(models.size());
  for (std::size_t c = 0; c < by_class.size(); ++c) {
    const auto& pts = by_class[c];
    std::set<int> in_class;
    std::vector<double> shares;
    for (const Point& q : pts)
      in_class.insert(q.model), shares.push_back(q.saved_us / q.unfused_us);
    if (int(in_class.size()) < kMinShareModels || int(pts.size()) < kMinShareGroups) continue;
    // Leave one model out: its groups predicted by the other models' share.
    std::vector<double> residuals;
    for (int m : in_class) {
      std::vector<double> others;
      for (const Point& q : pts)
        if (q.model != m) others.push_back(q.saved_us / q.unfused_us);
      const double share = median_or_nan(others);
      for (const Point& q : pts)
        if (q.model == m)
          residuals.push_back(std::fabs(q.saved_us - share * q.unfused_us) / q.unfused_us);
    }
    s.share[c] = median_or_nan(shares);
    s.groups[c] = int(pts.size());
    s.rel_half_width[c] = quantile(residuals, coverage);
    s.coverage = coverage;
  }
  return s;
}

}  // namespace fx
