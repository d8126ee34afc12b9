// SPDX-License-Identifier: Apache-2.0
#pragma once
// How sure an estimate is: each group's saving carries an interval from the residuals
// that calibration measured for the fused kernel's class (device_profile.h:
// saving_uncertainty), and a group whose interval includes zero is uncertain and stays
// out of the default plan.
//
// The residuals are relative to the group's predicted unfused time (a saving is the
// difference of two times of that order, so its error scales with them, not with the
// saving): half width = rel_half_width(class) x time_before, the quantile of calibration's
// residuals (each group predicted without its model) that held the coverage the profile
// records (calibration/saving_uncertainty.h: 90%). Profiles without it:
// kIntervalSigmas x rel_rms(class) x time_before (two robust standard deviations).

#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "device/device_profile.h"

namespace fx {

inline constexpr double kIntervalSigmas = 2.0;

// Sets e.saved_low_s / saved_high_s (left NaN without residuals for `fused_class`, or an
// estimate that is not known) and e.fused_class.
void set_interval(GroupEstimate& e, const DeviceProfile& p, KernelClass fused_class);

// The default plan's rule (FusionPlan::accept_all_above, `--accept-all`, `fxc profile
// --opt-level`): a candidate with a known estimate, traffic reduction >= threshold, and
// not uncertain. A group without an interval (a profile with no residuals) is judged by
// the first two only.
bool default_plan_accepts(const FusionGroup& g, double threshold);

// Sorted names of the fused-kernel classes of a model's groups that `p` has no residuals
// for, and of its op types (with a kernel) that `p`'s calibration never timed; each
// empty when `p` records nothing of that kind (a profile that says nothing of what it
// measured).
struct UnmeasuredMix {
  std::vector<std::string> classes, ops;
};
UnmeasuredMix unmeasured_mix(const std::vector<KernelClass>& group_classes,
                             const std::vector<std::string>& kernel_ops, const DeviceProfile& p);

}  // namespace fx
