// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one reader of the before/after result (docs/before_after.md; written by
// before_after_json.h): the report, the GUI, the CLI's text output and the calibration
// fits all read it through here, as typed data.
//
//   BeforeAfterDocument d = load_before_after_document("result.json");
//   d.before.median_ms, d.after.kernels[i].cost, d.groups[j].measured_saved_us
//   Timeline t = d.after.laid_end_to_end();   // when the result holds no trace
//
// A single-run profile (`fxc profile --json`, profile_json.h) reads as a document with
// `before_after` false and only `before` filled (its top level is the run).
//
// Tolerant, since results outlive the code that wrote them: a missing or unreadable
// optional key becomes NaN / "" / nullopt and a line in `warnings`; older results get
// the defaults their writer implied (rows without "fused" terms: fused when they cover
// several nodes). Only a document that is not JSON, not an object, or holds neither
// "before" nor "kernels" is an error: FileError naming the origin and the cause.

#include <cmath>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/cost_model.h"
#include "profile/timeline.h"

namespace fx {

// One row of a run's "kernels" (profile_json.h). Times are NaN when absent.
struct KernelRow {
  std::string name;
  std::vector<std::string> op_types, nodes;
  std::optional<int> group_id;
  int calls = 1;
  double median_us = NAN, min_us = NAN, max_us = NAN;
  double q1_us = NAN, q3_us = NAN;  // NaN in results written before the quartiles
  double share = NAN;
  int64_t bytes_read = 0, bytes_written = 0, flops = 0;
  std::optional<KernelTerms> cost;  // "cost": the cost model's terms; nullopt when unknown

  bool has_quartiles() const { return !std::isnan(q1_us) && !std::isnan(q3_us); }
};

// "before" or "after" (or a single-run profile's top level).
struct RunDocument {
  bool present = false;  // the object was there
  double median_ms = NAN, min_ms = NAN, max_ms = NAN;
  bool has_kernels = false;  // "kernels" was a list
  std::vector<KernelRow> kernels;
  // The embedded Chrome trace, every run it holds; nullopt when absent, empty or
  // unreadable (a warning says which).
  std::optional<Timeline> trace;

  double kernel_sum_us() const;  // sum of the rows' median times (NaN counted as 0)
  // The rows laid end to end by their median times from 0, with their nodes, op types,
  // bytes and FLOPs: the timeline to show when the result holds no trace.
  Timeline laid_end_to_end() const;
};

// A group's "cost_terms": the members' terms run apart and the group's as one kernel.
struct GroupCostTerms {
  // (node, terms) per member kernel; nullopt where a member's terms are unreadable.
  std::vector<std::pair<std::string, std::optional<KernelTerms>>> unfused;
  KernelTerms fused;

  bool complete() const;  // every member's terms were read
};

// One entry of "groups". Numbers are NaN when absent or null (unknown).
struct BeforeAfterGroup {
  std::string id, pattern, status, backend, reason;
  std::vector<std::string> nodes;
  std::string estimate_profile, predicted_by;
  double predicted_saved_us = NAN;
  double predicted_low_us = NAN, predicted_high_us = NAN;  // its interval, when calibrated
  double measured_saved_us = NAN;
  double max_abs_error = NAN, max_rel_error = NAN;
  double bytes_saved = NAN, launches_saved = NAN;  // the estimate's inputs
  double before_us = NAN, after_us = NAN;
  std::optional<GroupCostTerms> cost_terms;  // nullopt when absent or its "fused" unreadable

  bool excluded() const { return status == "excluded"; }
};

struct BeforeAfterDocument {
  std::string origin;         // the file or stream it was read from
  bool before_after = false;  // false: a single-run profile, only `before` filled
  std::string schema;
  int schema_version = 1;
  std::string model, plan, device, estimate_profile;
  int opt_level = -1;  // -1 with a plan file
  int runs = 0, warmup = 0, threads = 0;
  int64_t seed = -1;
  RunDocument before, after;
  double speedup = NAN;
  double max_abs_error = NAN, max_rel_error = NAN;
  std::optional<bool> outputs_match;
  std::string mismatch, codegen_note;
  double rtol = NAN, atol = NAN;  // "tolerance" of the output check
  double steps = NAN;             // its quantized values' steps (NaN: absent)
  std::string tolerance_mode;     // "scaled" | "absolute" | "" (absent)
  bool has_groups = false;        // "groups" was a list
  std::vector<BeforeAfterGroup> groups;
  std::vector<std::string> warnings;  // keys that were missing or unreadable

  // `before` or `after` by its key; nullptr for any other name.
  const RunDocument* run(std::string_view side) const;
};

// Reads a parsed document; `origin` names it in errors and warnings.
BeforeAfterDocument read_before_after_document(const nlohmann::json& doc,
                                               const std::string& origin);
// Parses `text` first (FileError(origin, "not valid JSON: ...") when it is not JSON).
BeforeAfterDocument parse_before_after_document(std::string_view text, const std::string& origin);
// Reads the file at `path` (FileError naming it when it cannot be read).
BeforeAfterDocument load_before_after_document(const std::string& path);

// The inverse of kernel_terms_json (before_after_json.h): nullopt without a known
// class and finite bytes and FLOPs; terms added after the first results default to 0
// (false for "winograd"). "fused" is left false when absent: the caller knows the rule.
// A depthwise kernel without weights in a result written before the pooling class is
// read as pooling (kernel_class.h).
std::optional<KernelTerms> kernel_terms_from_json(const nlohmann::json& terms);

}  // namespace fx
