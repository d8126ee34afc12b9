// SPDX-License-Identifier: Apache-2.0
#pragma once
// Stage 2 of `fxc calibrate --from` (kernel_fit.h is stage 1): the fused kernels
// (terms.fused) of the "after" timeline, timed by the profile's fused formula
// (analysis/cost_model.h): per kernel class a scale on the class's time and an epilogue
// bandwidth, fitted (log space, Huber, weak prior towards scale 1 and the elementwise
// bandwidth) with the unfused rates of `unfused_fit` held. Classes without fused kernels
// keep the defaults.

#include <array>
#include <cmath>
#include <vector>

#include "calibration/kernel_fit.h"
#include "device/device_profile.h"

namespace fx {

struct FusedClassFit {
  int kernels = 0;
  int with_epilogue = 0;                       // of them, moving epilogue bytes
  double median_abs_rel_error = NAN;           // fitted
  double unfitted_median_abs_rel_error = NAN;  // scale 1, elementwise epilogue bandwidth
};

struct FusedFit {
  DeviceProfile profile;  // `unfused_fit` with fused_classes fitted
  int kernels = 0;
  double median_abs_rel_error = NAN;
  double unfitted_median_abs_rel_error = NAN;
  std::array<FusedClassFit, kKernelClassCount> classes{};
};

// Fits nothing (returns `unfused_fit` as is) when `fused` is empty.
FusedFit fit_fused_rates(const std::vector<KernelSample>& fused, const DeviceProfile& unfused_fit,
                         const KernelFitOptions& o = {});

}  // namespace fx
