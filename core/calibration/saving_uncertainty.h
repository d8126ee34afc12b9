// SPDX-License-Identifier: Apache-2.0
#pragma once
// The residuals behind each estimate's interval (device_profile.h: saving_uncertainty;
// analysis/estimate_interval.h): per fused-kernel class, over calibration's groups, each
// group's saving predicted by a saving model fitted without it (the difference of kernel
// times where the class keeps no fit), and
//   r = (measured - predicted) / predicted unfused time of the group
// summarized as robust_rms(r) (util/statistics.h) and as the kIntervalCoverage quantile
// of |r|, the interval's half width: an interval that claims 90% held 90% of these.
//
// "Without it": where the groups come from several models, without its whole model (a
// new model is what the interval is for, and groups of one model err together: the
// residuals of leaving one group out are those of a model the fit has seen); from one
// model, without the group alone. A class needs kMinUncertaintyGroups groups; with fewer
// it has none (groups = 0: its interval is unknown).

#include <array>
#include <vector>

#include "analysis/group_terms.h"
#include "analysis/saving_model.h"
#include "device/device_profile.h"

namespace fx {

inline constexpr int kMinUncertaintyGroups = 3;
inline constexpr double kIntervalCoverage = 0.9;

// Leave one group out.
std::array<SavingUncertainty, kKernelClassCount> saving_uncertainty(
    const std::vector<GroupTermsSample>& groups, const DeviceProfile& p,
    const SavingModelOptions& o = {});

// `model[i]`: which model group i comes from (any ids); leave one model out when there
// are at least two, else as above. Throws std::invalid_argument when the sizes differ.
std::array<SavingUncertainty, kKernelClassCount> saving_uncertainty(
    const std::vector<GroupTermsSample>& groups, const std::vector<int>& model,
    const DeviceProfile& p, const SavingModelOptions& o = {});

// The summary of one class's residuals (r as above); groups = 0 below kMinUncertaintyGroups.
SavingUncertainty summarize_residuals(const std::vector<double>& r);

}  // namespace fx
