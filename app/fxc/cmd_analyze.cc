// fxc analyze / why / calibrate / bench-synthetic: the fusion analysis from the command
// line. Wiring only: everything is computed by core/analysis.

#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/analysis_json.h"
#include "analysis/calibration_fit.h"
#include "analysis/cpu_calibration.h"
#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "analysis/synthetic_graph.h"
#include "commands.h"
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
  bool accept_all = false;
  std::vector<std::string> dims;
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
  return fmt::format("{} ({}): {}/s, {:.1f} GFLOP/s, launch {}, on-chip {} ({})", p.name, p.source,
                     human_bytes(p.memory_bandwidth_bytes_per_s), p.peak_flops / 1e9,
                     human_time(p.launch_overhead_s), human_bytes(double(p.onchip_capacity_bytes)),
                     p.capacity_note);
}

fx::AnalysisResult analyze(const AnalyzeOptions& o, const fx::Graph& g,
                           const fx::DeviceProfile& p) {
  fx::FusionOptions fo;
  fo.opt_level = o.opt_level;
  fo.threshold = o.threshold;
  return fx::analyze_fusion(g, p, fo);
}

fx::LoadedModel load(const AnalyzeOptions& o) {
  fx::LoadOptions lo;
  for (const auto& d : o.dims) fx::parse_dim_binding(d, lo);
  return fx::load_onnx(o.model, lo);
}

void print_table(const fx::AnalysisResult& r, const fx::DeviceProfile& p, const AnalyzeOptions& o) {
  fmt::print("Device   {}\n", device_line(p));
  fmt::print("Model    {}  (opt level {}, threshold {:.0f}%, analysis {:.1f} ms)\n", o.model,
             r.opt_level, r.threshold * 100, r.analysis_ms);
  double cut =
      r.bytes_before ? 100.0 * double(r.bytes_before - r.bytes_after) / double(r.bytes_before) : 0;
  fmt::print("Kernels  {} -> {}   DRAM traffic {} -> {} (-{:.1f}%)   est. time {} -> {}\n",
             r.kernels_before, r.kernels_after, human_bytes(double(r.bytes_before)),
             human_bytes(double(r.bytes_after)), cut, human_time(r.time_before_s),
             human_time(r.time_after_s));
  if (r.unknown_cost_nodes)
    fmt::print("Unknown  {} nodes without static shapes are left out of the totals (try --dim)\n",
               r.unknown_cost_nodes);
  fmt::print("\n{:<12} {:<28} {:<40} {:>11} {:>8} {:>11}  {}\n", "group", "pattern", "ops",
             "bytes saved", "launches", "est. saved", "status");
  for (const auto& gr : r.groups) {
    std::string ops;
    for (const auto& op : gr.ops) ops += (ops.empty() ? "" : ",") + op;
    if (ops.size() > 40) ops = ops.substr(0, 37) + "...";
    const auto& e = gr.estimate;
    fmt::print("{:<12} {:<28} {:<40} {:>11} {:>8} {:>11}  {}\n", gr.id, gr.pattern, ops,
               human_bytes(double(e.bytes_saved())), e.launches_saved(),
               human_time(e.time_saved_s()), fx::group_status_name(gr.status));
  }
  std::map<std::string, int> reasons;
  for (const auto& nf : r.not_fused) reasons[std::string(fx::not_fused_reason_name(nf.reason))]++;
  fmt::print("\n{} adjacent pairs not fused:", r.not_fused.size());
  for (const auto& [k, v] : reasons) fmt::print(" {} {};", k, v);
  fmt::print("\n(times estimated on {}; 'fxc why MODEL A B' explains a pair, --json lists all)\n",
             p.name);
}

int run_analyze(const AnalyzeOptions& o) {
  auto m = load(o);
  fx::DeviceProfile p = fx::resolve_device(o.device);
  fx::AnalysisResult r = analyze(o, m.graph, p);
  if (!o.why.empty()) {
    auto comma = o.why.find(',');
    if (comma == std::string::npos) throw fx::Error("--why expects NODE_A,NODE_B");
    fmt::print("{}\n", fx::explain_pair(r, o.why.substr(0, comma), o.why.substr(comma + 1)));
    return 0;
  }
  if (!o.plan_out.empty()) {
    fx::FusionPlan plan(r, o.model);
    if (o.accept_all) plan.accept_all_above(o.threshold);
    plan.save(o.plan_out);
    r.groups = plan.groups();  // statuses as saved
  }
  if (o.json) {
    nlohmann::json j = fx::to_json(r);
    j["model"] = o.model;
    fmt::print("{}\n", j.dump(2));
  } else {
    print_table(r, p, o);
  }
  return 0;
}

