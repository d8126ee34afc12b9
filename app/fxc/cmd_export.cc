// SPDX-License-Identifier: Apache-2.0
// fxc export: the fused model as ONNX (each accepted group a model-local function in
// domain ai.fusion_explorer, Conv+BN folded), and optionally the generated kernel
// sources with a manifest. Wiring only: core/onnx and core/codegen do the work.

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "calibration/host_device.h"
#include "codegen/fused_program.h"
#include "codegen/kernel_export.h"
#include "commands.h"
#include "model_options.h"
#include "onnx/fused_model_export.h"
#include "onnx/model_loader.h"
#include "plan_choice.h"
#include "util/error.h"

namespace fxc {
namespace {

struct ExportCmd {
  std::string model, plan, out, kernels, device = "cpu-host";
  int opt_level = -1;
  double threshold = 0.30;
  ModelOptions mo;
  bool json = false;
};

nlohmann::json write_kernels(const ExportCmd& o, const fx::Graph& g,
                             const std::vector<const fx::FusionGroup*>& groups) {
  return fx::write_kernel_sources(g, groups, o.kernels, o.model);
}

int run_export(const ExportCmd& o) {
  fx::LoadedModel m = load_model(o.model, with_plan_passes(o.mo, o.plan));
  print_model_header(m, o.json ? stderr : stdout);
  fx::FusionPlan plan = plan_for({o.plan, o.opt_level, o.threshold, o.device, o.model}, m.graph);
  std::vector<fx::ExportGroup> groups;
  for (const fx::FusionGroup* g : plan.accepted()) groups.push_back({g->id, g->nodes});
  fx::FusedExportResult r = fx::export_fused_model(m, groups, o.out);
  nlohmann::json j{{"out", o.out},
                   {"nodes_before", r.nodes_before},
                   {"nodes_after", r.nodes_after},
                   {"functions", r.functions},
                   {"folded_bn", r.folded_bn},
                   {"skipped", r.skipped},
                   {"external_data", r.external_data}};
  if (!o.kernels.empty()) j["kernels"] = write_kernels(o, m.graph, plan.accepted());
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print(
      "{}: {} nodes -> {} ({} fused functions in domain {}, {} BatchNormalization folded){}\n",
      o.out, r.nodes_before, r.nodes_after, r.functions, fx::kFusionDomain, r.folded_bn.size(),
      r.external_data ? ", weights in " + o.out + ".data" : "");
  for (const auto& s : r.skipped) fmt::print("  not fused: {}\n", s);
  if (!o.kernels.empty()) fmt::print("kernel sources and manifest.json in {}\n", o.kernels);
  return 0;
}

}  // namespace

void register_export(CLI::App& app, Runner& run) {
  auto o = std::make_shared<ExportCmd>();
  auto* cmd =
      app.add_subcommand("export", "Write the fused model as ONNX (groups as local functions)");
  cmd->add_option("model", o->model, "ONNX model")->required();
  cmd->add_option("--plan", o->plan, "Fusion plan JSON (fxc analyze --plan-out)");
  cmd->add_option("--opt-level", o->opt_level,
                  "Analyze at this level and accept every group above --threshold");
  cmd->add_option("--threshold", o->threshold,
                  "Traffic reduction a group needs (with --opt-level)");
  cmd->add_option("--device", o->device, "Device profile for the analysis");
  add_model_options(cmd, o->mo);
  cmd->add_option("--out", o->out, "Fused ONNX file to write")->required();
  cmd->add_option("--kernels", o->kernels,
                  "Also write the generated kernel sources and manifest.json here");
  cmd->add_flag("--json", o->json, "Print the result as JSON");
  cmd->footer(
      "Examples:\n"
      "  fxc export resnet18.onnx --plan plan.json --out resnet18_fused.onnx --kernels kernels/\n"
      "  fxc export resources/models/tiny_cnn.onnx --opt-level 2 --out tiny_fused.onnx");
  cmd->callback([o, &run] { run = [o] { return run_export(*o); }; });
}

}  // namespace fxc
