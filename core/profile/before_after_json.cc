#include "profile/before_after_json.h"

#include <cmath>

#include "profile/profile_json.h"

namespace fx {
namespace {

using nlohmann::json;

json num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json run_json(const ProfileResult& r) {
  json j = profile_result_json(r);  // median_ms, min_ms, max_ms, kernels, trace, ...
  return j;
}

}  // namespace

nlohmann::json before_after_json(const BeforeAfterResult& r, const BeforeAfterMeta& meta) {
  json groups = json::array();
  for (const auto& g : r.groups)
    groups.push_back({{"id", g.id},
                      {"pattern", g.pattern},
                      {"nodes", g.nodes},
                      {"status", g.status},
                      {"backend", g.backend},
                      {"reason", g.reason},
                      {"predicted_saved_us", num(g.predicted_saved_us)},
                      {"measured_saved_us", num(g.measured_saved_us)},
                      {"max_abs_error", num(g.max_abs_error)},
                      {"max_rel_error", num(g.max_rel_error)},
                      {"estimate_profile", g.estimate_profile},
                      {"bytes_saved", g.bytes_saved},
                      {"launches_saved", g.launches_saved},
                      {"before_us", num(g.before_us)},
                      {"after_us", num(g.after_us)}});
  return {{"schema", "fusion-explorer/before-after"},
          {"schema_version", 1},
          {"model", meta.model},
          {"plan", meta.plan.empty() ? json(nullptr) : json(meta.plan)},
          {"opt_level", meta.opt_level < 0 ? json(nullptr) : json(meta.opt_level)},
          {"device", r.before.device},
          {"estimate_profile", r.estimate_profile},
          {"threads", r.before.threads},
          {"runs", r.before.runs},
          {"warmup", r.before.warmup},
          {"seed", meta.seed},
          {"interleaved", true},
          {"before", run_json(r.before)},
          {"after", run_json(r.after)},
          {"speedup", num(r.speedup)},
          {"max_abs_error", num(r.outputs.max_abs_error)},
          {"max_rel_error", num(r.outputs.max_rel_error)},
          {"outputs_match", r.outputs.match},
          {"mismatch", r.outputs.where},
          {"tolerance",
           {{"rtol", r.tolerance.rtol}, {"atol", r.tolerance.atol}, {"mode", r.tolerance.mode()}}},
          {"codegen_note", r.codegen_note},
          {"groups", std::move(groups)}};
}

}  // namespace fx
