// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fusion group as the cost model sees it, apart and fused (the terms of its kernels),
// with its measured saving: what calibration fits and judges the cost model on, and what
// the saving model (saving_model.h) predicts from.
//
// The predicted saving of a group on a profile is the difference of kernel times:
//   sum(kernel_time(unfused members)) - sum(kernel_time(kernels that run it after)).

#include <cmath>
#include <string>
#include <vector>

#include "analysis/cost_model.h"
#include "device/device_profile.h"
#include "util/statistics.h"

namespace fx {

struct GroupTermsSample {
  std::string id, pattern;
  std::vector<KernelTerms> unfused;
  KernelTerms fused;  // the group as one kernel (what the plan estimated)
  // The kernels that computed the group after (its fused step, or generated parts and
  // members left apart when codegen split it), with their cost terms; empty: `fused`.
  // Which kernels run is known from codegen before timing; their times are not used.
  // Slowest first, as a result lists its kernels (the first fused one is the group's
  // fused kernel for the saving model).
  std::vector<KernelTerms> after_kernels;
  // The fused kernel runs the anchor's own runtime kernel, then the rest as generated
  // code (codegen/group_kernels.h: the generated form of a group with an anchor; a result
  // says backend "generated-cpp"): the anchor computes and moves what it did unfused.
  bool anchor_runtime = false;
  double predicted_us = NAN;  // as the result predicted it
  double measured_us = NAN;
  // What the plan estimated fusion avoids: intermediates' bytes not written and read
  // back, kernel launches (0 when the result does not say).
  double bytes_saved = 0, launches_saved = 0;
  // Standard error of measured_us from the run-to-run spread of its kernels (quartiles
  // over runs, in quadrature); NaN when the result has no quartiles. After
  // merge_repeats (calibration/merge_repeats.h): of the median over the repeats.
  double noise_us = NAN;
  int repeats = 1;  // results (separate processes) the measured saving is the median of
};

// sum(kernel_time(unfused)), in us, on `p`: what the group's members cost apart.
double unfused_group_us(const DeviceProfile& p, const GroupTermsSample& g);
// sum(kernel_time(unfused)) - sum(kernel_time(after kernels)), in us, on `p`.
double predict_group_us(const DeviceProfile& p, const GroupTermsSample& g);
// The groups whose measured saving is at least `k` times its noise (noise known):
// below that, its sign and rank are not measured.
std::vector<GroupTermsSample> resolved_groups(const std::vector<GroupTermsSample>& groups,
                                              double k = 2);
// Group savings on `p` (after) against the result's own predictions (before).
PredictionError group_error(const DeviceProfile& p, const std::vector<GroupTermsSample>& groups);
PredictionError recorded_group_error(const std::vector<GroupTermsSample>& groups);

}  // namespace fx
