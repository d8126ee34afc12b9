// fxc analyze / why / calibrate / bench-synthetic: the fusion analysis from the command
// line. Wiring only: everything is computed by core/analysis.

#include <fmt/format.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/analysis_json.h"
#include "analysis/calibration_fit.h"
#include "analysis/cpu_calibration.h"
#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "analysis/saving_model.h"
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
  fmt::print("\n{:<12} {:<28} {:<40} {:>11} {:>8} {:>11} {:>3}  {}\n", "group", "pattern", "ops",
             "bytes saved", "launches", "est. saved", "by", "status");
  // Each estimate names the model that produced it: [n] refers to the legend below.
  std::vector<std::pair<std::string, int>> sources;
  auto source_index = [&](const std::string& label) {
    for (std::size_t i = 0; i < sources.size(); ++i)
      if (sources[i].first == label) return ++sources[i].second, int(i) + 1;
    sources.emplace_back(label, 1);
    return int(sources.size());
  };
  for (const auto& gr : r.groups) {
    std::string ops;
    for (const auto& op : gr.ops) ops += (ops.empty() ? "" : ",") + op;
    if (ops.size() > 40) ops = ops.substr(0, 37) + "...";
    const auto& e = gr.estimate;
    fmt::print("{:<12} {:<28} {:<40} {:>11} {:>8} {:>11} {:>3}  {}\n", gr.id, gr.pattern, ops,
               human_bytes(double(e.bytes_saved())), e.launches_saved(),
               human_time(e.time_saved_s()), fmt::format("[{}]", source_index(e.saving_label())),
               fx::group_status_name(gr.status));
  }
  for (std::size_t i = 0; i < sources.size(); ++i)
    fmt::print("[{}] est. saved of {} group{} by the {}\n", i + 1, sources[i].second,
               sources[i].second == 1 ? "" : "s", sources[i].first);
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
  std::vector<std::string> from;      // before/after results: fit instead of measuring
  std::vector<std::string> evaluate;  // results judged with the fitted profile, not fitted
  std::string device = "cpu-host";    // the base profile the fit starts from
  std::string stat = "median";        // median | min: which kernel time to fit and judge
  bool json = false;
};

std::string percent_or_dash(double v) {
  return std::isfinite(v) ? fmt::format("{:.1f}%", v * 100) : "-";
}

std::string rho_or_dash(double v) {
  return std::isfinite(v) ? fmt::format("{:.3f}", v) : "-";
}

nlohmann::json num_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json error_json(const fx::PredictionError& e) {
  return {{"groups", e.groups},
          {"spearman", num_or_null(e.spearman)},
          {"median_abs_rel_error", num_or_null(e.median_abs_rel_error)}};
}

nlohmann::json read_result(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw fx::FileError(path, "cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw fx::FileError(path, std::string("not JSON: ") + e.what());
  }
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

// File names without their folders, at most four then a count: the saving model's
// provenance is repeated beside every estimate it makes.
std::string short_names(const std::vector<std::string>& files) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < files.size() && i < (files.size() > 4 ? 3 : 4); ++i)
    names.push_back(std::filesystem::path(files[i]).filename().string());
  std::string s = join(names);
  if (files.size() > 4) s += fmt::format(" and {} more", files.size() - 3);
  return s;
}

