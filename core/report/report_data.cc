// SPDX-License-Identifier: Apache-2.0
#include "report/report_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <numeric>
#include <unordered_set>

#include "analysis/saving_model.h"
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
  const ReportCalibration& c = *d.calibration;
  auto rho = [](double v) { return std::isfinite(v) ? fmt::format("{:.3f}", v) : "-"; };
  auto pct = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f}%", v * 100) : "-"; };
  auto row = [&](std::string label, const PredictionError& e) {
    return std::vector<std::string>{std::move(label), rho(e.spearman), pct(e.median_abs_rel_error)};
  };
  std::vector<std::vector<std::string>> rows;
  rows.push_back(
      row(fmt::format("before calibration ({}; {} groups)", c.before_profile, c.before.groups),
          c.before));
  rows.push_back(row(
      fmt::format("after calibration ({}; {} groups)", c.after_method, c.after.groups), c.after));
  if (c.on_device)
    rows.push_back(
        row(fmt::format("on {} ({})", c.device_label, c.device_calibration), *c.on_device));
  rows.push_back(row(
      fmt::format("before calibration, the {} groups measured beyond 2x noise", c.resolved_groups),
      c.resolved_before));
  rows.push_back(row(
      fmt::format("after calibration, the {} groups measured beyond 2x noise", c.resolved_groups),
      c.resolved_after));
  rows.push_back(
      row(fmt::format("after calibration ({}; in-sample)", c.saving_method), c.saving_in_sample));
  rows.push_back(row("the same saving model, each group predicted by a fit to the others",
                     c.saving_leave_one_out));
  return rows;
}

namespace {

// Before/after calibration of the group savings of one before/after result.
ReportCalibration report_calibration(const nlohmann::json& doc, const std::string& origin,
                                     const DeviceProfile& device, std::string before_profile) {
  ReportCalibration c;
  auto groups = group_terms_samples(doc, origin);
  if (groups.size() < 2)
    throw Error(
        fmt::format("{} groups with cost terms and measured savings (2 needed)", groups.size()));
  auto kernels = kernel_samples(doc, origin);  // throws FileError without cost terms
  auto fused = fused_kernel_samples(doc);
  DeviceProfile base = device;
  base.fused_classes = {};  // the fit starts from the class rates, never from another fit
  KernelFit kf = fit_kernel_rates(kernels, base, "this result's unfused kernels");
  FusedFit ff = fit_fused_rates(fused, kf.profile);
  c.before_profile = std::move(before_profile);
  c.before = recorded_group_error(groups);
  c.after = group_error(ff.profile, groups);
  c.unfused_kernels = kf.kernels;
  c.fused_kernels = ff.kernels;
  c.after_method =
      fmt::format("{} fitted to this result's {} unfused and {} fused kernel times, in-sample",
                  device.name, c.unfused_kernels, c.fused_kernels);
  if (device.calibrated) {
    c.on_device = group_error(device, groups);
    c.device_label = device.label();
    c.device_calibration = device.calibration.empty() ? "calibrated" : device.calibration;
  }
  auto resolved = resolved_groups(groups);
  c.resolved_groups = int(resolved.size());
  c.resolved_before = recorded_group_error(resolved);
  c.resolved_after = group_error(ff.profile, resolved);
  const SavingModel saving = fit_saving_model(groups, ff.profile);
  c.saving_in_sample = saving_error(saving, ff.profile, groups);
  c.saving_leave_one_out = leave_one_out_error(groups, ff.profile);
  int fitted = 0;
  for (const auto& k : saving.classes) fitted += k.fitted ? k.groups : 0;
  c.saving_method = fmt::format(
      "saving model fitted to this result's group savings, {} of {} groups in classes with "
      "enough groups, the others by the difference of kernel times",
      fitted, groups.size());
  return c;
}

}  // namespace

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
  // The plan records its profile's label, which says whether it was calibrated.
  if (!plan.device().empty() && plan.device() != device.label())
    d.warnings.push_back(
        fmt::format("the plan's estimates were made on {}, the analysis totals on {}",
                    plan.device(), device.label()));
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
    // How far the predictions were, and how far they are once the cost model is fitted to
    // this result's kernels (fxc calibrate --from does the same fit).
    if (d.profile->before_after) {
      try {
        d.calibration = report_calibration(*profile_doc, d.options.profile_path, device,
                                           d.profile->estimate_profile.empty()
                                               ? std::string("the plan's profile")
                                               : d.profile->estimate_profile);
      } catch (const Error& e) {
        d.calibration_note = e.what();
      }
    } else {
      d.calibration_note = "a single-run profile has no before/after savings";
    }
  }
  d.commands = reproduce_commands(d);
  return d;
}

}  // namespace fx
