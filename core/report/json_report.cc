// SPDX-License-Identifier: Apache-2.0
// The JSON report, schema "fusion-explorer/report" version 1 (docs/report-schema.md).
// Unknown or unmeasured numbers are null, never 0, so that a CI check cannot mistake
// "not measured" for "no savings".

#include <nlohmann/json.hpp>

#include "analysis/fusion_plan.h"
#include "report/report_charts.h"
#include "report/report_writer.h"

namespace fx {
namespace {

using nlohmann::json;

json num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json run_json(const RunProfile& r) {
  return {{"median_ms", num(r.median_ms)},    {"min_ms", num(r.min_ms)},
          {"max_ms", num(r.max_ms)},          {"kernels", r.kernel_count},
          {"kernel_sum_us", r.kernel_sum_us}, {"timeline_from_trace", r.timeline_from_trace}};
}

const MeasuredGroup* measured(const ReportData& d, const std::string& id) {
  if (!d.profile) return nullptr;
  for (const auto& g : d.profile->groups)
    if (g.id == id) return &g;
  return nullptr;
}

json measured_json(const MeasuredGroup& m) {
  return {{"status", m.status},
          {"backend", m.backend},
          {"reason", m.reason},
          {"predicted_saved_us", num(m.predicted_saved_us)},
          {"measured_saved_us", num(m.measured_saved_us)},
          {"max_abs_error", num(m.max_abs_error)}};
}

json measurements_json(const ReportData& d) {
  if (!d.profile) return nullptr;
  const ProfileInput& p = *d.profile;
  json j = {{"kind", p.before_after ? "before_after" : "single_run"},
            {"source", p.origin},
            {"label", measurement_label(d)},
            {"device", p.device},
            {"estimate_profile", p.estimate_profile},
            {"runs", p.runs},
            {"warmup", p.warmup},
            {"threads", p.threads},
            {"seed", p.seed >= 0 ? json(p.seed) : json(nullptr)},
            {"before", run_json(p.before)},
            {"after", p.before_after ? run_json(p.after) : json(nullptr)},
            {"speedup", num(p.speedup)},
            {"rank_correlation", num(d.rank_correlation)},
            {"correlated_groups", d.correlated_groups}};
  if (d.calibration) {
    const ReportCalibration& c = *d.calibration;
    auto err = [&](const PredictionError& e) {
      return json{{"groups", e.groups},
                  {"spearman", num(e.spearman)},
                  {"median_abs_rel_error", num(e.median_abs_rel_error)}};
    };
    j["calibration"] = {{"before", err(c.before)},
                        {"before_profile", c.before_profile},
                        {"after", err(c.after)},
                        {"after_method", c.after_method},
                        {"in_sample", true},
                        {"unfused_kernels", c.unfused_kernels},
                        {"fused_kernels", c.fused_kernels},
                        {"resolved",
                         {{"groups", c.resolved_groups},
                          {"note", "groups whose measured saving is >= 2x its noise"},
                          {"before", err(c.resolved_before)},
                          {"after", err(c.resolved_after)}}},
                        {"saving_model",
                         {{"method", c.saving_method},
                          {"in_sample", err(c.saving_in_sample)},
                          {"leave_one_out", err(c.saving_leave_one_out)}}}};
    if (c.on_device)
      j["calibration"]["on_device"] = {{"profile", c.device_label},
                                       {"calibration", c.device_calibration},
                                       {"error", err(*c.on_device)}};
  } else {
    j["calibration"] = {{"unavailable", d.calibration_note}};
  }
  j["equivalence"] = {{"max_abs_error", num(p.max_abs_error)},
                      {"max_rel_error", num(p.max_rel_error)},
                      {"outputs_match", p.outputs_match ? json(*p.outputs_match) : json(nullptr)}};
  return j;
}

}  // namespace

std::string render_json_report(const ReportData& d) {
  const ModelSummary& m = d.model;
  json opsets = json::object();
  for (const auto& [domain, v] : m.opsets) opsets[domain.empty() ? "ai.onnx" : domain] = v;
  json hist = json::array();
  for (const auto& [op, n] : m.op_histogram) hist.push_back({{"op", op}, {"count", n}});

  json groups = json::array();
  for (const auto& g : d.groups) {
    const GroupEstimate& e = g.estimate;
    json est = {{"known", e.known},
                {"profile", e.profile},
                {"bytes_before", e.bytes_before},
                {"bytes_after", e.bytes_after},
                {"bytes_saved", e.bytes_saved()},
                {"launches_saved", e.launches_saved()},
                {"time_saved_us", e.known ? json(e.time_saved_s() * 1e6) : json(nullptr)},
                {"time_saved_by", e.saving_label()},
                {"time_saved_interval_us",
                 e.interval_known() ? json::array({e.saved_low_s * 1e6, e.saved_high_s * 1e6})
                                    : json(nullptr)},
                {"uncertain", e.uncertain()},
                {"traffic_reduction", e.traffic_reduction()},
                {"footprint_bytes", e.footprint_bytes}};
    const MeasuredGroup* mg = measured(d, g.id);
    groups.push_back({{"id", g.id},
                      {"pattern", g.pattern},
                      {"status", std::string(group_status_name(g.status))},
                      {"reason", g.reason},
                      {"nodes", g.nodes},
                      {"ops", g.ops},
                      {"estimate", est},
                      {"measured", mg ? measured_json(*mg) : json(nullptr)}});
  }
  json pairs = json::array();
  for (const auto& nf : d.analysis.not_fused)
    pairs.push_back({{"producer", nf.producer},
                     {"consumer", nf.consumer},
                     {"reason", std::string(not_fused_reason_name(nf.reason))},
                     {"text", nf.text}});

  const AnalysisResult& a = d.analysis;
  json j = {
      {"schema", "fusion-explorer/report"},
      {"schema_version", 1},
      {"generator", d.generator},
      {"generated_at", d.generated_at},
      {"inputs",
       {{"model", d.options.model_path},
        {"plan", d.options.plan_path},
        {"plan_model", d.plan_model},
        {"profile", d.options.profile_path.empty() ? json(nullptr) : json(d.options.profile_path)},
        {"device", d.options.device_arg}}},
      {"model",
       {{"file", m.file},
        {"producer", m.producer},
        {"ir_version", m.ir_version},
        {"opsets", opsets},
        {"nodes", m.nodes},
        {"values", m.values},
        {"inputs", m.inputs},
        {"outputs", m.outputs},
        {"initializers", m.initializers},
        {"parameters", m.parameters},
        {"parameter_bytes", m.parameter_bytes},
        {"unknown_shape_nodes", m.unknown_shape_nodes},
        {"op_histogram", hist}}},
      {"device", to_json(d.device)},
      {"estimates", {{"label", estimate_label(d)}}},
      {"analysis",
       {{"opt_level", a.opt_level},
        {"threshold", a.threshold},
        {"kernels_before", a.kernels_before},
        {"kernels_after", a.kernels_after},
        {"bytes_before", a.bytes_before},
        {"bytes_after", a.bytes_after},
        {"est_time_before_us", a.time_before_s * 1e6},
        {"est_time_after_us", a.time_after_s * 1e6},
        {"unknown_cost_nodes", a.unknown_cost_nodes}}},
      {"groups", groups},
      {"not_fused", {{"counts", d.why_not_counts}, {"pairs", pairs}}},
      {"measurements", measurements_json(d)},
      {"commands", d.commands},
      {"warnings", d.warnings}};
  return j.dump(2) + "\n";
}

}  // namespace fx
