// SPDX-License-Identifier: Apache-2.0
// fxc analyze / why / calibrate / bench-synthetic: the fusion analysis from the command
// line. Wiring only: everything is computed by core/analysis and core/calibration.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/analysis_json.h"
#include "analysis/assumed_legality.h"
#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "analysis/synthetic_graph.h"
#include "calibration/calibrate_from.h"
#include "calibration/cpu_calibration.h"
#include "calibration/grid_calibration.h"
#include "calibration/host_device.h"
#include "calibration/learn.h"
#include "calibration/saving_uncertainty.h"
#include "codegen/group_kernels.h"
#include "commands.h"
#include "cuda_device_cli.h"
#include "device/device_presets.h"
#include "ir/subgraph.h"
#include "model_options.h"
#include "onnx/model_loader.h"
#include "util/error.h"
#include "util/stopwatch.h"

namespace fxc {
namespace {

struct AnalyzeOptions {
  std::string model;
  std::string device = "cpu-host";
  int opt_level = 2;
  double threshold = 0.30;
  bool json = false;
  std::string plan_out;
  std::string plan;  // --plan: estimate this plan's accepted groups, no search
  bool accept_all = false;
  ModelOptions mo;
  std::string why;  // "A,B"
  std::string node_a, node_b;
  int synthetic_nodes = 100000;
};

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::abs(b) >= 1024 && u < 4) b /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.1f} {}", b, units[u]);
}

