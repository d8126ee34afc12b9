// SPDX-License-Identifier: Apache-2.0
#include "analysis/plan_totals.h"

#include <algorithm>
#include <set>
#include <string_view>
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
  // By node name: a plan read back from JSON has no node ids until bound to a Graph.
  if (t.accepted > 0 && !a.node_lone_saving_s.empty()) {
    std::set<std::string_view> fused;
    for (const FusionGroup& g : groups)
      if (g.status == GroupStatus::Accepted) fused.insert(g.nodes.begin(), g.nodes.end());
    for (const auto& [name, saving] : a.node_lone_saving_s)
      if (!fused.contains(name)) t.time_after_s -= saving;
  }
  t.kernels_after = std::max<int64_t>(t.kernels_after, 0);
  t.bytes_after = std::max<int64_t>(t.bytes_after, 0);
  t.time_after_s = std::max(t.time_after_s, 0.0);
  return t;
}

}  // namespace fx
