// SPDX-License-Identifier: Apache-2.0
#pragma once
// The samples calibration fits and judges, read from before/after results
// (docs/before_after.md: `fxc profile MODEL --plan PLAN --json`), through the one typed
// reader of that document (profile/before_after_document.h): this file only picks, from
// what it read, the rows and groups each fit needs.
//
// Every reader throws FileError(origin, ...) for a document that is not a before/after
// result (or lacks what it reads).

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/group_terms.h"
#include "calibration/group_fit.h"
#include "calibration/kernel_fit.h"

namespace fx {

// Which per-kernel statistic of the timed runs the fit and the judgement use: the
// median (`median_us`, what measured_saved_us is made of) or the fastest run (`min_us`:
// the least disturbed by other processes on a loaded machine).
enum class TimingStat { Median, Min };

// The JSON document of a result file. Throws FileError naming the path when it cannot be
// read or is not JSON.
nlohmann::json read_before_after(const std::string& path);

// The measured groups of a before/after result: those not excluded, with numeric
// predicted/measured savings and the estimate's bytes/launches (the group fit).
std::vector<CalibrationSample> calibration_samples(const nlohmann::json& doc,
                                                   const std::string& origin);

// Rows of `before.kernels` with cost terms ("cost") and a positive time. Throws
// FileError when the result has no such rows (made before cost terms were written:
// run fxc profile again).
std::vector<KernelSample> kernel_samples(const nlohmann::json& doc, const std::string& origin,
                                         const char* side = "before",
                                         TimingStat stat = TimingStat::Median);

// The fused kernels of the "after" timeline with cost terms (fused_fit.h); empty when
// there are none.
std::vector<KernelSample> fused_kernel_samples(const nlohmann::json& doc,
                                               TimingStat stat = TimingStat::Median);

// Groups not excluded with cost terms and numeric predicted/measured savings. With Min,
// the measured saving is recomputed from the kernels' fastest runs (the members' rows
// before minus the rows that compute them after; groups where that is not possible are
// left out).
std::vector<GroupTermsSample> group_terms_samples(const nlohmann::json& doc,
                                                  const std::string& origin,
                                                  TimingStat stat = TimingStat::Median);

// Results of the same model (their "model" path, else the file) are repeats measured by
// separate processes: per model, in the order first seen, its files and its groups from
// every repeat merged (merge_repeats.h). `files` names each of `docs`.
struct ModelGroups {
  std::vector<std::string> files;
  std::vector<GroupTermsSample> groups;
};
std::vector<ModelGroups> groups_by_model(const std::vector<nlohmann::json>& docs,
                                         const std::vector<std::string>& files,
                                         TimingStat stat = TimingStat::Median);

}  // namespace fx
