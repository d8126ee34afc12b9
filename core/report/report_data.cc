#include "report/report_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <numeric>
#include <unordered_set>

#include "report/report_text.h"
#include "util/error.h"
#include "util/version.h"

namespace fx {
namespace {

std::string now_utc() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

ModelSummary summarize_model(const Graph& g, const ModelInfo& info, const std::string& file) {
  ModelSummary m;
  m.file = file.empty() ? info.path : file;
  m.producer =
      info.producer_name + (info.producer_version.empty() ? "" : " " + info.producer_version);
  m.ir_version = info.ir_version;
  m.opsets = info.opsets;
  m.unknown_shape_nodes = info.unknown_shape_nodes;
  m.nodes = int64_t(g.node_count());
  m.values = int64_t(g.value_count());
  m.inputs = int64_t(g.runtime_inputs().size());
  m.outputs = int64_t(g.outputs().size());
  for (const auto& v : g.values()) {
    if (!v.is_constant()) continue;
    ++m.initializers;
    if (auto n = v.shape.numel()) m.parameters += *n;
  }
  m.parameter_bytes = g.parameter_bytes();
  std::map<std::string, int64_t> hist;
  for (const auto& n : g.nodes()) ++hist[n.qualified_op()];
  m.op_histogram.assign(hist.begin(), hist.end());
  std::stable_sort(m.op_histogram.begin(), m.op_histogram.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return m;
}

std::vector<std::vector<std::string>> prediction_error_rows(const ReportData& d) {
  if (!d.calibration) return {};
  const CalibrationFit& f = *d.calibration;
  auto rho = [](double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "-"; };
  auto pct = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f}%", v * 100) : "-"; };
  std::string profile = d.profile && !d.profile->estimate_profile.empty()
                            ? d.profile->estimate_profile
                            : std::string("the plan's profile");
  std::string fitted = fmt::format(
      "after calibration (least squares on these {} groups: {}, launch {}; in-sample)",
      f.before.groups,
      f.seconds_per_byte > 0 ? fmt::format("{:.1f} GB/s", f.bandwidth_bytes_per_s() / 1e9)
                             : std::string("bandwidth not fitted"),
      f.launch_overhead_s > 0 ? fmt::format("{:.2f} us", f.launch_overhead_s * 1e6)
                              : std::string("not fitted"));
  return {{"before calibration (" + profile + ")", rho(f.before.spearman),
           pct(f.before.median_abs_rel_error)},
          {fitted, rho(f.after.spearman), pct(f.after.median_abs_rel_error)}};
}

std::vector<std::string> reproduce_commands(const ReportData& d) {
  const ReportOptions& o = d.options;
  std::vector<std::string> dims;
  for (const auto& dim : o.dims) dims.insert(dims.end(), {"--dim", dim});
  auto with_dims = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 2, dims.begin(), dims.end());
    return shell_join(args);
  };
  std::string device = o.device_arg.empty() ? d.device.name : o.device_arg;
  std::string plan = o.plan_path.empty() ? "plan.json" : o.plan_path;
  std::vector<std::string> out;
  out.push_back(with_dims({"fxc", "analyze", o.model_path, "--device", device, "--opt-level",
                           std::to_string(d.analysis.opt_level), "--threshold",
                           format_number(d.analysis.threshold, 3), "--plan-out", plan}));
  std::string profile = o.profile_path.empty() ? "before_after.json" : o.profile_path;
  std::vector<std::string> prof = {"fxc", "profile", o.model_path, "--plan", plan};
  if (d.profile) {
    const ProfileInput& p = *d.profile;
    if (p.runs > 0) prof.insert(prof.end(), {"--runs", std::to_string(p.runs)});
    if (p.warmup > 0) prof.insert(prof.end(), {"--warmup", std::to_string(p.warmup)});
    if (p.threads > 0) prof.insert(prof.end(), {"--threads", std::to_string(p.threads)});
    if (p.seed >= 0) prof.insert(prof.end(), {"--seed", std::to_string(p.seed)});
  }
  prof.push_back("--json");
  out.push_back(with_dims(prof) + " > " + shell_quote(profile));
  out.push_back(with_dims({"fxc", "export", o.model_path, "--plan", plan, "--out", "fused.onnx",
                           "--kernels", "kernels"}));
  std::vector<std::string> rep = {"fxc", "report", o.model_path, "--plan", plan};
  if (!o.profile_path.empty()) rep.insert(rep.end(), {"--profile", o.profile_path});
  rep.insert(rep.end(),
             {"--device", device, "--out", o.out_path.empty() ? "report.html" : o.out_path});
  out.push_back(with_dims(rep));
  return out;
}

ReportData gather_report(const Graph& graph, const ModelInfo& info, const FusionPlan& plan,
                         const DeviceProfile& device, const AnalysisResult& analysis,
                         const nlohmann::json* profile_doc, ReportOptions options) {
  ReportData d;
  d.generator = fmt::format("fxc (Fusion Explorer) {}", kVersion);
  d.generated_at = options.generated_at.empty() ? now_utc() : options.generated_at;
  d.options = std::move(options);
  d.model = summarize_model(graph, info, d.options.model_path);
  d.device = device;
  d.groups = plan.groups();
  d.plan_model = plan.model();
  d.plan_dropped_groups = plan.dropped_groups();
  if (!d.plan_dropped_groups.empty())
    d.warnings.push_back(fmt::format("{} plan groups name nodes this model lacks and are left out",
                                     d.plan_dropped_groups.size()));
  if (!plan.device().empty() && plan.device() != device.name)
    d.warnings.push_back(
        fmt::format("the plan's estimates were made on {}, the analysis totals on {}",
                    plan.device(), device.name));
  d.analysis = analysis;
  for (const auto& nf : analysis.not_fused)
    ++d.why_not_counts[std::string(not_fused_reason_name(nf.reason))];
  if (profile_doc) {
    d.profile = read_profile_input(*profile_doc, d.options.profile_path);
    for (const auto& w : d.profile->warnings)
      d.warnings.push_back(d.options.profile_path + ": " + w);
    std::vector<double> predicted, measured;
    for (const auto& g : d.profile->groups)
      if (std::isfinite(g.predicted_saved_us) && std::isfinite(g.measured_saved_us))
        predicted.push_back(g.predicted_saved_us), measured.push_back(g.measured_saved_us);
    d.correlated_groups = int(predicted.size());
    d.rank_correlation = spearman_correlation(predicted, measured);
    // How far the predictions were, and how far a cost model fitted to these very
    // measurements would be (fxc calibrate --from does the same fit).
    std::vector<CalibrationSample> samples;
    for (const auto& g : d.profile->groups)
      if (g.status != "excluded" && std::isfinite(g.predicted_saved_us) &&
          std::isfinite(g.measured_saved_us) && std::isfinite(g.bytes_saved) &&
          std::isfinite(g.launches_saved))
        samples.push_back(
            {g.id, g.bytes_saved, g.launches_saved, g.predicted_saved_us, g.measured_saved_us});
    try {
      d.calibration = fit_calibration(samples);
    } catch (const Error& e) {
      d.calibration_note = e.what();
    }
  }
  d.commands = reproduce_commands(d);
  return d;
}

}  // namespace fx
