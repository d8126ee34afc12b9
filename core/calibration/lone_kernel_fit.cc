// SPDX-License-Identifier: Apache-2.0
#include "calibration/lone_kernel_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "util/statistics.h"

namespace fx {
namespace {

double time_of(const KernelRow& k, TimingStat stat) {
  return stat == TimingStat::Min ? k.min_us : k.median_us;
}

}  // namespace

LoneKernelTimes lone_kernel_times(const BeforeAfterDocument& doc, TimingStat stat) {
  LoneKernelTimes t;
  std::set<std::string> grouped;
  bool fused = false;
  for (const BeforeAfterGroup& g : doc.groups) {
    if (g.status != "fused") continue;
    fused = true;
    grouped.insert(g.nodes.begin(), g.nodes.end());
  }
  const RunDocument* before = doc.run("before");
  const RunDocument* after = doc.run("after");
  if (!fused || !before || !after) return t;
  std::map<std::string, const KernelRow*> after_of;
  for (const KernelRow& k : after->kernels)
    if (k.nodes.size() == 1 && !k.group_id) after_of[k.nodes[0]] = &k;
  for (const KernelRow& k : before->kernels) {
    if (k.nodes.size() != 1 || !k.cost || grouped.count(k.nodes[0])) continue;
    auto it = after_of.find(k.nodes[0]);
    if (it == after_of.end()) continue;
    const double b = time_of(k, stat), a = time_of(*it->second, stat);
    if (!std::isfinite(b) || !std::isfinite(a) || !(b > 0)) continue;
    const auto c = static_cast<std::size_t>(k.cost->kernel_class);
    t.before_us[c] += b;
    t.after_us[c] += a;
  }
  return t;
}

LoneKernelSaving fit_lone_kernel_saving(const std::vector<LoneKernelTimes>& models) {
  LoneKernelSaving s;
  std::array<std::vector<double>, kKernelClassCount> shares;
  for (const LoneKernelTimes& r : models) {
    bool any = false;
    for (std::size_t c = 0; c < shares.size(); ++c) {
      if (!(r.before_us[c] > 0)) continue;
      shares[c].push_back((r.before_us[c] - r.after_us[c]) / r.before_us[c]);
      any = true;
    }
    s.results += any;
  }
  for (std::size_t c = 0; c < shares.size(); ++c)
    if (static_cast<int>(shares[c].size()) >= kMinLoneResults)
      s.share[c] = std::min(median_or_nan(shares[c]), kMaxLoneShare);
  return s;
}

}  // namespace fx
