// SPDX-License-Identifier: Apache-2.0
#pragma once
// The residuals behind each estimate's interval (device_profile.h: saving_uncertainty;
// analysis/estimate_interval.h): per fused-kernel class, over calibration's groups, each
// group's saving predicted by a saving model fitted without it (leave one group out;
// the difference of kernel times where the class keeps no fit), and
//   r = (measured - predicted) / predicted unfused time of the group
// summarized as robust_rms(r) (util/statistics.h). A class needs kMinUncertaintyGroups
// groups; with fewer it has none (groups = 0: its interval is unknown).

#include <array>
#include <vector>

#include "analysis/group_terms.h"
#include "analysis/saving_model.h"
#include "device/device_profile.h"

namespace fx {

inline constexpr int kMinUncertaintyGroups = 3;

std::array<SavingUncertainty, kKernelClassCount> saving_uncertainty(
    const std::vector<GroupTermsSample>& groups, const DeviceProfile& p,
    const SavingModelOptions& o = {});

}  // namespace fx
