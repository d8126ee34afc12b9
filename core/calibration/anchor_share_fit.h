// SPDX-License-Identifier: Apache-2.0
#pragma once
// The share of an anchored group's unfused time that fusing it saves, per fused-kernel
// class, measured on before/after results (device_profile.h: anchor_group_saving).
//
// A group around a conv, depthwise conv, pooling or MatMul saves more than its
// epilogue's traffic: the fused program runs the anchor itself another way (oneDNN
// post-ops, channels-last, the generated depthwise loop). The saving model's terms
// (saving_model.h) describe that through the rates and fall back to the difference of
// kernel times when their fit does not beat it; both miss most of it on models they
// were not fitted to. Here, per class over the fitted results' groups:
//   share(class) = median over groups of measured saving / predicted unfused time
// (the unfused time on the fitted rates, as analysis predicts it), with at least
// kMinShareModels models and kMinShareGroups groups (else 0: not measured), and the
// interval's half width from leave-one-model-out residuals: for each model, the share of
// the OTHER models predicts its groups, and the `coverage` quantile of
// |measured - predicted| / predicted unfused time is the relative half width.

#include <vector>

#include "analysis/group_terms.h"
#include "device/device_profile.h"

namespace fx {

inline constexpr int kMinShareModels = 3;
inline constexpr int kMinShareGroups = 12;

// True for the fused-kernel classes that have an anchor (the share applies to them).
bool anchor_share_class(KernelClass c);

// groups[i] belongs to model group_model[i]; unfused times on `p`.
AnchorGroupSaving fit_anchor_group_saving(const std::vector<GroupTermsSample>& groups,
                                          const std::vector<int>& group_model,
                                          const DeviceProfile& p, double coverage = 0.9);

}  // namespace fx
