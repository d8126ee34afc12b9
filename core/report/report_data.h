// SPDX-License-Identifier: Apache-2.0
#pragma once
// Everything a report shows, gathered once from the inputs (model, plan, device,
// analysis, optional profile result), then rendered by the HTML, Markdown and JSON
// writers (report_writer.h). The GUI fills it from what it has open and calls the
// same writers.
//
//   ReportData d = gather_report(ReportInputs{graph, info, plan, device, analysis,
//                                             profile_doc, options});
//   write_report(d, ReportFormat::Html, "report.html");

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/analysis_result.h"
#include "analysis/fusion_plan.h"
#include "calibration/fused_fit.h"
#include "calibration/kernel_fit.h"
#include "calibration/result_samples.h"
#include "device/device_profile.h"
#include "ir/graph.h"
#include "report/profile_input.h"
#include "util/statistics.h"  // spearman_correlation

namespace fx {

struct ModelSummary {
  std::string file;
  std::string producer;  // "pytorch 2.1"
  int64_t ir_version = 0;
  std::vector<std::pair<std::string, int64_t>> opsets;
  int64_t nodes = 0;
  int64_t values = 0;
  int64_t inputs = 0, outputs = 0;
  int64_t initializers = 0;
  int64_t parameters = 0;  // elements of all initializers with a static shape
  int64_t parameter_bytes = 0;
  int unknown_shape_nodes = 0;
  // Op type -> count, most frequent first (ties by name).
  std::vector<std::pair<std::string, int64_t>> op_histogram;
};

// How the report was asked for; also what the "commands to reproduce" repeat.
struct ReportOptions {
  std::string model_path;
  std::string plan_path;
  std::string profile_path;       // empty: no measurements
  std::string device_arg;         // --device as given (name or file)
  std::vector<std::string> dims;  // NAME=N bindings
  std::string out_path;           // the report itself, for the report command line
  std::string generated_at;       // ISO-8601 UTC; empty: now
  int top_ops = 12;               // rows of the op histogram
};

// Prediction error of the per-group savings, before and after calibration.
struct ReportCalibration {
  PredictionError before;  // as the result predicted them (its estimate profile)
  // The cost model fitted to this result's own kernels (unfused rates from the unfused
  // kernels, fused rates from the fused ones; `fxc calibrate --from` does the same):
  // in-sample, the kernel times it was fitted to make up the savings it is judged on.
  PredictionError after;
  std::string before_profile, after_method;
  int unfused_kernels = 0, fused_kernels = 0;
  // On the report's device profile when that was calibrated elsewhere (out of sample
  // for this result unless it was fitted to it).
  std::optional<PredictionError> on_device;
  std::string device_label, device_calibration;
  // Groups whose measured saving is at least twice its noise (run-to-run spread).
  int resolved_groups = 0;
  PredictionError resolved_before, resolved_after;
  // The saving model (saving_model.h) fitted to this result's group savings: in-sample,
  // and each group predicted by a fit to the others (leave one group out).
  PredictionError saving_in_sample, saving_leave_one_out;
  std::string saving_method;
};

struct ReportData {
  std::string generator;  // "fxc (Fusion Explorer) 0.1.0"
  std::string generated_at;
  ReportOptions options;
  ModelSummary model;
  DeviceProfile device;  // the profile behind every estimate
  // The plan's groups with the user's decisions and the plan's estimates.
  std::vector<FusionGroup> groups;
  std::string plan_model;                         // the model the plan was written for
  std::vector<std::string> plan_dropped_groups;   // groups naming nodes the model lacks
  AnalysisResult analysis;                        // re-run on `device`: totals and why-not pairs
  std::map<std::string, int64_t> why_not_counts;  // reason name -> pairs
  std::optional<ProfileInput> profile;            // measured results, when given
  double rank_correlation = NAN;                  // Spearman, predicted vs measured saved time
  int correlated_groups = 0;                      // groups both predicted and measured
  // How far the predicted group savings were from the measured ones before and after
  // calibration (calibration/calibrate_from.h); absent when the result has no per-kernel cost
  // terms or too few groups.
  std::optional<ReportCalibration> calibration;
  std::string calibration_note;       // why there is no fit
  std::vector<std::string> commands;  // shell lines that reproduce the inputs
  std::vector<std::string> warnings;  // inputs that were partly unusable
};

// Gathers the report from already-loaded inputs. `profile_doc` is the parsed
// `fxc profile --json` output, before/after or single run (null: none).
ReportData gather_report(const Graph& graph, const ModelInfo& info, const FusionPlan& plan,
                         const DeviceProfile& device, const AnalysisResult& analysis,
                         const nlohmann::json* profile_doc, ReportOptions options);

ModelSummary summarize_model(const Graph& graph, const ModelInfo& info, const std::string& file);

// Rows {"when", "Spearman", "median |rel error|"} for the prediction error before and
// after calibration; empty when there is no fit (see calibration_note).
std::vector<std::vector<std::string>> prediction_error_rows(const ReportData& d);

// The fxc command lines that reproduce the plan, the measurements and the report.
std::vector<std::string> reproduce_commands(const ReportData& d);

}  // namespace fx