std::string human_time(double s) {
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

std::string device_line(const fx::DeviceProfile& p) {
  return fmt::format("{} ({}): {}/s, {:.1f} GFLOP/s, launch {}, on-chip {} ({})", p.label(),
                     p.source, human_bytes(p.memory_bandwidth_bytes_per_s), p.peak_flops / 1e9,
                     human_time(p.launch_overhead_s), human_bytes(double(p.onchip_capacity_bytes)),
                     p.capacity_note);
}

fx::AnalysisResult analyze(const AnalyzeOptions& o, const fx::Graph& g,
                           const fx::DeviceProfile& p) {
  fx::FusionOptions fo;
  fo.opt_level = o.opt_level;
  fo.threshold = o.threshold;
  fx::use_generated_kernels(fo);  // launches as the generated code runs each group
  if (o.plan.empty()) return fx::analyze_fusion(g, p, fo);
  fo.fixed_groups.emplace();
  const fx::FusionPlan plan = fx::FusionPlan::load(o.plan);
  for (const fx::FusionGroup* gr : plan.accepted())
    fo.fixed_groups->push_back({gr->nodes, gr->pattern});
  fx::AnalysisResult r = fx::analyze_fusion(g, p, fo);
  // The plan decided: its groups are accepted, as it says.
  for (auto& gr : r.groups) gr.status = fx::GroupStatus::Accepted;
  return r;
}

fx::LoadedModel load(const AnalyzeOptions& o) {
  return load_model(o.model, o.mo);
}

// Each assumed dim once more at its probe value: groups legal only at the assumed
// value say so (analysis/assumed_legality.h).
fx::AssumedNotes assumed_notes(const AnalyzeOptions& o, const fx::LoadedModel& m,
                               const fx::DeviceProfile& p, const fx::AnalysisResult& r) {
  fx::AssumedNotes notes;
  for (const auto& a : m.assumed_dims) {
    const int64_t probe = a.value * fx::kAssumedProbeFactor;
    AnalyzeOptions po = o;
    po.mo.dims.push_back(a.symbol + "=" + std::to_string(probe));
    try {
      const fx::LoadedModel pm = load(po);
      fx::note_assumed_legality(r, a.symbol, a.value, probe, analyze(po, pm.graph, p), notes);
    } catch (const fx::Error& e) {
      spdlog::debug("{}: no probe at {}={}: {}", o.model, a.symbol, probe, e.what());
    }
  }
  return notes;
}

void print_table(const fx::AnalysisResult& r, const fx::DeviceProfile& p, const AnalyzeOptions& o,
                 const fx::AssumedNotes& notes) {
  fmt::print("Device   {}\n", device_line(p));
  fmt::print("Model    {}  (opt level {}, threshold {:.0f}%, analysis {:.1f} ms)\n", o.model,
             r.opt_level, r.threshold * 100, r.analysis_ms);
  double cut =
      r.bytes_before ? 100.0 * double(r.bytes_before - r.bytes_after) / double(r.bytes_before) : 0;
  fmt::print("Kernels  {} -> {}   DRAM traffic {} -> {} (-{:.1f}%)   est. time {} -> {}\n",
             r.kernels_before, r.kernels_after, human_bytes(double(r.bytes_before)),
             human_bytes(double(r.bytes_after)), cut, human_time(r.time_before_s),
             human_time(r.time_after_s));
  if (r.lone_saved_s > 0) {
    std::vector<std::string> parts;
    for (const auto& [kind, s] : r.lone_saved_by_kind_s)
      parts.push_back(fmt::format("{} {}", kind, human_time(s)));
    fmt::print(
        "Lone     est. time after includes {} saved on the kernels outside the groups ({}), at "
        "the rates measured on other models' fused programs (device profile: "
        "lone_kernel_saving)\n",
        human_time(r.lone_saved_s), fmt::join(parts, ", "));
  }
  if (r.unknown_cost_nodes)
    fmt::print("Unknown  {} nodes without static shapes are left out of the totals (try --dim)\n",
               r.unknown_cost_nodes);
  if (r.datasheet)
    fmt::print("Estimate {} is a datasheet estimate: its figures were never measured\n", p.name);
  if (!r.unmeasured_classes.empty())
    fmt::print(
        "Unmeasured  calibration never measured fused {} kernels: their savings have no "
        "interval\n",
        fmt::join(r.unmeasured_classes, ", "));
  if (!r.unmeasured_ops.empty())
    fmt::print("Unmeasured  op types calibration never timed, estimated from class rates: {}\n",
               fmt::join(r.unmeasured_ops, ", "));
  fmt::print("\n{:<12} {:<28} {:<40} {:>11} {:>8} {:>11} {:>10} {:>3}  {}\n", "group", "pattern",
             "ops", "bytes saved", "launches", "est. saved", "+-", "by", "status");
  // Each estimate names the model that produced it: [n] refers to the legend below.
  std::vector<std::pair<std::string, int>> sources;
  auto source_index = [&](const std::string& label) {
    for (std::size_t i = 0; i < sources.size(); ++i)
      if (sources[i].first == label) return ++sources[i].second, int(i) + 1;
    sources.emplace_back(label, 1);
    return int(sources.size());
  };
  int uncertain = 0;
  for (const auto& gr : r.groups) {
    std::string ops;
    for (const auto& op : gr.ops) ops += (ops.empty() ? "" : ",") + op;
    if (ops.size() > 40) ops = ops.substr(0, 37) + "...";
    const auto& e = gr.estimate;
    fmt::print("{:<12} {:<28} {:<40} {:>11} {:>8} {:>11} {:>10} {:>3}  {}{}\n", gr.id, gr.pattern,
               ops, human_bytes(double(e.bytes_saved())), e.launches_saved(),
               human_time(e.time_saved_s()),
               e.interval_known() ? "+-" + human_time(e.interval_half_s()) : "?",
               fmt::format("[{}]", source_index(e.saving_label())),
               fx::group_status_name(gr.status), e.uncertain() ? " (uncertain)" : "");
    if (auto it = notes.find(gr.id); it != notes.end())
      fmt::print("{:<12} note: {}\n", "", it->second);
    uncertain += e.uncertain();
  }
  for (std::size_t i = 0; i < sources.size(); ++i)
    fmt::print("[{}] est. saved of {} group{} by the {}\n", i + 1, sources[i].second,
               sources[i].second == 1 ? "" : "s", sources[i].first);
  fmt::print(
      "+- where the measured saving is expected (two robust SDs of calibration's residuals for "
      "the fused class; ? = no residuals: fxc calibrate)\n");
  if (uncertain)
    fmt::print("{} group{} uncertain (the interval includes 0): not in the default plan\n",
               uncertain, uncertain == 1 ? "" : "s");
  std::map<std::string, int> reasons;
  for (const auto& nf : r.not_fused) reasons[std::string(fx::not_fused_reason_name(nf.reason))]++;
  fmt::print("\n{} adjacent pairs not fused:", r.not_fused.size());
  for (const auto& [k, v] : reasons) fmt::print(" {} {};", k, v);
  // Control flow: each subgraph was analysed on its own.
  auto print_subgraphs = [](const fx::AnalysisResult& res, int depth, auto&& self) -> void {
    for (const auto& sa : res.subgraphs) {
      fmt::print("{:>{}}{} of '{}' (control-flow boundary): {} group{}, kernels {} -> {}\n", "",
                 2 * depth, sa.attribute, sa.node, sa.result.groups.size(),
                 sa.result.groups.size() == 1 ? "" : "s", sa.result.kernels_before,
                 sa.result.kernels_after);
      for (const auto& gr : sa.result.groups) {
        std::string ops;
        for (const auto& op : gr.ops) ops += (ops.empty() ? "" : ",") + op;
        fmt::print("{:>{}}  {} {} {}\n", "", 2 * depth, gr.id, gr.pattern, ops);
      }
      self(sa.result, depth + 1, self);
    }
  };
  if (!r.subgraphs.empty()) {
    fmt::print("\nSubgraphs (fused inside, never across the node):\n");
    print_subgraphs(r, 1, print_subgraphs);
  }
  fmt::print("\n(times estimated on {}; 'fxc why MODEL A B' explains a pair, --json lists all)\n",
             p.name);
}

int run_analyze(const AnalyzeOptions& o) {
  auto m = load(o);
  fx::DeviceProfile p = fx::resolve_device(o.device, m.graph);
  fx::AnalysisResult r = analyze(o, m.graph, p);
  if (!o.why.empty()) {
    auto comma = o.why.find(',');
    if (comma == std::string::npos) throw fx::Error("--why expects NODE_A,NODE_B");
    fmt::print("{}\n", fx::explain_pair(r, o.why.substr(0, comma), o.why.substr(comma + 1)));
    return 0;
  }
  const fx::AssumedNotes notes = assumed_notes(o, m, p, r);
  fx::apply_assumed_notes(r.groups, notes);  // the plan and the JSON carry them
  if (!o.plan_out.empty()) {
    fx::FusionPlan plan(r, o.model);
    plan.set_dims(plan_dims(m, o.mo));
    plan.set_disabled_passes(plan_disabled_passes(o.mo));
    if (o.accept_all) plan.accept_all_above(o.threshold);
    plan.save(o.plan_out);
    r.groups = plan.groups();  // statuses as saved
  }
  if (o.json) {
    nlohmann::json j = fx::to_json(r);
    j["model"] = o.model;
    j.update(model_header_json(m));
    fmt::print("{}\n", j.dump(2));
  } else {
    print_model_header(m);
    print_table(r, p, o, notes);
  }
  return 0;
}

int run_why(const AnalyzeOptions& o) {
  auto m = load(o);
  // A node of the model or of one of its subgraphs (If branches, Loop/Scan bodies).
  auto has_node = [](const fx::Graph& g, const std::string& name, auto&& self) -> bool {
    if (g.find_node(name) != fx::kNoNode) return true;
    for (const auto& node : g.nodes())
      for (const auto& [attr, sub] : fx::subgraphs_of(node))
        if (self(*sub, name, self)) return true;
    return false;
  };
  for (const auto& n : {o.node_a, o.node_b})
    if (!has_node(m.graph, n, has_node)) throw fx::Error(o.model + ": no node named '" + n + "'");
  fx::DeviceProfile p = fx::resolve_device(o.device, m.graph);
  fmt::print("{}\n", fx::explain_pair(analyze(o, m.graph, p), o.node_a, o.node_b));
  return 0;
}

struct CalibrateOptions {
  std::string out;
  std::vector<std::string> from;      // before/after results: fit instead of measuring
  std::vector<std::string> evaluate;  // results judged with the fitted profile, not fitted
  std::string device = "cpu-host";    // the base profile the fit starts from
  std::string stat = "median";        // median | min: which kernel time to fit and judge
  bool json = false;
  bool quick = false;  // the sub-second measurement only (no grid, no intervals)
  bool force = false;  // save a calibration the sanity checks found fault with
  int repeats = 3, runs = 7;
  int threads = 0;  // grid: intra-op threads of its timings (0: all hardware threads)
  std::string work_dir;
  std::vector<std::string> learn;  // before/after results folded into the cached grid fit
};

using fx::grid_results_dir;
using fx::json_files_in;
using fx::learned_results_dir;

std::string percent_or_dash(double v) {
  return std::isfinite(v) ? fmt::format("{:.1f}%", v * 100) : "-";
}

std::string rho_or_dash(double v) {
  return std::isfinite(v) ? fmt::format("{:.3f}", v) : "-";
}

std::string today_utc() {
  char date[16];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return date;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// The older fit, for results without per-kernel cost terms (in-sample).
void print_group_fit(const fx::CalibrationRun& run, const std::string& path) {
  const fx::GroupFitCalibration& g = *run.group_fit;
  const fx::CalibrationFit& f = g.fit;
  fmt::print("Fitted       {} groups of {} (predictions were made on {})\n", g.groups, g.from,
             run.estimate_profile);
  fmt::print("Model        saved = bytes saved / bandwidth + launches saved x launch overhead\n");
  fmt::print(
      "             (the result has no per-kernel cost terms: run fxc profile again for\n"
      "             the per-kernel fit)\n");
  fmt::print("Bandwidth    {}/s -> {}/s\n", human_bytes(run.base.memory_bandwidth_bytes_per_s),
             f.seconds_per_byte > 0 ? human_bytes(f.bandwidth_bytes_per_s()) : "unchanged");
  fmt::print("Launch       {} -> {}\n", human_time(run.base.launch_overhead_s),
             f.launch_overhead_s > 0 ? human_time(f.launch_overhead_s) : "unchanged");
  if (!f.note.empty()) fmt::print("Note         {}\n", f.note);
  fmt::print("\nPredicted vs measured saving per group  Spearman  median |rel error|\n");
  fmt::print("  {:<37} {:>8}  {:>17}\n", "before calibration (" + run.estimate_profile + ")",
             rho_or_dash(f.before.spearman), percent_or_dash(f.before.median_abs_rel_error));
  fmt::print("  {:<37} {:>8}  {:>17}\n", "after calibration (fitted)",
             rho_or_dash(f.after.spearman), percent_or_dash(f.after.median_abs_rel_error));
  fmt::print("(in-sample: fitted and judged on the same groups; residual {:.1f} us rms)\n",
             f.rms_residual_us);
  fmt::print("\n{}\nwritten to {}\n", device_line(g.profile), path);
}

// Stages 1 and 2: the rates per class.
void print_rates(const fx::CalibrationRun& run) {
  const fx::KernelFitCalibration& k = *run.kernel_fit;
  const fx::DeviceProfile& p = k.profile;
  fmt::print("Fitted       {} unfused kernels of {} ({} times, {} iterations)\n",
             k.kernel_fit.kernels, join(run.options.from), run.options.stat,
             k.kernel_fit.iterations);
  fmt::print(
      "Model        kernel time = launch + max(bytes / bandwidth(class), flops / "
      "FLOP/s(class))\n"
      "             fused kernel = launch + scale(class) x that + epilogue bytes / "
      "epilogue bandwidth(class)\n");
  fmt::print("Launch       {} -> {}\n", human_time(run.base.launch_overhead_s),
             human_time(p.launch_overhead_s));
  fmt::print("\n  {:<14} {:>7} {:>8} {:>12} {:>12} {:>10}\n", "class", "kernels", "compute",
             "bandwidth", "GFLOP/s", "median err");
  for (int c = 0; c < fx::kKernelClassCount; ++c) {
    auto kc = static_cast<fx::KernelClass>(c);
    const auto& cf = k.kernel_fit.classes[c];
    fmt::print("  {:<14} {:>7} {:>8} {:>12} {:>12.1f} {:>10}\n", fx::kernel_class_name(kc),
               cf.kernels, cf.compute_bound, human_bytes(p.bandwidth(kc)) + "/s", p.flops(kc) / 1e9,
               percent_or_dash(cf.median_abs_rel_error));
  }
  fmt::print("  per kernel, median |rel error|: {} on {} -> {} fitted\n",
             percent_or_dash(k.kernel_fit.base_median_abs_rel_error), run.base.label(),
             percent_or_dash(k.kernel_fit.median_abs_rel_error));
  fmt::print("\n  {:<14} {:>7} {:>9} {:>7} {:>14} {:>17}\n", "fused class", "kernels", "epilogue",
             "scale", "epilogue bw", "median err");
  for (int c = 0; c < fx::kKernelClassCount; ++c) {
    auto kc = static_cast<fx::KernelClass>(c);
    const auto& ff = k.fused_fit.classes[c];
    if (ff.kernels == 0) continue;
    fmt::print("  {:<14} {:>7} {:>9} {:>7.2f} {:>14} {:>8} -> {:>5}\n", fx::kernel_class_name(kc),
               ff.kernels, ff.with_epilogue, p.fused_scale(kc),
               human_bytes(p.epilogue_bandwidth(kc)) + "/s",
               percent_or_dash(ff.unfitted_median_abs_rel_error),
               percent_or_dash(ff.median_abs_rel_error));
  }
  fmt::print("  per fused kernel, median |rel error|: {} unfitted -> {} fitted\n",
             percent_or_dash(k.fused_fit.unfitted_median_abs_rel_error),
             percent_or_dash(k.fused_fit.median_abs_rel_error));
}

// Stage 3: the saving model per class.
void print_saving_model(const fx::SavingModel& saving) {
  fmt::print("\n  {:<14} {:>7}  {:<52} {:>21}\n", "saving model", "groups", "predicts by",
             "median err loo / diff");
  for (int c = 0; c < fx::kKernelClassCount; ++c) {
    const auto& sc = saving.classes[c];
    if (sc.groups == 0) continue;
    fmt::print("  {:<14} {:>7}  {:<52} {:>10} / {:>8}\n",
               fx::kernel_class_name(static_cast<fx::KernelClass>(c)), sc.groups,
               sc.fitted ? std::string("fitted coefficients") : "difference of times: " + sc.why,
               percent_or_dash(sc.leave_one_out_error), percent_or_dash(sc.difference_error));
  }
  std::string fitted_classes;
  for (int c = 0; c < fx::kKernelClassCount; ++c)
    if (saving.classes[c].fitted)
      fitted_classes += (fitted_classes.empty() ? "" : ", ") +
                        std::string(fx::kernel_class_name(static_cast<fx::KernelClass>(c)));
  fmt::print("  saved with the profile: analysis on it predicts group savings {}\n",
             fitted_classes.empty()
                 ? std::string("by the difference of kernel times (no class kept its fit)")
                 : "of classes " + fitted_classes +
                       " with the saving model, other classes by the difference of kernel times");
}

void print_error_row(const std::string& label, const fx::PredictionError& e) {
  fmt::print("  {:<52} {:>8}  {:>17}\n", label, rho_or_dash(e.spearman),
             percent_or_dash(e.median_abs_rel_error));
}

void print_judged(const fx::CalibrationRun& run, const fx::JudgedGroups& j, const char* what) {
  fmt::print("\n{} ({} groups: {}; fitted = {})\n", what, j.groups, j.from,
             run.kernel_fit->profile.label());
  fmt::print("  {:<52} {:>8}  {:>17}\n", "", "Spearman", "median |rel error|");
  print_error_row("before calibration (" + run.estimate_profile + ")", j.recorded);
  print_error_row("this cost model on " + run.base.label(), j.base_model);
  print_error_row("unfused kernels fitted only", j.unfused_only);
  print_error_row("after calibration (fitted)", j.fitted);
  print_error_row(fmt::format("{} groups measured beyond 2x noise: before", j.resolved),
                  j.resolved_recorded);
  print_error_row(fmt::format("{} groups measured beyond 2x noise: after", j.resolved),
                  j.resolved_fitted);
  print_error_row("saving model (fitted to the --from savings)", j.saving);
  print_error_row(fmt::format("{} groups beyond 2x noise: saving model", j.resolved),
                  j.resolved_saving);
}

// fxc calibrate --from RESULT.json...: the per-kernel fit (calibration/calibrate_from.h),
// judged on the group savings of the same results and of --evaluate results.
void print_kernel_fit(const fx::CalibrationRun& run, const std::string& path) {
  const fx::KernelFitCalibration& k = *run.kernel_fit;
  print_rates(run);
  print_saving_model(k.saving);
  print_judged(run, k.fitted_results, "Group savings, fitted results");
  print_error_row("saving model, leave one group out", k.leave_one_out);
  print_error_row("beyond 2x noise: saving model, leave one out", k.leave_one_out_resolved);
  for (const auto& h : k.held_out)
    print_judged(run, h, "Group savings, held-out result (not fitted)");
  fmt::print("\n{}\nwritten to {}\n", device_line(k.profile), path);
}

// fxc calibrate (no --from): the grid (calibration/grid_calibration.h).
int run_calibrate_grid(const CalibrateOptions& o, const std::string& path) {
  fx::GridCalibrationOptions go;
  go.repeats = o.repeats;
  go.runs = o.runs;
  go.threads = o.threads;
  go.work_dir = o.work_dir;
  if (go.work_dir.empty()) {
    go.work_dir = grid_results_dir();
    std::error_code ec;
    std::filesystem::remove_all(go.work_dir, ec);  // results of an older grid
  }
  go.date = today_utc();
  go.progress = [](const std::string& s) { fmt::print(stderr, "fxc calibrate: {}\n", s); };
  fx::GridCalibration c = fx::calibrate_grid(go);
  const fx::MachineFacts& f = c.facts;
  fmt::print("Machine      {} ({} threads, {} float lanes, {:.2f} GHz{}): at most {:.1f} GFLOP/s\n",
             f.cpu_model.empty() ? "unknown CPU" : f.cpu_model, f.threads, f.simd_floats, f.ghz,
             f.ghz_is_maximum ? " max" : "", f.peak_flops_bound() / 1e9);
  fmt::print("Caches       L1d {}, L2 {}, L3 {}\n", human_bytes(double(f.caches.l1d)),
             human_bytes(double(f.caches.l2)), human_bytes(double(f.caches.l3)));
  fmt::print("Copy         ");
  for (const auto& p : c.copy)
    fmt::print("{} {}/s (+-{})  ", human_bytes(double(p.bytes)), human_bytes(p.bytes_per_s),
               percent_or_dash(p.dispersion));
  fmt::print("\nGrid         {} groups timed unfused and fused, {} measurements each, {:.0f} s\n",
             c.groups, o.repeats, c.seconds);
  if (c.run.kernel_fit) {
    print_rates(c.run);
    print_saving_model(c.run.kernel_fit->saving);
  }
  fmt::print("\n  {:<14} {:>7} {:>22}\n", "interval", "groups", "rms residual / unfused");
  for (int i = 0; i < fx::kKernelClassCount; ++i) {
    const auto& u = c.profile.saving_uncertainty[std::size_t(i)];
    fmt::print("  {:<14} {:>7} {:>22}\n", fx::kernel_class_name(fx::KernelClass(i)), u.groups,
               u.groups ? percent_or_dash(u.rel_rms) : "none (no interval)");
  }
  for (const auto& s : c.findings()) fmt::print("Finding      {}\n", s);
  if (!c.trustworthy() && !o.force) {
    fmt::print(
        "\nNOT SAVED: the checks above say this calibration cannot be trusted (run it again on "
        "a quieter machine, or --force saves it with these findings recorded)\n");
    return 1;
  }
  fx::DeviceProfile p = c.profile;
  p.calibration_flags = c.findings();
  fx::save_device_profile(p, path);
  fmt::print("\n{}\nwritten to {}{}\n", device_line(p), path,
             p.calibration_flags.empty() ? "" : " (with its findings, --force)");
  return 0;
}

// fxc calibrate --learn RESULT.json...: the grid's results and every result learned so far
// (copied into the cache, so that they stay learned) fitted together, opt-in.
int run_calibrate_learn(const CalibrateOptions& o, const std::string& path) {
  fx::LearnOptions lo;
  lo.results = o.learn;
  lo.grid_dir = grid_results_dir();
  lo.learned_dir = learned_results_dir();
  lo.cached = fx::load_device_profile(fx::cpu_host_cache_path());
  lo.date = today_utc();
  lo.stat = o.stat;
  const fx::LearnOutcome l = fx::learn_from_results(lo);
  fx::save_device_profile(l.profile, path);
  print_kernel_fit(l.run, path);
  fmt::print(
      "estimate error on the {} group(s) just learned: median {} before the update, {} after "
      "(Spearman {} -> {}; after: in-sample)\n",
      l.after.groups, percent_or_dash(l.before.median_abs_rel_error),
      percent_or_dash(l.after.median_abs_rel_error), rho_or_dash(l.before.spearman),
      rho_or_dash(l.after.spearman));
  fmt::print("learned results kept in {} (delete them to forget)\n", learned_results_dir());
  return 0;
}

int run_calibrate(const CalibrateOptions& o) {
  // --device cuda[:N] without --from/--learn: measure the GPU instead of this CPU.
  if (o.from.empty() && o.learn.empty() && o.device.rfind("cuda", 0) == 0)
    return calibrate_cuda(fx::cuda::parse_device_spec(o.device), o.out, o.runs, o.json);
  const std::string path = o.out.empty() ? fx::cpu_host_cache_path() : o.out;
  if (!o.learn.empty()) {
    if (!o.from.empty()) throw fx::Error("calibrate: give --learn or --from, not both");
    return run_calibrate_learn(o, path);
  }
  if (o.from.empty()) {
    if (!o.evaluate.empty()) throw fx::Error("calibrate: --evaluate needs --from");
    if (!o.quick) return run_calibrate_grid(o, path);
    fx::DeviceProfile p = fx::calibrate_cpu_host(o.out);
    fmt::print("{}\nwritten to {}\n", device_line(p), path);
    return 0;
  }
  fx::CalibrateFromOptions co;
  co.from = o.from;
  co.evaluate = o.evaluate;
  co.stat = o.stat;
  co.base = [&] { return fx::resolve_device(o.device); };
  co.date = today_utc();
  const fx::CalibrationRun run = fx::calibrate_from(co);
  fx::DeviceProfile fitted = run.profile();
  // The intervals of later estimates: the fitted groups' residuals, each model's groups
  // predicted by a fit to the other models (leave one group out from a single model).
  if (run.kernel_fit)
    fitted.saving_uncertainty =
        fx::saving_uncertainty(run.kernel_fit->groups, run.kernel_fit->group_model, fitted);
  fx::save_device_profile(fitted, path);
  if (o.json)
    fmt::print("{}\n", fx::to_json(run, path).dump(2));
  else if (run.group_fit)
    print_group_fit(run, path);
  else
    print_kernel_fit(run, path);
  return 0;
}

int run_bench_synthetic(const AnalyzeOptions& o) {
  fx::Stopwatch gen;
  fx::SyntheticGraphOptions so;
  so.node_count = o.synthetic_nodes;
  fx::Graph g = fx::make_synthetic_graph(so);
  double gen_ms = gen.elapsed_ms();
  fx::DeviceProfile p = fx::resolve_device(o.device, g);
  fx::AnalysisResult r = analyze(o, g, p);
  nlohmann::json j{{"nodes", g.node_count()},
                   {"generate_ms", gen_ms},
                   {"analysis_ms", r.analysis_ms},
                   {"opt_level", r.opt_level},
                   {"device", r.device},
                   {"groups", r.groups.size()},
                   {"kernels_before", r.kernels_before},
                   {"kernels_after", r.kernels_after},
                   {"bytes_before", r.bytes_before},
                   {"bytes_after", r.bytes_after}};
  if (o.json)
    fmt::print("{}\n", j.dump(2));
  else
    fmt::print("{} nodes: analysis {:.1f} ms (generation {:.1f} ms), {} groups, kernels {} -> {}\n",
               g.node_count(), r.analysis_ms, gen_ms, r.groups.size(), r.kernels_before,
               r.kernels_after);
  return 0;
}

void add_common(CLI::App* cmd, AnalyzeOptions& o) {
  cmd->add_option("--device", o.device,
                  "Device profile: cpu-host, nvidia-h100, ascend-910b or FILE.json")
      ->capture_default_str();
  cmd->add_option("--opt-level", o.opt_level,
                  "0 off, 1 seed patterns, 2 + automatic vertical, 3 + horizontal")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  cmd->add_option("--threshold", o.threshold, "Minimum memory-traffic reduction of a group (0..1)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
}

}  // namespace

void register_analyze(CLI::App& app, Runner& run) {
  auto o = std::make_shared<AnalyzeOptions>();
  auto* cmd = app.add_subcommand("analyze", "Find fusion candidates with estimated savings");
  cmd->add_option("model", o->model, "ONNX model file")->required();
  add_common(cmd, *o);
  add_model_options(cmd, o->mo);
  cmd->add_flag("--json", o->json, "Print one JSON object instead of the table");
  cmd->add_option("--plan-out", o->plan_out, "Write the fusion plan (JSON) here");
  cmd->add_option("--plan", o->plan,
                  "Estimate this plan's accepted groups on --device instead of searching (a "
                  "plan made or measured with another profile); --opt-level is not used");
  cmd->add_flag("--accept-all", o->accept_all,
                "In the written plan, accept every group above --threshold");
  cmd->add_option("--why", o->why, "Explain why NODE_A,NODE_B were not fused, and stop");
  cmd->footer(
      "Prints the device profile, kernels and DRAM traffic before -> after, then one row\n"
      "per group: id, pattern, ops, bytes saved, launches saved, est. time saved, the model\n"
      "that estimated it ([n], named below the table: a profile's calibrated saving model\n"
      "for its fitted classes, else the difference of kernel times), status.\n"
      "Examples:\n"
      "  fxc analyze resources/models/tiny_cnn.onnx --device nvidia-h100 --opt-level 1\n"
      "  fxc analyze gpt2.onnx --dim batch=1 --dim seq=128 --device nvidia-h100 --opt-level 3 "
      "--json\n"
      "  fxc analyze model.onnx --disable-pass identity-elimination   # canonical form less one "
      "pass\n"
      "  fxc analyze resnet18.onnx --plan-out plan.json --accept-all\n"
      "  fxc analyze resnet18.onnx --plan plan.json --device fitted.json --json\n"
      "  fxc analyze resnet18.onnx --why /layer1/0/conv1/Conv,/maxpool/MaxPool");
  cmd->callback([o, &run] { run = [o] { return run_analyze(*o); }; });

  auto w = std::make_shared<AnalyzeOptions>();
  auto* why = app.add_subcommand("why", "Explain why two adjacent ops were not fused");
  why->add_option("model", w->model, "ONNX model file")->required();
  why->add_option("node_a", w->node_a, "Producer node name")->required();
  why->add_option("node_b", w->node_b, "Consumer node name")->required();
  add_common(why, *w);
  add_model_options(why, w->mo);
  why->footer(
      "Node names are those of the ONNX file ('fxc analyze --json' lists them in not_fused).\n"
      "Examples:\n"
      "  fxc why resources/models/tiny_cnn.onnx /relu/Relu /layer1/0/conv1/Conv\n"
      "  fxc why resources/models/tiny_cnn.onnx /conv1/Conv /relu/Relu --opt-level 0");
  why->callback([w, &run] { run = [w] { return run_why(*w); }; });

  auto co = std::make_shared<CalibrateOptions>();
  auto* cal = app.add_subcommand(
      "calibrate",
      "Measure the cpu-host device profile over a grid of kernel shapes (a few minutes), or fit "
      "it to measurements");
  cal->add_option("--out", co->out, "Write the profile here instead of the user cache");
  cal->add_option("--from", co->from,
                  "Fit launch overhead and per-class rates to the unfused kernel times of "
                  "before/after results, then fused-kernel rates to their fused kernels "
                  "(fxc profile MODEL --opt-level N --json; repeatable)");
  cal->add_option("--evaluate", co->evaluate,
                  "With --from: also judge the fitted profile on these results' group savings "
                  "(held out, not fitted; repeatable)");
  cal->add_option("--device", co->device,
                  "With --from: the profile the fit starts from; cuda or cuda:N (no --from): "
                  "measure that GPU")
      ->capture_default_str();
  cal->add_option("--stat", co->stat,
                  "With --from: kernel times to fit and judge: median (of the timed runs) or "
                  "min (fastest run, least disturbed by load)")
      ->capture_default_str();
  cal->add_flag("--json", co->json, "With --from: print one JSON object");
  cal->add_flag("--quick", co->quick,
                "Without --from: only the sub-second measurement (copy, GEMM, dispatch); no "
                "grid, so no intervals");
  cal->add_flag("--force", co->force,
                "Save a grid calibration the sanity checks found fault with (busy machine, "
                "implausible figures), recording the findings in the profile");
  cal->add_option("--repeats", co->repeats, "Grid: measurements of each family")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  cal->add_option("--runs", co->runs, "Grid: timed runs per measurement")
      ->check(CLI::Range(3, 100))
      ->capture_default_str();
  cal->add_option("--threads", co->threads,
                  "Grid: intra-op threads of its timings (0: all hardware threads); estimates "
                  "then hold for fxc profile/run at the same --threads")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cal->add_option("--learn", co->learn,
                  "Fold these before/after results (fxc profile MODEL --opt-level N --json) into "
                  "the cached grid calibration: fits the grid's and every learned result "
                  "together and keeps them (opt-in, per machine; repeatable)");
  cal->add_option(
      "--work-dir", co->work_dir,
      "Grid: keep the before/after results of the grid here (default: the cache, for --learn)");
  cal->footer(
      "Times this machine's kernel classes over a grid of shapes no model chose: elementwise\n"
      "and row kernels at working sets across the cache hierarchy, Conv/depthwise/MatMul/Gemm\n"
      "with and without epilogues (unfused and fused), relayouts, a tiny kernel for the\n"
      "dispatch cost; fits the class rates, fused rates and saving model to them and keeps\n"
      "per class the residuals that every estimate's +- interval comes from. Each figure is\n"
      "checked against the ISA's peak and a copy curve measured at the same time, and the\n"
      "machine's load before and after; a calibration that fails a check is not saved\n"
      "(exit 1) unless --force. Cached per CPU model and fxc version under\n"
      "~/.cache/fusion-explorer/ and used by --device cpu-host; --quick measures only\n"
      "copy bandwidth, a GEMM and the dispatch cost (under a second).\n"
      "With --from, fits the launch overhead and the effective bandwidth and FLOP/s of each\n"
      "kernel class to the unfused kernels timed by 'fxc profile --opt-level N --json'\n"
      "(robust, log space), then per class a scale and an epilogue bandwidth of fused\n"
      "kernels to the fused kernels of the 'after' timeline, then the saving model (per\n"
      "fused-kernel class, coefficients on the terms fusion changes) to the measured group\n"
      "savings; saves both in the profile ('fxc analyze --device PROFILE' then predicts the\n"
      "savings of fitted classes with the saving model, and says so), and says how far the\n"
      "group savings predicted are from the measured ones (and with --evaluate, on results\n"
      "it never saw).\n"
      "Results of the same model are repeats (each its own fxc profile process): a group's\n"
      "saving is the median over them, its noise their spread.\n"
      "Examples:\n"
      "  fxc calibrate && fxc analyze model.onnx --device cpu-host\n"
      "  fxc calibrate --out my-host.json && fxc analyze model.onnx --device my-host.json\n"
      "  fxc calibrate --from before_after.json --out fitted-host.json\n"
      "  fxc profile model.onnx --opt-level 2 --json > r.json && fxc calibrate --learn r.json\n"
      "  fxc calibrate --from resnet18.json --from gpt2.json --evaluate mobilenet.json --out "
      "f.json\n"
      "  fxc calibrate --from r18.json --from r18.r2.json --from r18.r3.json --stat min");
  cal->callback([co, &run] { run = [co] { return run_calibrate(*co); }; });

  auto s = std::make_shared<AnalyzeOptions>();
  auto* bs = app.add_subcommand("bench-synthetic", "Time the analysis of a generated graph");
  bs->add_option("--nodes", s->synthetic_nodes, "Approximate node count")->capture_default_str();
  add_common(bs, *s);
  bs->add_flag("--json", s->json, "Print one JSON object");
  bs->footer(
      "Prints node count, analysis time, groups found and kernels before -> after.\n"
      "Examples:\n"
      "  fxc bench-synthetic --nodes 100000 --opt-level 3 --json\n"
      "  fxc bench-synthetic --nodes 2000 --device nvidia-h100");
  bs->callback([s, &run] { run = [s] { return run_bench_synthetic(*s); }; });
}

}  // namespace fxc
