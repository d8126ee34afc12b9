// SPDX-License-Identifier: Apache-2.0
#pragma once
// The rule behind the plan fxc proposes by default: never fuse at a loss (XLA's rule).
// A group goes into the default plan only when its estimated saving is clearly
// positive: the whole interval the estimate allows lies above zero. When the estimate
// cannot tell (its interval reaches zero or below, or a shape is unknown), the default
// is not to fuse; the group stays a candidate that the user may still accept.
//
//   if (default_accepts(group.estimate)) ...               // today's interval
//   if (default_accepts(SavingInterval{lo, hi, "..."})) ...  // a measured/propagated one
//
// FusionPlan::accept_all_above (the default plan of fxc and the GUI) asks here, so a
// better interval (estimate uncertainty from calibration) changes one function.

#include <string>

#include "analysis/analysis_result.h"

namespace fx {

// A group's time saved, as a range: low_s <= saving <= high_s (seconds).
struct SavingInterval {
  double low_s = 0, high_s = 0;
  std::string basis;  // what the range stands for, in words
};

// The relative uncertainty the rule assumes for a predicted kernel time while an
// estimate carries no interval of its own: a saving is a difference of two predicted
// times (or a model fitted to such differences), so it is only as certain as the larger
// of the two times it is taken from.
inline constexpr double kDefaultRelativeMargin = 0.10;

// The estimate's saving +- relative_margin x the larger of its two kernel times.
SavingInterval estimate_interval(const GroupEstimate& e,
                                 double relative_margin = kDefaultRelativeMargin);

// Clearly positive: the interval's low end above zero.
bool default_accepts(const SavingInterval& s);
// Known shapes and estimate_interval(e) clearly positive.
bool default_accepts(const GroupEstimate& e);

// Why default_accepts(e) is false, in one sentence ("" when it is true).
std::string default_rejection(const GroupEstimate& e);

}  // namespace fx
