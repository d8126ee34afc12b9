// SPDX-License-Identifier: Apache-2.0
#include "analysis/plan_totals.h"

#include <algorithm>
#include <vector>

namespace fx {

PlanTotals plan_totals(const AnalysisResult& a, const std::vector<FusionGroup>& groups) {
  PlanTotals t;
  t.groups = int(groups.size());
  t.kernels_before = t.kernels_after = a.kernels_before;
  t.bytes_before = t.bytes_after = a.bytes_before;
  t.time_before_s = t.time_after_s = a.time_before_s;
  for (const FusionGroup& g : groups) {
    if (g.status != GroupStatus::Accepted) continue;
    ++t.accepted;
    const GroupEstimate& e = g.estimate;
    if (!e.known) continue;
    // Never credited with more than it removes, nor with a negative removal.
    t.kernels_after -= std::max(0, e.launches_saved());
    t.bytes_after -= std::max<int64_t>(0, e.bytes_saved());
    t.time_after_s -= e.time_saved_s();
  }
  // A program with fused groups runs the other nodes too, each at its measured share.
  if (t.accepted > 0 && a.node_lone_saving_s.size() > 0) {
    std::vector<char> fused(a.node_lone_saving_s.size(), 0);
    for (const FusionGroup& g : groups)
      if (g.status == GroupStatus::Accepted)
        for (NodeId n : g.node_ids)
          if (std::size_t(n) < fused.size()) fused[std::size_t(n)] = 1;
    for (std::size_t i = 0; i < fused.size(); ++i)
      if (!fused[i]) t.time_after_s -= a.node_lone_saving_s[i];
  }
  t.kernels_after = std::max<int64_t>(t.kernels_after, 0);
  t.bytes_after = std::max<int64_t>(t.bytes_after, 0);
  t.time_after_s = std::max(t.time_after_s, 0.0);
  return t;
}

}  // namespace fx