int run_why(const AnalyzeOptions& o) {
  auto m = load(o);
  for (const auto& n : {o.node_a, o.node_b})
    if (m.graph.find_node(n) == fx::kNoNode)
      throw fx::Error(o.model + ": no node named '" + n + "'");
  fx::DeviceProfile p = fx::resolve_device(o.device);
  fmt::print("{}\n", fx::explain_pair(analyze(o, m.graph, p), o.node_a, o.node_b));
  return 0;
}

struct CalibrateOptions {
  std::string out;
  std::string from;  // a before/after result: fit instead of measuring
  bool json = false;
};

std::string percent_or_dash(double v) {
  return std::isfinite(v) ? fmt::format("{:.1f}%", v * 100) : "-";
}
std::string rho_or_dash(double v) {
  return std::isfinite(v) ? fmt::format("{:.3f}", v) : "-";
}

// fxc calibrate --from RESULT.json: least squares on the measured group savings.
int run_calibrate_from(const CalibrateOptions& o) {
  std::ifstream in(o.from);
  if (!in) throw fx::FileError(o.from, "cannot open");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw fx::FileError(o.from, std::string("not JSON: ") + e.what());
  }
  auto samples = fx::calibration_samples(doc, o.from);
  fx::CalibrationFit f = fx::fit_calibration(samples);
  const fx::DeviceProfile base = fx::resolve_device("cpu-host");
  char date[16];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  fx::DeviceProfile p = fx::apply_calibration(
      base, f,
      fmt::format("fitted {} to {} groups measured in {} (fxc calibrate --from)", date,
                  samples.size(), o.from));
  const std::string path = o.out.empty() ? fx::cpu_host_cache_path() : o.out;
  fx::save_device_profile(p, path);
  const std::string estimated = doc.value("estimate_profile", "?");
  if (o.json) {
    auto err = [](const fx::PredictionError& e) {
      return nlohmann::json{{"groups", e.groups},
                            {"spearman", std::isfinite(e.spearman) ? nlohmann::json(e.spearman)
                                                                   : nlohmann::json(nullptr)},
                            {"median_abs_rel_error", std::isfinite(e.median_abs_rel_error)
                                                         ? nlohmann::json(e.median_abs_rel_error)
                                                         : nlohmann::json(nullptr)}};
    };
    nlohmann::json j = {{"from", o.from},
                        {"estimate_profile", estimated},
                        {"groups", samples.size()},
                        {"bandwidth_bytes_per_s", f.bandwidth_bytes_per_s()},
                        {"launch_overhead_s", f.launch_overhead_s},
                        {"rms_residual_us", f.rms_residual_us},
                        {"note", f.note},
                        {"before", err(f.before)},
                        {"after", err(f.after)},
                        {"profile", fx::to_json(p)},
                        {"written_to", path}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("Fitted       {} groups of {} (predictions were made on {})\n", samples.size(), o.from,
             estimated);
  fmt::print("Model        saved = bytes saved / bandwidth + launches saved x launch overhead\n");
  fmt::print("Bandwidth    {}/s -> {}/s\n", human_bytes(base.memory_bandwidth_bytes_per_s),
             f.seconds_per_byte > 0 ? human_bytes(f.bandwidth_bytes_per_s()) : "unchanged");
  fmt::print("Launch       {} -> {}\n", human_time(base.launch_overhead_s),
             f.launch_overhead_s > 0 ? human_time(f.launch_overhead_s) : "unchanged");
  if (!f.note.empty()) fmt::print("Note         {}\n", f.note);
  fmt::print("\nPredicted vs measured saving per group  Spearman  median |rel error|\n");
  fmt::print("  {:<37} {:>8}  {:>17}\n", "before calibration (" + estimated + ")",
             rho_or_dash(f.before.spearman), percent_or_dash(f.before.median_abs_rel_error));
  fmt::print("  {:<37} {:>8}  {:>17}\n", "after calibration (fitted)",
             rho_or_dash(f.after.spearman), percent_or_dash(f.after.median_abs_rel_error));
  fmt::print("(in-sample: fitted and judged on the same groups; residual {:.1f} us rms)\n",
             f.rms_residual_us);
  fmt::print("\n{}\nwritten to {}\n", device_line(p), path);
  return 0;
}

int run_calibrate(const CalibrateOptions& o) {
  if (!o.from.empty()) return run_calibrate_from(o);
  fx::DeviceProfile p = fx::calibrate_cpu_host(o.out);
  fmt::print("{}\nwritten to {}\n", device_line(p),
             o.out.empty() ? fx::cpu_host_cache_path() : o.out);
  return 0;
}

int run_bench_synthetic(const AnalyzeOptions& o) {
  fx::Stopwatch gen;
  fx::SyntheticGraphOptions so;
  so.node_count = o.synthetic_nodes;
  fx::Graph g = fx::make_synthetic_graph(so);
  double gen_ms = gen.elapsed_ms();
  fx::DeviceProfile p = fx::resolve_device(o.device);
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
  cmd->add_option("--dim", o->dims, "Bind a symbolic dimension, NAME=N (repeatable)");
  cmd->add_flag("--json", o->json, "Print one JSON object instead of the table");
  cmd->add_option("--plan-out", o->plan_out, "Write the fusion plan (JSON) here");
  cmd->add_flag("--accept-all", o->accept_all,
                "In the written plan, accept every group above --threshold");
  cmd->add_option("--why", o->why, "Explain why NODE_A,NODE_B were not fused, and stop");
  cmd->footer(
      "Prints the device profile, kernels and DRAM traffic before -> after, then one row\n"
      "per group: id, pattern, ops, bytes saved, launches saved, est. time saved, status.\n"
      "Examples:\n"
      "  fxc analyze resources/models/tiny_cnn.onnx --device nvidia-h100 --opt-level 1\n"
      "  fxc analyze gpt2.onnx --dim batch=1 --dim seq=128 --device nvidia-h100 --opt-level 3 "
      "--json\n"
      "  fxc analyze resnet18.onnx --plan-out plan.json --accept-all\n"
      "  fxc analyze resnet18.onnx --why /layer1/0/conv1/Conv,/maxpool/MaxPool");
  cmd->callback([o, &run] { run = [o] { return run_analyze(*o); }; });

  auto w = std::make_shared<AnalyzeOptions>();
  auto* why = app.add_subcommand("why", "Explain why two adjacent ops were not fused");
  why->add_option("model", w->model, "ONNX model file")->required();
  why->add_option("node_a", w->node_a, "Producer node name")->required();
  why->add_option("node_b", w->node_b, "Consumer node name")->required();
  add_common(why, *w);
  why->add_option("--dim", w->dims, "Bind a symbolic dimension, NAME=N (repeatable)");
  why->footer(
      "Node names are those of the ONNX file ('fxc analyze --json' lists them in not_fused).\n"
      "Examples:\n"
      "  fxc why resources/models/tiny_cnn.onnx /relu/Relu /layer1/0/conv1/Conv\n"
      "  fxc why resources/models/tiny_cnn.onnx /conv1/Conv /bn1/BatchNormalization --opt-level 0");
  why->callback([w, &run] { run = [w] { return run_why(*w); }; });

  auto co = std::make_shared<CalibrateOptions>();
  auto* cal = app.add_subcommand(
      "calibrate", "Re-measure the cpu-host device profile (under 1 s), or fit it to measurements");
  cal->add_option("--out", co->out, "Write the profile here instead of the user cache");
  cal->add_option("--from", co->from,
                  "Fit bandwidth and launch overhead to a before/after result "
                  "(fxc profile MODEL --opt-level N --json)");
  cal->add_flag("--json", co->json, "With --from: print one JSON object");
  cal->footer(
      "Measures stream bandwidth, a GEMM and the launch overhead of an empty kernel; the\n"
      "result is cached under ~/.cache/fusion-explorer/ and used by --device cpu-host.\n"
      "With --from, fits bandwidth and launch overhead to the per-group savings measured by\n"
      "'fxc profile --opt-level N --json' instead (least squares) and saves that profile.\n"
      "Examples:\n"
      "  fxc calibrate && fxc analyze model.onnx --device cpu-host\n"
      "  fxc calibrate --out my-host.json && fxc analyze model.onnx --device my-host.json\n"
      "  fxc calibrate --from before_after.json --out fitted-host.json");
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
