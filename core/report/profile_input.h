#pragma once
// Measurements a report can show, read tolerantly from either
//   - a before/after result (`fxc profile --plan PLAN --json`, docs/before_after.md), or
//   - a single-run result (`fxc profile --json`, profile_json.h): no before/after then.
// Missing optional keys become NaN / empty and a warning; only a document that is not
// an object, or holds neither "before" nor "kernels", is an error.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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

struct MeasuredGroup {
  std::string id, pattern, status, backend, reason;
  std::vector<std::string> nodes;
  double predicted_saved_us = NAN;
  double measured_saved_us = NAN;
  double max_abs_error = NAN;
  double bytes_saved = NAN;  // the estimate's inputs (for the calibration fit)
  double launches_saved = NAN;
};

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

// Throws FileError(origin, ...) only for a document that is not a profile at all.
ProfileInput read_profile_input(const nlohmann::json& doc, const std::string& origin);

}  // namespace fx
