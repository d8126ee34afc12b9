// SPDX-License-Identifier: Apache-2.0
#pragma once
// `fxc calibrate --from RESULT.json...`: the device profile fitted to before/after
// measurements, in three stages, and judged on the group savings of the same results
// (in-sample, and each group left out of the saving model's fit) and of results the fit
// never saw (--evaluate):
//   1. the unfused kernels' rates per class (kernel_fit.h),
//   2. the fused kernels' scale and epilogue bandwidth per class (fused_fit.h),
//   3. the saving model's coefficients per fused-kernel class (analysis/saving_model.h).
// A single result without per-kernel cost terms gets the older group fit instead
// (group_fit.h: bandwidth and launch overhead, in-sample).
//
// The result is typed; calibrate_from_json.h writes it as `fxc calibrate --json` prints
// it, and the CLI prints it as text. Nothing here writes the profile.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/group_terms.h"
#include "analysis/saving_model.h"
#include "calibration/fused_fit.h"
#include "calibration/group_fit.h"
#include "calibration/kernel_fit.h"
#include "calibration/result_samples.h"
#include "device/device_profile.h"
#include "util/statistics.h"

namespace fx {

struct CalibrateFromOptions {
  std::vector<std::string> from;      // before/after results the fit is made on
  std::vector<std::string> evaluate;  // results judged with the fitted profile, not fitted
  std::string stat = "median";        // median | min: which kernel time to fit and judge
  // The profile the fit starts from, resolved once the results have been read.
  std::function<DeviceProfile()> base;
  std::string date;  // "2026-11-27": when, for the provenance
};

// How well group savings are predicted, on one set of results.
struct JudgedGroups {
  std::string from;
  int groups = 0, resolved = 0;  // resolved: measured beyond 2x their noise
  PredictionError recorded;      // the results' own predictions
  PredictionError base_model;    // this cost model on the base profile
  PredictionError unfused_only;  // the unfused rates fitted only (stage 1)
  PredictionError fitted;        // stages 1 and 2
  PredictionError resolved_recorded, resolved_fitted;
  PredictionError saving, resolved_saving;  // the saving model (stage 3)
};

// The older fit, for a result without per-kernel cost terms.
struct GroupFitCalibration {
  std::string from;
  int groups = 0;
  CalibrationFit fit;
  DeviceProfile profile;  // the base with the fitted bandwidth and launch overhead
};

struct KernelFitCalibration {
  KernelFit kernel_fit;
  FusedFit fused_fit;
  SavingModel saving;
  DeviceProfile profile;                 // all three stages: what is saved
  std::vector<GroupTermsSample> groups;  // the fitted results' groups, merged per model
  std::vector<int> group_model;          // per group: which model (index) it comes from
  JudgedGroups fitted_results;           // judged on the results fitted to
  PredictionError leave_one_out, leave_one_out_resolved;  // the saving model's
  std::vector<JudgedGroups> held_out;                     // per --evaluate model (and all of them)
};

struct CalibrationRun {
  CalibrateFromOptions options;
  DeviceProfile base;
  std::string estimate_profile;  // the profile the first result's predictions were made on
  std::optional<GroupFitCalibration> group_fit;  // one of the two is set
  std::optional<KernelFitCalibration> kernel_fit;

  const DeviceProfile& profile() const {
    return kernel_fit ? kernel_fit->profile : group_fit->profile;
  }
};

// Reads the results (FileError naming a file that cannot be read) and fits. Throws
// fx::Error for a --stat other than median or min, or too few samples to fit.
CalibrationRun calibrate_from(const CalibrateFromOptions& options);

// `fxc calibrate --json`: the run, and where its profile was written.
nlohmann::json to_json(const CalibrationRun& run, const std::string& written_to);

}  // namespace fx
