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
//
// Per kind of lone kernel too (device_profile.h: "kinds"; analysis/lone_kernels.h tells
// the kinds apart on the graph). Convs by their cost terms: a spatial one (relayout bytes,
// not Winograd) by the time saved per relayout byte, another (1x1, grouped) by its share;
// a Winograd conv runs alike in both programs and takes no part. The Pads the fused
// program folded into their AveragePools (one step of a Pad and its pool, no group) by
// their time saved over the time the cost model
// predicts for them apart (`profile`: the rates just fitted; without one, or where a row
// has no cost terms, their measured time): analysis scales that prediction, and the
// runtime's Pad takes many times what its bytes predict, which the merge saves. These come from
// every result with both runs, groups or not: the layout plan changes convs in a program without
// groups too. Per kind the median over the models with such rows (kMinLoneResults).

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
  // By kind: spatial convs' time saved (us) and relayout bytes; other convs' and merged
  // steps' time before and after (us).
  double spatial_saved_us = 0, spatial_relayout_bytes = 0;
  double other_conv_before_us = 0, other_conv_after_us = 0;
  double merged_before_us = 0, merged_after_us = 0;
  double merged_predicted_us = 0;   // the cost model's time of those rows apart
  bool merged_unpredicted = false;  // some merged row had no prediction: use the measured
  LoneKernelTimes& operator+=(const LoneKernelTimes& o) {
    for (std::size_t c = 0; c < before_us.size(); ++c)
      before_us[c] += o.before_us[c], after_us[c] += o.after_us[c];
    spatial_saved_us += o.spatial_saved_us, spatial_relayout_bytes += o.spatial_relayout_bytes;
    other_conv_before_us += o.other_conv_before_us, other_conv_after_us += o.other_conv_after_us;
    merged_before_us += o.merged_before_us, merged_after_us += o.merged_after_us;
    merged_predicted_us += o.merged_predicted_us;
    merged_unpredicted = merged_unpredicted || o.merged_unpredicted;
    return *this;
  }
};
LoneKernelTimes lone_kernel_times(const BeforeAfterDocument& doc,
                                  TimingStat stat = TimingStat::Median,
                                  const DeviceProfile* profile = nullptr);

// The most a merged step saves per predicted us (device_profile.h: "merged").
inline constexpr double kMaxMergedRatio = 20;

// One entry per model.
LoneKernelSaving fit_lone_kernel_saving(const std::vector<LoneKernelTimes>& models);

}  // namespace fx
