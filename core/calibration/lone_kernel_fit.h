// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a plan saves on the kernels it does not fuse (device_profile.h:
// lone_kernel_saving), measured on before/after results.
//
// The program that runs the fused groups also runs every other node, and not as the
// unfused program does: it keeps activations in the layout its convolutions want, so a
// lone conv converts nothing, and pooling runs as generated loops. A whole-model
// estimate that credits only the groups misses that part of the measured speed-up. Per
// result with at least one fused group, per kernel class of the rows outside every
// group (one node, timed before and after):
//   share(class) = sum(before - after) / sum(before)
// with the repeats of one model summed, and per class the median over the models that
// have such rows (at least kMinLoneResults of them; else 0: not measured), held below
// kMaxLoneShare. Over models: a calibration grid's three repeats of one conv family say
// what that family does, not what convolutions do (LoneKernelSaving::results counts
// models).

#include <vector>

#include "calibration/result_samples.h"
#include "device/device_profile.h"
#include "profile/before_after_document.h"

namespace fx {

inline constexpr int kMinLoneResults = 3;
inline constexpr double kMaxLoneShare = 0.9;

// Per class: sum of the lone rows' times before and after (us) in one result; both 0 for
// a class without lone rows or a result without fused groups.
struct LoneKernelTimes {
  std::array<double, kKernelClassCount> before_us{}, after_us{};
  LoneKernelTimes& operator+=(const LoneKernelTimes& o) {
    for (std::size_t c = 0; c < before_us.size(); ++c)
      before_us[c] += o.before_us[c], after_us[c] += o.after_us[c];
    return *this;
  }
};
LoneKernelTimes lone_kernel_times(const BeforeAfterDocument& doc,
                                  TimingStat stat = TimingStat::Median);

// One entry per model.
LoneKernelSaving fit_lone_kernel_saving(const std::vector<LoneKernelTimes>& models);

}  // namespace fx