// The older fit, for results without per-kernel cost terms: least squares of the group
// savings on bytes and launches saved (in-sample).
int run_calibrate_groups(const CalibrateOptions& o, const nlohmann::json& doc) {
  const std::string& from = o.from.front();
  auto samples = fx::calibration_samples(doc, from);
  fx::CalibrationFit f = fx::fit_calibration(samples);
  const fx::DeviceProfile base = fx::resolve_device(o.device);
  fx::DeviceProfile p = fx::apply_calibration(
      base, f,
      fmt::format("fitted {} to {} groups measured in {} (fxc calibrate --from)", today_utc(),
                  samples.size(), from));
  // A saving model the base carried was fitted on the rates this fit changes.
  p.saving_model = {};
  const std::string path = o.out.empty() ? fx::cpu_host_cache_path() : o.out;
  fx::save_device_profile(p, path);
  const std::string estimated = doc.value("estimate_profile", "?");
  if (o.json) {
    nlohmann::json j = {{"from", from},
                        {"method", "group-fit (in-sample; the result has no kernel cost terms)"},
                        {"estimate_profile", estimated},
                        {"groups", samples.size()},
                        {"bandwidth_bytes_per_s", f.bandwidth_bytes_per_s()},
                        {"launch_overhead_s", f.launch_overhead_s},
                        {"rms_residual_us", f.rms_residual_us},
                        {"note", f.note},
                        {"before", error_json(f.before)},
                        {"after", error_json(f.after)},
                        {"profile", fx::to_json(p)},
                        {"written_to", path}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("Fitted       {} groups of {} (predictions were made on {})\n", samples.size(), from,
             estimated);
  fmt::print("Model        saved = bytes saved / bandwidth + launches saved x launch overhead\n");
  fmt::print(
      "             (the result has no per-kernel cost terms: run fxc profile again for\n"
      "             the per-kernel fit)\n");
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

// fxc calibrate --from RESULT.json...: the per-kernel fit (calibration_fit.h), judged on
// the group savings of the same results and of --evaluate results.
int run_calibrate_from(const CalibrateOptions& o) {
  if (o.stat != "median" && o.stat != "min")
    throw fx::Error("calibrate: --stat must be median or min, not '" + o.stat + "'");
  const fx::TimingStat stat = o.stat == "min" ? fx::TimingStat::Min : fx::TimingStat::Median;
  std::vector<nlohmann::json> docs;
  for (const auto& f : o.from) docs.push_back(read_result(f));
  std::vector<fx::KernelSample> kernels;
  std::vector<fx::GroupTermsSample> groups;
  bool any_terms = false;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    std::vector<fx::KernelSample> k;
    try {
      k = fx::kernel_samples(docs[i], o.from[i], "before", stat);
      any_terms = true;
    } catch (const fx::FileError&) {
      if (docs.size() == 1) return run_calibrate_groups(o, docs[0]);
      throw;
    }
    kernels.insert(kernels.end(), k.begin(), k.end());
  }
  // Every repeat's kernels are fitted; a model's repeats give one merged group each.
  for (const auto& m : fx::groups_by_model(docs, o.from, stat))
    groups.insert(groups.end(), m.groups.begin(), m.groups.end());
  (void)any_terms;
  const fx::DeviceProfile base = fx::resolve_device(o.device);
  const std::string what =
      fmt::format("fitted {} to the {} times of {} unfused kernels of {} (fxc calibrate --from)",
                  today_utc(), o.stat, kernels.size(), join(o.from));
  fx::KernelFit fit = fx::fit_kernel_rates(kernels, base, what);
  // Stage 2: the fused kernels of the same results' "after" timelines.
  std::vector<fx::KernelSample> fused;
  for (const auto& d : docs) {
    auto f = fx::fused_kernel_samples(d, stat);
    fused.insert(fused.end(), f.begin(), f.end());
  }
  fx::FusedFit ffit = fx::fit_fused_rates(fused, fit.profile);
  fx::DeviceProfile p = ffit.profile;
  p.calibration = what + fmt::format("; fused rates fitted to {} fused kernels", fused.size());
  // The base may itself be a fitted profile: keep only what was measured, so that
  // fitting again replaces the earlier fit's statement instead of appending to it.
  const std::string measured = base.source.substr(0, base.source.find("; kernel rates "));
  p.source = measured + "; kernel rates " + p.calibration;
  // A base that carried a saving model fitted on other rates: its coefficients do not
  // apply to these; the one fitted below replaces it.
  p.saving_model = {};

  // Stage 3: the saving model (saving_model.h), fitted to the same results' group savings
  // on the fitted rates, and saved with them: analysis on this profile predicts each
  // group's saving with it for the classes that kept their fit.
  const fx::SavingModel saving = fx::fit_saving_model(groups, p);
  p.saving_model =
      saving.coefficients(fmt::format("{}, {} measured group savings of {} (fxc calibrate --from)",
                                      today_utc(), saving.groups, short_names(o.from)));
  const std::string path = o.out.empty() ? fx::cpu_host_cache_path() : o.out;
  fx::save_device_profile(p, path);

  struct Judged {
    std::string from;
    int groups, resolved;
    fx::PredictionError recorded, base_model, unfused_only, fitted;
    fx::PredictionError resolved_recorded, resolved_fitted;
    fx::PredictionError saving, resolved_saving;
  };
  auto judge = [&](const std::string& from, const std::vector<fx::GroupTermsSample>& g) {
    auto r = fx::resolved_groups(g);
    return Judged{from,
                  int(g.size()),
                  int(r.size()),
                  fx::recorded_group_error(g),
                  fx::group_error(base, g),
                  fx::group_error(fit.profile, g),
                  fx::group_error(p, g),
                  fx::recorded_group_error(r),
                  fx::group_error(p, r),
                  fx::saving_error(saving, p, g),
                  fx::saving_error(saving, p, r)};
  };
  Judged in = judge(join(o.from), groups);
  // On the fitted results the saving model is judged in-sample (it saw these savings)
  // and leave-one-group-out (each group predicted by a fit to the others).
  const fx::PredictionError loo = fx::leave_one_out_error(groups, p);
  const fx::PredictionError loo_resolved = fx::leave_one_out_error(groups, p, {}, true);
  std::vector<Judged> held_out;
  std::vector<fx::GroupTermsSample> held_all;
  std::vector<nlohmann::json> evaluated;
  for (const auto& e : o.evaluate) evaluated.push_back(read_result(e));
  const auto by_model = fx::groups_by_model(evaluated, o.evaluate, stat);
  for (const auto& m : by_model) {
    held_out.push_back(judge(join(m.files), m.groups));
    held_all.insert(held_all.end(), m.groups.begin(), m.groups.end());
  }
  if (by_model.size() > 1) held_out.push_back(judge("all --evaluate results", held_all));
  const std::string estimated = docs[0].value("estimate_profile", "?");

  if (o.json) {
    nlohmann::json classes = nlohmann::json::object(), fused_classes = nlohmann::json::object();
    for (int c = 0; c < fx::kKernelClassCount; ++c) {
      auto kc = static_cast<fx::KernelClass>(c);
      const auto& cf = fit.classes[c];
      classes[fx::kernel_class_name(kc)] = {
          {"kernels", cf.kernels},
          {"compute_bound", cf.compute_bound},
          {"bandwidth_bytes_per_s", p.bandwidth(kc)},
          {"flops_per_s", p.flops(kc)},
          {"median_abs_rel_error", num_or_null(cf.median_abs_rel_error)}};
      const auto& ff = ffit.classes[c];
      if (ff.kernels == 0) continue;
      fused_classes[fx::kernel_class_name(kc)] = {
          {"kernels", ff.kernels},
          {"with_epilogue", ff.with_epilogue},
          {"scale", p.fused_scale(kc)},
          {"epilogue_bandwidth_bytes_per_s", p.epilogue_bandwidth(kc)},
          {"median_abs_rel_error_unfitted", num_or_null(ff.unfitted_median_abs_rel_error)},
          {"median_abs_rel_error", num_or_null(ff.median_abs_rel_error)}};
    }
    auto judged_json = [&](const Judged& j) {
      return nlohmann::json{{"from", j.from},
                            {"groups", j.groups},
                            {"before", error_json(j.recorded)},
                            {"base_model", error_json(j.base_model)},
                            {"unfused_fit_only", error_json(j.unfused_only)},
                            {"after", error_json(j.fitted)},
                            {"resolved",
                             {{"groups", j.resolved},
                              {"note", "groups whose measured saving is >= 2x its noise"},
                              {"before", error_json(j.resolved_recorded)},
                              {"after", error_json(j.resolved_fitted)},
                              {"saving_model", error_json(j.resolved_saving)}}},
                            {"saving_model", error_json(j.saving)}};
    };
    nlohmann::json saving_classes = nlohmann::json::object();
    for (int c = 0; c < fx::kKernelClassCount; ++c) {
      const auto& sc = saving.classes[c];
      if (sc.groups == 0) continue;
      nlohmann::json coef = nlohmann::json::object();
      for (int i = 0; i < fx::kSavingTerms; ++i) coef[fx::saving_term_name(i)] = sc.coefficients[i];
      saving_classes[fx::kernel_class_name(static_cast<fx::KernelClass>(c))] = {
          {"groups", sc.groups},
          {"fitted", sc.fitted},
          {"why_not_fitted", sc.why},
          {"leave_one_out_error", num_or_null(sc.leave_one_out_error)},
          {"difference_of_times_error", num_or_null(sc.difference_error)},
          {"coefficients", coef}};
    }
    nlohmann::json ev = nlohmann::json::array();
    for (const auto& h : held_out) ev.push_back(judged_json(h));
    nlohmann::json gj = nlohmann::json::array();
    for (const auto& g : groups) {
      // The saving model's terms of the group on the fitted profile (us), so that a
      // reader can check a prediction by hand.
      const fx::SavingFeatures sf = fx::saving_features(p, g);
      const fx::SavingPrediction sp = saving.predict(p, g);
      nlohmann::json terms = nlohmann::json::object();
      for (int i = 0; i < fx::kSavingTerms; ++i) terms[fx::saving_term_name(i)] = sf.us[i];
      gj.push_back({{"id", g.id},
                    {"pattern", g.pattern},
                    {"measured_us", g.measured_us},
                    {"noise_us", num_or_null(g.noise_us)},
                    {"repeats", g.repeats},
                    {"predicted_us_before", g.predicted_us},
                    {"predicted_us_after", fx::predict_group_us(p, g)},
                    {"predicted_us_saving_model", sp.saved_us},
                    {"saving_model_fitted", sp.fitted},
                    {"saving_model_class", fx::kernel_class_name(sf.fused_class)},
                    {"saving_model_terms_us", terms}});
    }
    nlohmann::json j = {
        {"from", o.from.size() == 1 ? nlohmann::json(o.from[0]) : nlohmann::json(o.from)},
        {"method",
         "kernel-fit: launch + max(bytes/bandwidth, flops/flops) per kernel class, fitted in "
         "log space (Huber) to the unfused kernels' times; then per class a fused scale and "
         "epilogue bandwidth fitted to the fused kernels' times; group savings predicted "
         "from cost terms"},
        {"estimate_profile", estimated},
        {"stat", o.stat},
        {"base_profile", base.label()},
        {"fitted_profile", p.label()},
        {"groups", in.groups},
        {"kernels", fit.kernels},
        {"bandwidth_bytes_per_s", p.bandwidth(fx::KernelClass::Elementwise)},
        {"launch_overhead_s", p.launch_overhead_s},
        {"kernel_fit",
         {{"kernels", fit.kernels},
          {"iterations", fit.iterations},
          {"median_abs_rel_error_base", num_or_null(fit.base_median_abs_rel_error)},
          {"median_abs_rel_error", num_or_null(fit.median_abs_rel_error)},
          {"classes", classes}}},
        {"fused_fit",
         {{"kernels", ffit.kernels},
          {"median_abs_rel_error_unfitted", num_or_null(ffit.unfitted_median_abs_rel_error)},
          {"median_abs_rel_error", num_or_null(ffit.median_abs_rel_error)},
          {"classes", fused_classes}}},
        {"before", error_json(in.recorded)},
        {"base_model", error_json(in.base_model)},
        {"unfused_fit_only", error_json(in.unfused_only)},
        {"after", error_json(in.fitted)},
        {"resolved", judged_json(in)["resolved"]},
        {"saving_model",
         {{"method",
           "saved = sum of c_i x term_i per fused-kernel class (terms: members, traffic, "
           "launches, anchor_relayout, anchor_compute, -fused_cost, anchor_memory, "
           "anchor_weights, anchor_planes, timed on the fitted profile); weighted least "
           "squares on the measured savings (1 / (noise^2 + (0.2 x measured)^2)), ridge to "
           "the prior (1,0,0,0,0,1,0,0,0); classes with fewer than " +
               std::to_string(saving.options.min_groups_per_class) +
               " groups, or whose fit leaving each group out does no better than the "
               "difference of fitted kernel times, use that difference"},
          {"groups", saving.groups},
          {"classes", saving_classes},
          {"in_sample", error_json(in.saving)},
          {"leave_one_out", error_json(loo)},
          {"resolved",
           {{"groups", in.resolved},
            {"in_sample", error_json(in.resolved_saving)},
            {"leave_one_out", error_json(loo_resolved)}}}}},
        {"evaluate", ev},
        {"group_rows", gj},
        {"profile", fx::to_json(p)},
        {"written_to", path}};
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("Fitted       {} unfused kernels of {} ({} times, {} iterations)\n", fit.kernels,
             join(o.from), o.stat, fit.iterations);
  fmt::print(
      "Model        kernel time = launch + max(bytes / bandwidth(class), flops / "
      "FLOP/s(class))\n"
      "             fused kernel = launch + scale(class) x that + epilogue bytes / "
      "epilogue bandwidth(class)\n");
  fmt::print("Launch       {} -> {}\n", human_time(base.launch_overhead_s),
             human_time(p.launch_overhead_s));
  fmt::print("\n  {:<14} {:>7} {:>8} {:>12} {:>12} {:>10}\n", "class", "kernels", "compute",
             "bandwidth", "GFLOP/s", "median err");
  for (int c = 0; c < fx::kKernelClassCount; ++c) {
    auto kc = static_cast<fx::KernelClass>(c);
    const auto& cf = fit.classes[c];
    fmt::print("  {:<14} {:>7} {:>8} {:>12} {:>12.1f} {:>10}\n", fx::kernel_class_name(kc),
               cf.kernels, cf.compute_bound, human_bytes(p.bandwidth(kc)) + "/s", p.flops(kc) / 1e9,
               percent_or_dash(cf.median_abs_rel_error));
  }
  fmt::print("  per kernel, median |rel error|: {} on {} -> {} fitted\n",
             percent_or_dash(fit.base_median_abs_rel_error), base.label(),
             percent_or_dash(fit.median_abs_rel_error));
  fmt::print("\n  {:<14} {:>7} {:>9} {:>7} {:>14} {:>17}\n", "fused class", "kernels", "epilogue",
             "scale", "epilogue bw", "median err");
  for (int c = 0; c < fx::kKernelClassCount; ++c) {
    auto kc = static_cast<fx::KernelClass>(c);
    const auto& ff = ffit.classes[c];
    if (ff.kernels == 0) continue;
    fmt::print("  {:<14} {:>7} {:>9} {:>7.2f} {:>14} {:>8} -> {:>5}\n", fx::kernel_class_name(kc),
               ff.kernels, ff.with_epilogue, p.fused_scale(kc),
               human_bytes(p.epilogue_bandwidth(kc)) + "/s",
               percent_or_dash(ff.unfitted_median_abs_rel_error),
               percent_or_dash(ff.median_abs_rel_error));
  }
  fmt::print("  per fused kernel, median |rel error|: {} unfitted -> {} fitted\n",
             percent_or_dash(ffit.unfitted_median_abs_rel_error),
             percent_or_dash(ffit.median_abs_rel_error));
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
  auto print_judged = [&](const Judged& j, const char* what) {
    fmt::print("\n{} ({} groups: {}; fitted = {})\n", what, j.groups, j.from, p.label());
    fmt::print("  {:<52} {:>8}  {:>17}\n", "", "Spearman", "median |rel error|");
    auto row = [](const std::string& label, const fx::PredictionError& e) {
      fmt::print("  {:<52} {:>8}  {:>17}\n", label, rho_or_dash(e.spearman),
                 percent_or_dash(e.median_abs_rel_error));
    };
    row("before calibration (" + estimated + ")", j.recorded);
    row("this cost model on " + base.label(), j.base_model);
    row("unfused kernels fitted only", j.unfused_only);
    row("after calibration (fitted)", j.fitted);
    row(fmt::format("{} groups measured beyond 2x noise: before", j.resolved), j.resolved_recorded);
    row(fmt::format("{} groups measured beyond 2x noise: after", j.resolved), j.resolved_fitted);
    row("saving model (fitted to the --from savings)", j.saving);
    row(fmt::format("{} groups beyond 2x noise: saving model", j.resolved), j.resolved_saving);
  };
  print_judged(in, "Group savings, fitted results");
  fmt::print("  {:<52} {:>8}  {:>17}\n", "saving model, leave one group out",
             rho_or_dash(loo.spearman), percent_or_dash(loo.median_abs_rel_error));
  fmt::print("  {:<52} {:>8}  {:>17}\n", "beyond 2x noise: saving model, leave one out",
             rho_or_dash(loo_resolved.spearman),
             percent_or_dash(loo_resolved.median_abs_rel_error));
  for (const auto& h : held_out) print_judged(h, "Group savings, held-out result (not fitted)");
  fmt::print("\n{}\nwritten to {}\n", device_line(p), path);
  return 0;
}

int run_calibrate(const CalibrateOptions& o) {
  if (!o.from.empty()) return run_calibrate_from(o);
  if (!o.evaluate.empty()) throw fx::Error("calibrate: --evaluate needs --from");
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
      "per group: id, pattern, ops, bytes saved, launches saved, est. time saved, the model\n"
      "that estimated it ([n], named below the table: a profile's calibrated saving model\n"
      "for its fitted classes, else the difference of kernel times), status.\n"
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
                  "Fit launch overhead and per-class rates to the unfused kernel times of "
                  "before/after results, then fused-kernel rates to their fused kernels "
                  "(fxc profile MODEL --opt-level N --json; repeatable)");
  cal->add_option("--evaluate", co->evaluate,
                  "With --from: also judge the fitted profile on these results' group savings "
                  "(held out, not fitted; repeatable)");
  cal->add_option("--device", co->device, "With --from: the profile the fit starts from")
      ->capture_default_str();
  cal->add_option("--stat", co->stat,
                  "With --from: kernel times to fit and judge: median (of the timed runs) or "
                  "min (fastest run, least disturbed by load)")
      ->capture_default_str();
  cal->add_flag("--json", co->json, "With --from: print one JSON object");
  cal->footer(
      "Measures stream bandwidth, a GEMM and the launch overhead of an empty kernel; the\n"
      "result is cached under ~/.cache/fusion-explorer/ and used by --device cpu-host.\n"
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
