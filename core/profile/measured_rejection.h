// SPDX-License-Identifier: Apache-2.0
#pragma once
// Groups that `fxc profile` measured slower fused than apart: the tool rejects them and
// says why (the default plan never fuses at a loss; a measurement overrides the estimate).
//
//   auto slower = measured_rejections(doc.groups);   // "rejected after measurement: ..."
//   reject_measured_slower(plan, slower);             // the corrected plan (CLI, GUI)
//
// A group counts when it ran fused (status "fused") and its measured saving (the
// members' kernels before minus the fused kernel after) is negative.

#include <string>
#include <vector>

#include "analysis/fusion_plan.h"
#include "profile/before_after_document.h"

namespace fx {

struct MeasuredRejection {
  std::string id, pattern;
  double slower_us = 0;  // how much slower the fused kernel was per run (> 0)
  // "rejected after measurement: fg-1a2b3c4d +12.3 µs (fused kernel slower than its members)"
  std::string line() const;
};

std::vector<MeasuredRejection> measured_rejections(const std::vector<BeforeAfterGroup>& groups);

// Rejects each of them in `plan` (accepted or candidate alike), the reason naming the
// measurement; returns how many changed. Ids the plan lacks are skipped.
int reject_measured_slower(FusionPlan& plan, const std::vector<MeasuredRejection>& rejections);

}  // namespace fx
