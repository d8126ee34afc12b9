// SPDX-License-Identifier: Apache-2.0
// fxc report: an HTML, Markdown or JSON report of a model's fusion plan, with the
// measurements of `fxc profile` when given. Wiring only: core/report does the work.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "calibration/host_device.h"
#include "codegen/group_kernels.h"
#include "commands.h"
#include "model_options.h"
#include "onnx/model_loader.h"
#include "report/report_writer.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fxc {
namespace {

struct ReportCmd {
  std::string model, plan, profile, device, out, format;
  ModelOptions mo;
  int top_ops = 12;
};

int run_report(const ReportCmd& o) {
  // Fail on a bad output format before the (slower) loading and analysis.
  fx::ReportFormat format = fx::ReportFormat::Html;
  if (!o.format.empty()) {
    auto f = fx::report_format_from_name(o.format);
    if (!f) throw fx::Error("--format: expected html, md or json, not '" + o.format + "'");
    format = *f;
  } else {
    format = fx::report_format_from_path(o.out);
  }
  fx::LoadedModel m = load_model(o.model, with_plan_passes(o.mo, o.plan));
  print_model_header(m);
  fx::FusionPlan plan = fx::FusionPlan::load(o.plan);
  for (const auto& missing : plan.bind(m.graph))
    fmt::print(stderr, "fxc: plan node '{}' is not in {}\n", missing, o.model);

  // The plan's own device unless --device says otherwise, so that the totals and the
  // why-not reasons come from the same cost model as the plan's estimates.
  std::string device = !o.device.empty()        ? o.device
                       : !plan.device().empty() ? plan.device()
                                                : std::string("cpu-host");
  fx::DeviceProfile profile = fx::resolve_device(device, m.graph);
  fx::FusionOptions fo;
  fo.opt_level = plan.opt_level();
  fo.threshold = plan.threshold();
  fx::use_generated_kernels(fo);
  fx::AnalysisResult analysis = fx::analyze_fusion(m.graph, profile, fo);

  nlohmann::json profile_doc;
  if (!o.profile.empty()) profile_doc = fx::read_json_file(o.profile, "profile result");

  fx::ReportOptions ro;
  ro.model_path = o.model;
  ro.plan_path = o.plan;
  ro.profile_path = o.profile;
  ro.device_arg = device;
  ro.dims = dim_bindings(m, o.mo);  // assumed dims too: the commands reproduce this run
  ro.out_path = o.out;
  ro.top_ops = o.top_ops;
  fx::ReportData data = fx::gather_report(m.graph, m.info, plan, profile, analysis,
                                          o.profile.empty() ? nullptr : &profile_doc, ro);
  fx::write_report(data, format, o.out);
  fmt::print("report written to {} ({} groups{})\n", o.out, data.groups.size(),
             !data.profile                ? ", not measured"
             : data.profile->before_after ? ", before/after measured"
                                          : ", single-run profile");
  return 0;
}

}  // namespace

void register_report(CLI::App& app, Runner& run) {
  auto o = std::make_shared<ReportCmd>();
  auto* cmd =
      app.add_subcommand("report", "Write an HTML, Markdown or JSON report of a fusion plan");
  cmd->add_option("model", o->model, "ONNX model file")->required();
  cmd->add_option("--plan", o->plan, "Fusion plan JSON (fxc analyze --plan-out)")->required();
  cmd->add_option("--profile", o->profile,
                  "Measurements: fxc profile --plan PLAN --json output (before/after), or a "
                  "single-run fxc profile --json");
  cmd->add_option("--device", o->device,
                  "Device profile for the totals and why-not reasons (default: the plan's)");
  add_model_options(cmd, o->mo);
  cmd->add_option("--out", o->out, "Report file: .html, .md or .json")->required();
  cmd->add_option("--format", o->format, "html, md or json (default: from --out's extension)");
  cmd->add_option("--top-ops", o->top_ops, "Rows of the op-type histogram")->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  fxc analyze model.onnx --plan-out plan.json --accept-all\n"
      "  fxc profile model.onnx --plan plan.json --json > before_after.json\n"
      "  fxc report model.onnx --plan plan.json --profile before_after.json --out report.html\n"
      "  fxc report model.onnx --plan plan.json --out report.json   # for CI "
      "(docs/report-schema.md)\n"
      "  fxc analyze resources/models/tiny_cnn.onnx --plan-out plan.json --accept-all && "
      "fxc report resources/models/tiny_cnn.onnx --plan plan.json --out report.md");
  cmd->callback([o, &run] { run = [o] { return run_report(*o); }; });
}

}  // namespace fxc
