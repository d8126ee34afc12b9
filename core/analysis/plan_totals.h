// SPDX-License-Identifier: Apache-2.0
#pragma once
// The numbers of the current plan: what the model costs with the accepted groups fused
// and the rest run one by one. Every count and time the GUI and the reports show about
// "after fusion" comes from here, so that the status bar, the fused view, the panel and
// a report agree; the analysis's own totals (every candidate fused) are an upper bound
// nobody has chosen.
//
// One definition of a kernel: a launch, as the cost model counts them
// (GroupEstimate::launches_before/after). A group is credited only with the launches and
// time its estimate says it removes; a group without a known estimate removes nothing.
// With at least one group accepted, every node outside the accepted groups is credited
// with what the fused program saves on it (AnalysisResult::node_lone_saving_s).

#include <cstdint>
#include <vector>

#include "analysis/analysis_result.h"
#include "analysis/fusion_plan.h"

namespace fx {

struct PlanTotals {
  int groups = 0;    // in the plan
  int accepted = 0;  // of them
  int64_t kernels_before = 0, kernels_after = 0;
  int64_t bytes_before = 0, bytes_after = 0;
  double time_before_s = 0, time_after_s = 0;

  // time_before / time_after; 1 when nothing is accepted or nothing is known.
  double speedup() const {
    return time_after_s > 0 && time_before_s > 0 ? time_before_s / time_after_s : 1.0;
  }
};

PlanTotals plan_totals(const AnalysisResult& analysis, const std::vector<FusionGroup>& groups);
inline PlanTotals plan_totals(const AnalysisResult& analysis, const FusionPlan& plan) {
  return plan_totals(analysis, plan.groups());
}

}  // namespace fx
