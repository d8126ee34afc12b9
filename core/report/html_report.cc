// SPDX-License-Identifier: Apache-2.0
// The HTML report: one file with inline CSS and inline SVG, no scripts, no fonts, no
// links to anything outside it, so that it opens offline and prints as it looks.

#include <fmt/format.h>

#include "analysis/plan_totals.h"
#include "report/report_charts.h"
#include "report/report_text.h"
#include "report/report_writer.h"

namespace fx {
namespace {

constexpr const char* kStyle = R"(
body{font-family:sans-serif;margin:24px auto;max-width:1180px;color:#222;line-height:1.4}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;border-bottom:1px solid #ddd;margin-top:28px}
.meta{color:#666;font-size:13px}.label{color:#666;font-size:12px;font-style:italic}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:6px;
padding:8px 14px;min-width:170px}.card b{display:block;font-size:20px}
.warn{background:#fff4e0;border:1px solid #f0c36d;padding:6px 10px;font-size:13px}
.ok{color:#2a7d2a;font-weight:bold}.bad{color:#b22;font-weight:bold}
.accepted{color:#2a7d2a}.rejected{color:#b22}.candidate{color:#666}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px}
.hbar{background:#4e79a7;height:10px;display:inline-block}
pre{background:#f6f6f6;padding:10px;overflow-x:auto;font-size:12px}
.charts{display:flex;gap:16px;flex-wrap:wrap;align-items:flex-start}
)";

std::string esc(std::string_view s) {
  return escape_xml(s);
}

std::string opt_num(double v, const std::string& unit = "", int digits = 1) {
  return std::isfinite(v) ? format_number(v, digits) + unit : "&ndash;";
}

// Escapes each item; `sep` is markup.
std::string join_escaped(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + escape_xml(s);
  return out;
}

const MeasuredGroup* measured(const ReportData& d, const std::string& id) {
  if (!d.profile) return nullptr;
  for (const auto& g : d.profile->groups)
    if (g.id == id) return &g;
  return nullptr;
}

std::string model_section(const ReportData& d) {
  const ModelSummary& m = d.model;
  std::string opsets;
  for (const auto& [dom, v] : m.opsets)
    opsets += (opsets.empty() ? "" : ", ") + (dom.empty() ? std::string("ai.onnx") : dom) + " " +
              std::to_string(v);
  std::string out = "<h2>Model</h2>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    out += "<tr><th>" + k + "</th><td>" + v + "</td></tr>\n";
  };
  row("File", esc(m.file));
  row("Producer", esc(m.producer.empty() ? "unknown" : m.producer));
  row("IR version / opsets", fmt::format("{} / {}", m.ir_version, esc(opsets)));
  row("Nodes", std::to_string(m.nodes));
  row("Inputs / outputs", fmt::format("{} / {}", m.inputs, m.outputs));
  row("Parameters", fmt::format("{} in {} initializers ({})", m.parameters, m.initializers,
                                human_bytes(double(m.parameter_bytes))));
  if (m.unknown_shape_nodes) row("Nodes of unknown shape", std::to_string(m.unknown_shape_nodes));
  out += "</table>\n";
  int top = std::max(1, d.options.top_ops);
  out += fmt::format(
      "<p>Op types, top {} of {}:</p>\n<table>\n<tr><th>op</th><th>count</th><th></th></tr>\n",
      std::min<std::size_t>(top, m.op_histogram.size()), m.op_histogram.size());
  int64_t most = m.op_histogram.empty() ? 1 : m.op_histogram.front().second;
  for (std::size_t i = 0; i < m.op_histogram.size() && int(i) < top; ++i) {
    const auto& [op, n] = m.op_histogram[i];
    out += fmt::format(
        "<tr><td>{}</td><td class=\"n\">{}</td><td><span class=\"hbar\" style=\"width:{}px\">"
        "</span></td></tr>\n",
        esc(op), n, int(200.0 * double(n) / double(most)));
  }
  return out + "</table>\n";
}

std::string device_section(const ReportData& d) {
  const DeviceProfile& p = d.device;
  std::string out = "<h2>Device profile</h2>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    out += "<tr><th>" + k + "</th><td>" + v + "</td></tr>\n";
  };
  row("Name", esc(p.name));
  if (!p.description.empty()) row("Description", esc(p.description));
  row("Numbers from", esc((p.source.empty() ? "unknown" : p.source) +
                          (p.datasheet() ? " (datasheet estimate, never measured)" : "")));
  row("Memory bandwidth", human_bytes(p.memory_bandwidth_bytes_per_s) + "/s");
  row("Peak compute", format_number(p.peak_flops / 1e9, 1) + " GFLOP/s");
  row("Launch overhead", human_us(p.launch_overhead_s * 1e6));
  row("On-chip capacity", human_bytes(double(p.onchip_capacity_bytes)) +
                              (p.capacity_note.empty() ? "" : " (" + esc(p.capacity_note) + ")"));
  return out + "</table>\n<p class=\"label\">Every estimate in this report is " +
         esc(estimate_label(d)) + ": a cost model, not a measurement.</p>\n";
}

std::string groups_section(const ReportData& d) {
  auto colors = group_colors(d);
  bool has_meas = d.profile && d.profile->before_after;
  std::string out = fmt::format(
      "<h2>Fusion groups</h2>\n<p class=\"label\">Estimates: {}{}. "
      "{}</p>\n<table>\n<tr><th>group</th>"
      "<th>pattern</th><th>ops</th><th>status</th><th>reason</th><th>traffic saved</th>"
      "<th>launches saved</th><th>est. time saved</th>{}</tr>\n",
      esc(estimate_label(d)),
      saving_sources_label(d).empty() ? std::string() : "; " + esc(saving_sources_label(d)),
      has_meas ? "Measured: " + esc(measurement_label(d)) + "." : "Not measured.",
      has_meas ? "<th>measured saved</th><th>backend</th>" : "");
  for (const auto& g : d.groups) {
    const GroupEstimate& e = g.estimate;
    std::string status(group_status_name(g.status));
    std::string swatch =
        colors.count(g.id)
            ? "<span class=\"swatch\" style=\"background:" + colors[g.id] + "\"></span>"
            : "";
    out += fmt::format(
        "<tr><td>{}{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td>"
        "<td class=\"n\">{} ({}%)</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
        swatch, esc(g.id), esc(g.pattern), join_escaped(g.ops, " &rarr; "), status, status,
        esc(g.reason), human_bytes(double(e.bytes_saved())),
        format_number(e.traffic_reduction() * 100, 0), e.launches_saved(), esc(estimate_text(e)));
    if (has_meas) {
      const MeasuredGroup* m = measured(d, g.id);
      out += m ? fmt::format("<td class=\"n\">{}</td><td>{}{}</td>",
                             std::isfinite(m->measured_saved_us) ? human_us(m->measured_saved_us)
                                                                 : "&ndash;",
                             esc(m->backend.empty() ? m->status : m->status + ", " + m->backend),
                             m->reason.empty() ? "" : ": " + esc(m->reason))
               : "<td>&ndash;</td><td>not in the profile</td>";
    }
    out += "</tr>\n";
  }
  if (d.groups.empty()) out += "<tr><td colspan=\"8\">The plan holds no groups.</td></tr>\n";
  return out + "</table>\n";
}

std::string why_not_section(const ReportData& d) {
  std::string out = fmt::format(
      "<h2>Why not fused</h2>\n<p>{} adjacent producer&rarr;consumer pairs stay in different "
      "kernels (analysis at opt level {}, threshold {}%, {}).</p>\n<table>\n<tr><th>reason</th>"
      "<th>pairs</th></tr>\n",
      d.analysis.not_fused.size(), d.analysis.opt_level,
      format_number(d.analysis.threshold * 100, 0), esc(estimate_label(d)));
  for (const auto& [reason, n] : d.why_not_counts)
    out += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td></tr>\n", esc(reason), n);
  out += "</table>\n";
  const std::size_t shown = std::min<std::size_t>(40, d.analysis.not_fused.size());
  if (shown == 0) return out;
  out += "<table>\n<tr><th>producer</th><th>consumer</th><th>reason</th><th>why</th></tr>\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const NotFused& nf = d.analysis.not_fused[i];
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(nf.producer),
                       esc(nf.consumer), esc(not_fused_reason_name(nf.reason)), esc(nf.text));
  }
  out += "</table>\n";
  if (shown < d.analysis.not_fused.size())
    out += fmt::format("<p class=\"label\">{} more pairs in the JSON report.</p>\n",
                       d.analysis.not_fused.size() - shown);
  return out;
}

std::string run_row(const std::string& name, const RunProfile& r) {
  return fmt::format(
      "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
      "<td class=\"n\">{}</td></tr>\n",
      name, opt_num(r.median_ms, " ms", 3), opt_num(r.min_ms, " ms", 3),
      opt_num(r.max_ms, " ms", 3), r.kernel_count);
}

std::string measurement_section(const ReportData& d) {
  std::string out = "<h2>Measurements</h2>\n";
  if (!d.profile) {
    out +=
        "<p>No profile result was given (<code>--profile</code>): nothing measured. The charts "
        "below show estimates only.</p>\n<div class=\"charts\">" +
        render_bar_chart(savings_chart(d)) + "</div>\n";
    return out;
  }
  const ProfileInput& p = *d.profile;
  out += fmt::format("<p class=\"label\">{} (source: {}; {} warm-up runs, {} threads).</p>\n",
                     esc(measurement_label(d)), esc(p.origin), p.warmup, p.threads);
  if (!p.before_after)
    out +=
        "<p class=\"warn\">This is a single-run profile, not a before/after result: there is "
        "no measured saving per group and no equivalence check. Run <code>fxc profile --plan "
        "PLAN --json</code> for one.</p>\n";
  out += "<table>\n<tr><th>run</th><th>median</th><th>min</th><th>max</th><th>kernels</th></tr>\n";
  out += run_row(p.before_after ? "before (unfused)" : "profile", p.before);
  if (p.before_after) {
    out += run_row("after (fused)", p.after);
    out += fmt::format("<tr><th>speedup</th><td class=\"n\" colspan=\"4\">{}</td></tr>\n",
                       opt_num(p.speedup, "&times;", 3));
  }
  out += "</table>\n";
  if (p.before_after) {
    std::string match = !p.outputs_match   ? "unknown"
                        : *p.outputs_match ? "<span class=\"ok\">yes</span>"
                                           : "<span class=\"bad\">NO</span>";
    out += fmt::format(
        "<h3>Equivalence (after vs before, all outputs)</h3>\n<table>\n<tr><th>max abs error</th>"
        "<td class=\"n\">{}</td></tr>\n<tr><th>max rel error</th><td class=\"n\">{}</td></tr>\n"
        "<tr><th>outputs match (rtol 1e-3, atol 1e-5)</th><td>{}</td></tr>\n</table>\n",
        std::isfinite(p.max_abs_error) ? fmt::format("{:.3g}", p.max_abs_error) : "&ndash;",
        std::isfinite(p.max_rel_error) ? fmt::format("{:.3g}", p.max_rel_error) : "&ndash;", match);
    out += "<h3>Prediction error (predicted vs measured saving per group)</h3>\n";
    auto rows = prediction_error_rows(d);
    if (rows.empty()) {
      out += "<p>No calibration fit: " + esc(d.calibration_note) + "</p>\n";
    } else {
      out +=
          "<table>\n<tr><th>cost model</th><th>Spearman</th><th>median abs rel error</th></tr>\n";
      for (const auto& r : rows)
        out += "<tr><td>" + esc(r[0]) + "</td><td class=\"n\">" + esc(r[1]) +
               "</td><td class=\"n\">" + esc(r[2]) + "</td></tr>\n";
      out += "</table>\n";
    }
  }
  out += "<div class=\"charts\">\n" + render_bar_chart(savings_chart(d));
  if (auto s = accuracy_chart(d)) out += render_scatter(*s);
  out += "</div>\n";
  if (auto t = timeline_chart(d)) out += render_timeline_strip(*t);
  return out;
}

}  // namespace

std::string render_html_report(const ReportData& d) {
  std::string title = "Fusion report: " + d.model.file;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
      esc(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>" + esc(title) + "</h1>\n";
  out += fmt::format(
      "<p class=\"meta\">Generated {} by {}. Plan: {}{}.</p>\n", esc(d.generated_at),
      esc(d.generator),
      esc(d.options.plan_path.empty() ? std::string("the analysis's plan (not saved to a file)")
                                      : d.options.plan_path),
      d.options.profile_path.empty() ? "" : ". Profile: " + esc(d.options.profile_path));
  for (const auto& w : d.warnings) out += "<p class=\"warn\">" + esc(w) + "</p>\n";

  const AnalysisResult& a = d.analysis;
  // The plan's numbers: the accepted groups fused, the rest as they are (plan_totals.h).
  const PlanTotals t = plan_totals(a, d.groups);
  out += "<div class=\"cards\">\n";
  auto card = [&](const std::string& v, const std::string& what) {
    out += "<div class=\"card\"><b>" + v + "</b>" + what + "</div>\n";
  };
  card(std::to_string(d.model.nodes), "nodes");
  card(fmt::format("{} of {}", t.accepted, t.groups), "groups accepted in the plan");
  card(fmt::format("{} &rarr; {}", t.kernels_before, t.kernels_after),
       "kernels with the accepted groups fused (" + esc(estimate_label(d)) + ")");
  card(human_us(t.time_before_s * 1e6) + " &rarr; " + human_us(t.time_after_s * 1e6),
       fmt::format("time, {:.2f}&times; estimated, ", t.speedup()) + esc(estimate_label(d)));
  if (d.profile && d.profile->before_after)
    card(opt_num(d.profile->speedup, "&times;", 2), "speedup, " + esc(measurement_label(d)));
  out += "</div>\n";

  out += model_section(d) + device_section(d) + groups_section(d) + why_not_section(d) +
         measurement_section(d);
  out += "<h2>Commands to reproduce</h2>\n<pre>";
  for (const auto& c : d.commands) out += esc(c) + "\n";
  out += "</pre>\n</body>\n</html>\n";
  return out;
}

}  // namespace fx
