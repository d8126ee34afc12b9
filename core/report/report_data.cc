#include "report/report_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <numeric>
#include <unordered_set>

#include "report/report_text.h"
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

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    double avg = (double(i) + double(j)) / 2 + 1;  // ties share the average rank
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return NAN;
  auto ra = ranks(a), rb = ranks(b);
  double n = double(a.size());
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (va == 0 || vb == 0) return NAN;
  return cov / std::sqrt(va * vb);
}

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
  }
  d.commands = reproduce_commands(d);
  return d;
}

}  // namespace fx
