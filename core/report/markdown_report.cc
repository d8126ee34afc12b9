// SPDX-License-Identifier: Apache-2.0
// The Markdown report: the HTML report's content as tables (no charts; the numbers the
// charts draw are in the group table), for pull requests and wikis.

#include <fmt/format.h>

#include "analysis/plan_totals.h"
#include "report/report_charts.h"
#include "report/report_text.h"
#include "report/report_writer.h"

namespace fx {
namespace {

std::string cell(std::string_view s) {
  return escape_markdown_cell(s);
}

std::string opt_num(double v, const std::string& unit = "", int digits = 3) {
  return std::isfinite(v) ? format_number(v, digits) + unit : "-";
}

std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::string out = "|";
  for (const auto& h : header) out += " " + cell(h) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out += " --- |";
  out += "\n";
  for (const auto& r : rows) {
    out += "|";
    for (const auto& c : r) out += " " + cell(c) + " |";
    out += "\n";
  }
  return out + "\n";
}

const MeasuredGroup* measured(const ReportData& d, const std::string& id) {
  if (!d.profile) return nullptr;
  for (const auto& g : d.profile->groups)
    if (g.id == id) return &g;
  return nullptr;
}

}  // namespace

std::string render_markdown_report(const ReportData& d) {
  const ModelSummary& m = d.model;
  const AnalysisResult& a = d.analysis;
  std::string out = "# Fusion report: " + cell(m.file) + "\n\n";
  out += fmt::format(
      "Generated {} by {}. Plan: {}{}.\n\n", cell(d.generated_at), cell(d.generator),
      cell(d.options.plan_path.empty() ? std::string("the analysis's plan (not saved to a file)")
                                       : d.options.plan_path),
      d.options.profile_path.empty() ? "" : ". Profile: " + cell(d.options.profile_path));
  for (const auto& w : d.warnings) out += "> **Warning:** " + cell(w) + "\n\n";

  out += "## Model\n\n";
  std::string opsets;
  for (const auto& [dom, v] : m.opsets)
    opsets += (opsets.empty() ? "" : ", ") + (dom.empty() ? std::string("ai.onnx") : dom) + " " +
              std::to_string(v);
  out +=
      table({"property", "value"},
            {{"file", m.file},
             {"producer", m.producer.empty() ? "unknown" : m.producer},
             {"IR version / opsets", fmt::format("{} / {}", m.ir_version, opsets)},
             {"nodes", std::to_string(m.nodes)},
             {"inputs / outputs", fmt::format("{} / {}", m.inputs, m.outputs)},
             {"parameters", fmt::format("{} in {} initializers ({})", m.parameters, m.initializers,
                                        human_bytes(double(m.parameter_bytes)))}});
  std::vector<std::vector<std::string>> ops;
  for (std::size_t i = 0; i < m.op_histogram.size() && int(i) < d.options.top_ops; ++i)
    ops.push_back({m.op_histogram[i].first, std::to_string(m.op_histogram[i].second)});
  out += fmt::format("Op types, top {} of {}:\n\n", ops.size(), m.op_histogram.size());
  out += table({"op", "count"}, ops);

  const DeviceProfile& p = d.device;
  out += "## Device profile\n\n";
  out += table(
      {"property", "value"},
      {{"name", p.name},
       {"numbers from", (p.source.empty() ? "unknown" : p.source) +
                            (p.datasheet() ? " (datasheet estimate, never measured)" : "")},
       {"memory bandwidth", human_bytes(p.memory_bandwidth_bytes_per_s) + "/s"},
       {"peak compute", format_number(p.peak_flops / 1e9, 1) + " GFLOP/s"},
       {"launch overhead", human_us(p.launch_overhead_s * 1e6)},
       {"on-chip capacity", human_bytes(double(p.onchip_capacity_bytes)) +
                                (p.capacity_note.empty() ? "" : " (" + p.capacity_note + ")")}});
  const PlanTotals t = plan_totals(a, d.groups);  // the accepted groups, as the GUI counts
  out += fmt::format(
      "Every estimate is {}: a cost model, not a measurement. With the {} of {} groups the "
      "plan accepts fused: kernels {} -> {}, time {} -> {} ({:.2f}x).\n\n",
      cell(estimate_label(d)), t.accepted, t.groups, t.kernels_before, t.kernels_after,
      human_us(t.time_before_s * 1e6), human_us(t.time_after_s * 1e6), t.speedup());

  bool has_meas = d.profile && d.profile->before_after;
  out += "## Fusion groups\n\n";
  const std::string sources = saving_sources_label(d);
  out += "Estimates: " + cell(estimate_label(d)) +
         (sources.empty() ? std::string() : "; " + cell(sources)) + ". " +
         (has_meas ? "Measured: " + cell(measurement_label(d)) + "." : "Not measured.") + "\n\n";
  std::vector<std::string> header = {"group",          "pattern",        "ops",
                                     "status",         "reason",         "traffic saved",
                                     "launches saved", "est. time saved"};
  if (has_meas) header.insert(header.end(), {"measured saved", "backend"});
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : d.groups) {
    const GroupEstimate& e = g.estimate;
    std::string ops_s;
    for (const auto& op : g.ops) ops_s += (ops_s.empty() ? "" : " > ") + op;
    std::vector<std::string> r = {g.id,
                                  g.pattern,
                                  ops_s,
                                  std::string(group_status_name(g.status)),
                                  g.reason,
                                  fmt::format("{} ({}%)", human_bytes(double(e.bytes_saved())),
                                              format_number(e.traffic_reduction() * 100, 0)),
                                  std::to_string(e.launches_saved()),
                                  estimate_text(e)};
    if (has_meas) {
      const MeasuredGroup* mg = measured(d, g.id);
      r.push_back(mg && std::isfinite(mg->measured_saved_us) ? human_us(mg->measured_saved_us)
                                                             : "-");
      r.push_back(mg ? mg->status + (mg->backend.empty() ? "" : ", " + mg->backend) +
                           (mg->reason.empty() ? "" : ": " + mg->reason)
                     : "not in the profile");
    }
    rows.push_back(std::move(r));
  }
  out += table(header, rows);

  out += "## Why not fused\n\n";
  out +=
      fmt::format("{} adjacent pairs stay in different kernels (opt level {}, threshold {}%).\n\n",
                  a.not_fused.size(), a.opt_level, format_number(a.threshold * 100, 0));
  std::vector<std::vector<std::string>> reasons;
  for (const auto& [reason, n] : d.why_not_counts) reasons.push_back({reason, std::to_string(n)});
  out += table({"reason", "pairs"}, reasons);

  out += "## Measurements\n\n";
  if (!d.profile) {
    out += "No profile result was given: nothing measured.\n\n";
  } else {
    const ProfileInput& pr = *d.profile;
    out += cell(measurement_label(d)) + " (source: " + cell(pr.origin) + ").\n\n";
    if (!pr.before_after)
      out +=
          "Single-run profile, not a before/after result: no measured savings per group and "
          "no equivalence check.\n\n";
    auto run = [&](const std::string& name, const RunProfile& r) {
      return std::vector<std::string>{name, opt_num(r.median_ms, " ms"), opt_num(r.min_ms, " ms"),
                                      opt_num(r.max_ms, " ms"), std::to_string(r.kernel_count)};
    };
    std::vector<std::vector<std::string>> runs = {
        run(pr.before_after ? "before (unfused)" : "profile", pr.before)};
    if (pr.before_after) runs.push_back(run("after (fused)", pr.after));
    out += table({"run", "median", "min", "max", "kernels"}, runs);
    if (pr.before_after) {
      out +=
          table({"speedup", "max abs error", "max rel error", "outputs match"},
                {{opt_num(pr.speedup, "x"),
                  std::isfinite(pr.max_abs_error) ? fmt::format("{:.3g}", pr.max_abs_error) : "-",
                  std::isfinite(pr.max_rel_error) ? fmt::format("{:.3g}", pr.max_rel_error) : "-",
                  !pr.outputs_match   ? "unknown"
                  : *pr.outputs_match ? "yes"
                                      : "NO"}});
      out += std::isnan(d.rank_correlation)
                 ? fmt::format("Rank correlation predicted vs measured: undefined ({} groups).\n\n",
                               d.correlated_groups)
                 : fmt::format(
                       "Spearman rank correlation predicted vs measured: {} over {} groups.\n\n",
                       format_number(d.rank_correlation, 3), d.correlated_groups);
      auto rows = prediction_error_rows(d);
      out += "### Prediction error (predicted vs measured saving per group)\n\n";
      if (rows.empty())
        out += "No calibration fit: " + cell(d.calibration_note) + "\n\n";
      else
        out += table({"cost model", "Spearman", "median abs rel error"}, rows);
    }
  }
  out += "## Commands to reproduce\n\n```sh\n";
  for (const auto& c : d.commands) out += c + "\n";
  return out + "```\n";
}

}  // namespace fx
