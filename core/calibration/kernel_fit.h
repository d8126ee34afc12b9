// SPDX-License-Identifier: Apache-2.0
#pragma once
// Fits the cost model to before/after measurements (`fxc calibrate --from RESULT.json`).
//
// Kernel fit (fit_kernel_rates): the device profile's launch overhead and per-class
// effective rates (bandwidth and FLOP/s of elementwise, reduction, conv, depthwise,
// matmul, data_movement kernels; analysis/cost_model.h) are fitted to the per-kernel
// times of the *unfused* ("before") timeline, each kernel timed by the cost model as
// launch + max(bytes / bandwidth(class, bytes), flops / flops(class)); where the base
// profile has a working-set curve, how closely each class follows it is fitted too
// (device/device_profile.h: bandwidth_curve, follow in [0, 1.5]). The fit is in log space
// (relative errors, so a 3 us Relu counts like a 3 ms Conv), robust (Huber weights: a
// kernel hit by a scheduler slice does not drag the rates) and regularized towards the
// base profile (a class with no or only memory-bound kernels keeps the base FLOP/s).
// Stage 2 (fused_fit.h) then fits the fused kernels' scale and epilogue bandwidth, and
// stage 3 (analysis/saving_model.h) the group savings themselves; the pipeline of all
// three is calibrate_from.h.
//
// Neither of the first two stages sees the group savings; those are predicted from the
// group's cost terms (analysis/group_terms.h) and compared with the measured ones. On
// the results the fit was made on, that comparison is in-sample; `--evaluate` judges
// results the fit never saw.
//
// Noise: each group's measured saving has a standard error from its kernels' spread over
// runs (quartiles, in quadrature); groups measured within 2x of it are "unresolved":
// their rank and sign are not measured, and the judgement is also given without them.

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/cost_model.h"
#include "device/device_profile.h"

namespace fx {

struct KernelSample {
  std::string name;
  KernelTerms terms;
  double measured_us = NAN;  // median per run
  // Standard error of measured_us relative to it, from the kernel's quartiles over runs
  // (0: unknown). The fits weigh a kernel by huber^2 / (huber^2 + rel_noise^2): a kernel
  // that a loaded machine spread over a factor of two says little about its rate.
  double rel_noise = 0;
};

struct KernelFitOptions {
  double huber_log = 0.25;     // log-residual beyond which a kernel's weight falls (~28%)
  double prior_weight = 0.05;  // per parameter, in kernels' worth: a weak pull to the base
  int max_iterations = 200;
};

struct KernelClassFit {
  int kernels = 0;        // samples of this class
  int compute_bound = 0;  // of them, timed by FLOPs on the fitted profile
  double median_abs_rel_error = NAN;
};

struct KernelFit {
  DeviceProfile profile;  // the base with fitted rates, calibrated = true
  int kernels = 0;
  double median_abs_rel_error = NAN;       // per kernel, fitted profile (the fitting data)
  double base_median_abs_rel_error = NAN;  // per kernel, base profile
  std::array<KernelClassFit, kKernelClassCount> classes{};
  int iterations = 0;
};

// Throws fx::Error with fewer than 3 samples.
KernelFit fit_kernel_rates(const std::vector<KernelSample>& samples, const DeviceProfile& base,
                           const std::string& calibration, const KernelFitOptions& o = {});

}  // namespace fx
