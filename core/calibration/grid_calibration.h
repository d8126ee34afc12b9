// SPDX-License-Identifier: Apache-2.0
#pragma once
// `fxc calibrate`: this machine's kernel classes measured over a grid of shapes
// (calibration_grid.h), never over the models the profile will judge.
//
//   1. machine facts, a reference loop and /proc/loadavg (machine_facts.h)
//   2. the quick measurement (cpu_calibration.h: copy bandwidth, oneDNN GEMM, dispatch,
//      Winograd answers): the base profile
//   3. the STREAM-like copy curve across the cache hierarchy: the base profile's
//      working-set curve (device_profile.h: bandwidth_curve), saved beside the results
//      as base-profile.json.txt
//   4. each grid family analysed on the base profile (opt level 2, every group the
//      finder forms accepted) and timed unfused and fused by the before/after machinery,
//      `repeats` times (each a separate measurement; a group's saving is the median over
//      them, its noise their spread)
//   5. those results fitted exactly as `fxc calibrate --from` fits model results
//      (calibrate_from.h: class rates, fused scales and epilogue bandwidths, the saving
//      model), and per fused class the residuals of leave-one-group-out saving
//      predictions (saving_uncertainty.h): the intervals of every later estimate
//   6. the reference loop again, and the sanity checks (sanity_checks.h)
// A calibration with findings is not trustworthy(): the caller refuses to save it, or
// saves it with the findings in calibration_flags.

#include <functional>
#include <string>
#include <vector>

#include "calibration/calibrate_from.h"
#include "calibration/machine_facts.h"
#include "calibration/sanity_checks.h"
#include "device/device_profile.h"

namespace fx {

struct GridCalibrationOptions {
  int repeats = 3;       // before/after measurements per family
  int runs = 7;          // timed runs of each (warm-up 2)
  int threads = 0;       // 0: every hardware thread, as the executor
  std::string work_dir;  // where the before/after results are written ("": a temp folder)
  std::string date;      // "2026-11-27", for the provenance
  BusyLimits limits;
  std::function<void(const std::string&)> progress;  // one line per step
};

struct GridCalibration {
  DeviceProfile profile;  // what is saved
  CalibrationRun run;     // the fit, as `fxc calibrate --from` reports it
  MachineFacts facts;
  std::vector<CopyPoint> copy;
  BusyProbe busy_before, busy_after;
  double median_kernel_dispersion = NAN;
  std::vector<std::string> implausible, busy;  // sanity-check findings
  std::vector<std::string> result_files;
  int groups = 0;  // grid groups measured (all repeats merged)
  double seconds = 0;

  bool trustworthy() const { return implausible.empty() && busy.empty(); }
  std::vector<std::string> findings() const;
};

// Throws fx::Error when a grid family cannot be run or fitted.
GridCalibration calibrate_grid(const GridCalibrationOptions& options = {});

// The sorted op types of the grid's graphs (DeviceProfile::measured_ops).
std::vector<std::string> grid_op_types(const std::vector<GridFamily>& grid);

}  // namespace fx
