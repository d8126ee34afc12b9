// SPDX-License-Identifier: Apache-2.0
#pragma once
// Measurements a report can show, from either
//   - a before/after result (`fxc profile --plan PLAN --json`, docs/before_after.md), or
//   - a single-run result (`fxc profile --json`, profile_json.h): no before/after then.
// The document is read by profile/before_after_document.h (tolerantly: missing optional
// keys become NaN / empty and a warning); this is the report's summary of it.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "profile/before_after_document.h"

namespace fx {

// One kernel of the representative run, for the timeline strip.
struct KernelBox {
  std::string name;
  std::vector<std::string> nodes;
  double start_us = 0, duration_us = 0;
};

struct RunProfile {
  double median_ms = NAN, min_ms = NAN, max_ms = NAN;
  int64_t kernel_count = 0;
  double kernel_sum_us = 0;  // sum of the kernels' median times
  std::vector<KernelBox> timeline;
  // True when `timeline` comes from the result's Chrome trace; false when the kernels
  // are laid end to end by their median times (no trace in the input).
  bool timeline_from_trace = false;
};

// A group's measurements, as the result holds them.
using MeasuredGroup = BeforeAfterGroup;

struct ProfileInput {
  bool before_after = false;  // false: single run, only `before` is filled
  std::string origin;         // file path
  std::string model, plan, device, estimate_profile;
  int opt_level = -1;
  int runs = 0, warmup = 0, threads = 0;
  int64_t seed = -1;
  RunProfile before, after;
  double speedup = NAN;
  double max_abs_error = NAN, max_rel_error = NAN;
  std::optional<bool> outputs_match;
  std::vector<MeasuredGroup> groups;
  std::vector<std::string> warnings;  // keys that were missing or unreadable
};

// The report's summary of a document read by before_after_document.h.
ProfileInput profile_input_of(const BeforeAfterDocument& doc);
// Throws FileError(origin, ...) only for a document that is not a profile at all.
ProfileInput read_profile_input(const nlohmann::json& doc, const std::string& origin);

}  // namespace fx
