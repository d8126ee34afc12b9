// SPDX-License-Identifier: Apache-2.0
#include "report/profile_input.h"

#include "profile/timeline.h"

namespace fx {
namespace {

// The kernels of the first run of the trace (the profiler exports the representative
// run only, but an imported trace may hold several), else the rows laid end to end.
RunProfile run_profile(const RunDocument& doc) {
  RunProfile run;
  run.median_ms = doc.median_ms;
  run.min_ms = doc.min_ms;
  run.max_ms = doc.max_ms;
  run.kernel_count = int64_t(doc.kernels.size());
  run.kernel_sum_us = doc.kernel_sum_us();
  run.timeline_from_trace = doc.trace.has_value();
  const Timeline t = doc.trace ? doc.trace->single_run(0) : doc.laid_end_to_end();
  for (const auto& e : t.events)
    run.timeline.push_back({e.name, e.nodes, e.start_us, e.duration_us});
  return run;
}

}  // namespace

ProfileInput profile_input_of(const BeforeAfterDocument& d) {
  ProfileInput p;
  p.before_after = d.before_after;
  p.origin = d.origin;
  p.model = d.model;
  p.plan = d.plan;
  p.device = d.device;
  p.estimate_profile = d.estimate_profile;
  p.opt_level = d.opt_level;
  p.runs = d.runs;
  p.warmup = d.warmup;
  p.threads = d.threads;
  p.seed = d.seed;
  p.before = run_profile(d.before);
  p.after = run_profile(d.after);
  p.speedup = d.speedup;
  if (std::isnan(p.speedup) && p.after.median_ms > 0)
    p.speedup = p.before.median_ms / p.after.median_ms;
  p.max_abs_error = d.max_abs_error;
  p.max_rel_error = d.max_rel_error;
  p.outputs_match = d.outputs_match;
  p.groups = d.groups;
  p.warnings = d.warnings;
  return p;
}

ProfileInput read_profile_input(const nlohmann::json& doc, const std::string& origin) {
  return profile_input_of(read_before_after_document(doc, origin));
}

}  // namespace fx
