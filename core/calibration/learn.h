// SPDX-License-Identifier: Apache-2.0
#pragma once
// Folding measured before/after results into the calibration (issue 21, "learn from each
// profile"): opt-in, remembered per CPU. `fxc calibrate --learn RESULT.json` and the GUI's
// before/after view both call learn_from_results:
//   1. each new result is read (FileError naming it when it is not one) and copied into
//      the learned folder, so that it stays learned (delete it to forget);
//   2. the grid's results and every learned result are fitted together on the cached
//      profile (calibrate_from.h), the intervals recomputed (saving_uncertainty.h);
//   3. the new results' groups are predicted with the profile before the update and with
//      the one after it: the estimate error before and after, which the user sees. The
//      "after" figure is on groups the update was fitted to (in-sample): it says how far
//      the update moved the estimates towards this machine, not how well it transfers.
// Nothing here writes the profile: the caller saves LearnOutcome::profile.

#include <string>
#include <vector>

#include "calibration/calibrate_from.h"
#include "device/device_profile.h"
#include "util/statistics.h"

namespace fx {

struct LearnOptions {
  std::vector<std::string> results;  // before/after results to fold in
  std::string grid_dir;              // the grid calibration's results (`fxc calibrate`)
  std::string learned_dir;           // where learned results are kept
  DeviceProfile cached;              // the calibrated profile now in use
  std::string date;                  // "2026-11-27", for the provenance
  std::string stat = "median";
};

struct LearnOutcome {
  DeviceProfile profile;  // the updated profile, to save
  CalibrationRun run;
  int learned_results = 0;  // results now in the learned folder (the new ones included)
  // The new results' groups: predicted saving against measured, before and after.
  PredictionError before, after;
};

// Throws fx::Error when the grid folder has no results, FileError for a bad result.
LearnOutcome learn_from_results(const LearnOptions& options);

// Where the grid keeps its before/after results (device_cache_dir()/calibration-grid) and
// where learned results are kept (.../learned): per user cache, so per machine.
std::string grid_results_dir();
std::string learned_results_dir();

// The .json files of a folder, sorted ("" or missing folder: none).
std::vector<std::string> json_files_in(const std::string& dir);

}  // namespace fx
