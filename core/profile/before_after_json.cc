// SPDX-License-Identifier: Apache-2.0
#include "profile/before_after_json.h"

#include <cmath>

#include "profile/profile_json.h"

namespace fx {

using nlohmann::json;

json kernel_terms_json(const KernelTerms& t) {
  return {{"class", kernel_class_name(t.kernel_class)},
          {"bytes", t.bytes},
          {"flops", t.flops},
          {"launches", t.launches},
          {"epilogue_bytes", t.epilogue_bytes},
          {"relayout_bytes", t.relayout_bytes},
          {"constant_bytes", t.constant_bytes},
          {"planes", t.planes},
          {"winograd", t.winograd},
          {"fused", t.fused}};
}

namespace {

json num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json run_json(const ProfileResult& r, const std::vector<std::optional<KernelTerms>>& terms) {
  json j = profile_result_json(r);  // median_ms, min_ms, max_ms, kernels, trace, ...
  // Each kernel row gets the cost model's terms ("cost": null when unknown).
  json& rows = j["kernels"];
  for (std::size_t i = 0; i < rows.size() && i < terms.size(); ++i)
    rows[i]["cost"] = terms[i] ? kernel_terms_json(*terms[i]) : json(nullptr);
  return j;
}

json group_terms_json(const GroupMeasurement& g) {
  if (!g.fused_terms) return nullptr;
  json unfused = json::array();
  for (const auto& [node, t] : g.unfused_terms) {
    json row = kernel_terms_json(t);
    row["node"] = node;
    unfused.push_back(std::move(row));
  }
  return {{"unfused", std::move(unfused)}, {"fused", kernel_terms_json(*g.fused_terms)}};
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
                      {"predicted_low_us", num(g.predicted_low_us)},
                      {"predicted_high_us", num(g.predicted_high_us)},
                      {"measured_saved_us", num(g.measured_saved_us)},
                      {"max_abs_error", num(g.max_abs_error)},
                      {"max_rel_error", num(g.max_rel_error)},
                      {"estimate_profile", g.estimate_profile},
                      {"predicted_by", g.predicted_by},
                      {"bytes_saved", g.bytes_saved},
                      {"launches_saved", g.launches_saved},
                      {"before_us", num(g.before_us)},
                      {"after_us", num(g.after_us)},
                      {"cost_terms", group_terms_json(g)}});
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
          {"before", run_json(r.before, r.before_terms)},
          {"after", run_json(r.after, r.after_terms)},
          {"speedup", num(r.speedup)},
          {"max_abs_error", num(r.outputs.max_abs_error)},
          {"max_rel_error", num(r.outputs.max_rel_error)},
          {"outputs_match", r.outputs.match},
          {"mismatch", r.outputs.where},
          {"tolerance",
           {{"rtol", r.tolerance.rtol},
            {"atol", r.tolerance.atol},
            {"mode", r.tolerance.mode()},
            {"steps", r.tolerance.steps}}},
          {"codegen_note", r.codegen_note},
          {"groups", std::move(groups)}};
}

}  // namespace fx
