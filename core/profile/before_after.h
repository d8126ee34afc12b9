// SPDX-License-Identifier: Apache-2.0
#pragma once
// Before/after: the unfused and the fused program of a plan, on the same seeded random
// inputs, timed in alternation, with the outputs compared (docs/before_after.md).
//
//   BeforeAfterResult r = run_before_after(graph, plan.accepted(), options);
//   r.speedup, r.outputs.match, r.groups[i].measured_saved_us
//
// Steps:
//   1. build the fused program (codegen); groups the caller excludes (e.g. one whose
//      kernel crashed in an earlier attempt) are dropped first
//   2. one unfused run keeps the values the fused steps read and write; each fused step
//      then runs alone on those inputs and its outputs are compared with the unfused
//      ones (ONNX tolerances; quantized values within one quantization step,
//      equivalence.h): a group that differs is excluded, with the reason
//   3. the whole fused program's outputs are compared with the unfused ones; when they
//      differ (errors within tolerance per group can add up), the groups whose own
//      outputs changed at all are sorted by error and the largest-error ones are excluded,
//      as few as keep the outputs matching (binary search over how many to keep)
//   4. warm-up and timed runs alternate before/after (the order flips every round)
//   5. per group: predicted saving (the plan's estimate, on its device profile) and
//      measured saving (the members' kernels before minus the fused kernel after)
//
// Runs in the calling process: a crashing kernel ends it. `fxc profile` runs this in a
// child process (before_after_child.h), which uses on_check to find the culprit.

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/cost_model.h"
#include "analysis/fusion_plan.h"
#include "codegen/fused_program.h"
#include "profile/equivalence.h"
#include "profile/fault_injection.h"
#include "profile/profiler.h"

namespace fx {

struct BeforeAfterOptions {
  ProfileOptions profile;  // runs, warmup, threads, seed, opset
  CodegenOptions codegen;
  Tolerance tolerance;
  std::map<std::string, std::string> excluded;  // group id -> why, decided by the caller
  // Told before (done = false) and after (done = true) each group's equivalence check.
  std::function<void(const std::string& id, bool done)> on_check;
  std::optional<FaultSpec> fault;  // test hook (fault_injection.h)
};

struct GroupMeasurement {
  std::string id, pattern;
  std::vector<std::string> nodes;
  std::string status;   // fused | fallback | excluded
  std::string backend;  // onednn-postops | generated-cpp | runtime-kernels | "" (excluded)
  std::string reason;   // why fallback/excluded; what it became otherwise
  double predicted_saved_us = NAN;  // the plan's estimate (NaN: unknown shapes)
  // Its interval from the calibration's residuals (NaN: the profile has none).
  double predicted_low_us = NAN, predicted_high_us = NAN;
  double measured_saved_us = NAN;  // NaN when excluded
  double max_abs_error = NAN;      // of the fused step alone against the unfused run
  double max_rel_error = NAN;
  std::string estimate_profile;  // device profile behind predicted_saved_us
  // The model behind predicted_saved_us: the profile's calibrated saving model for the
  // group's class, or "difference of kernel times" (GroupEstimate::saving_label).
  std::string predicted_by;
  // The estimate's inputs, so that the cost model can be fitted to the measurements.
  int64_t bytes_saved = 0;
  int launches_saved = 0;
  double before_us = NAN;  // sum of the members' kernels before
  double after_us = NAN;   // the fused kernel after
  // The cost model's terms of the members run apart (node name, terms; nodes without a
  // kernel left out) and of the fused kernel: a prediction on any profile is
  // sum(kernel_time(unfused)) - kernel_time(fused). Empty/nullopt with unknown shapes.
  std::vector<std::pair<std::string, KernelTerms>> unfused_terms;
  std::optional<KernelTerms> fused_terms;
};

struct BeforeAfterResult {
  ProfileResult before, after;
  double speedup = NAN;  // before.median_ms / after.median_ms
  TensorDiff outputs;    // the fused program's graph outputs against the unfused ones
  Tolerance tolerance;   // what `outputs` was checked with
  std::vector<GroupMeasurement> groups;
  std::string estimate_profile;  // of the groups' estimates ("" when none)
  // The cost model's terms of each timed kernel (aligned with before/after.kernels;
  // nullopt where a shape is unknown or a kernel is no graph node): what
  // `fxc calibrate --from` fits the device profile's rates to.
  std::vector<std::optional<KernelTerms>> before_terms, after_terms;
  std::string codegen_note;  // e.g. no compiler
};

// A group's record before it runs: its identity and the plan's estimate (prediction and
// interval, the model behind it, bytes and launches saved). The CPU and GPU before/after
// both start from it.
GroupMeasurement planned_measurement(const FusionGroup& group);

// Time of the kernels made only of `members`, summed; NaN when one of them also covers a
// node outside. With every_member, NaN too when some member has no kernel (the CPU: every
// node runs one; the GPU runs views such as Reshape without a kernel).
double kernels_covering(const std::vector<KernelStats>& kernels,
                        const std::set<std::string>& members, bool every_member);

// Throws fx::Error when the model cannot run at all (unsupported op, bad shapes).
BeforeAfterResult run_before_after(const Graph& graph,
                                   const std::vector<const FusionGroup*>& groups,
                                   const BeforeAfterOptions& options);

}  // namespace fx
