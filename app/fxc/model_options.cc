// SPDX-License-Identifier: Apache-2.0
#include "model_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace fxc {

fx::LoadOptions ModelOptions::load_options() const {
  fx::LoadOptions lo = fx::command_load_options(dims, disabled_passes, no_canonicalize);
  fx::transforms::CanonicalOptions named;
  named.disabled.insert(enabled_passes.begin(), enabled_passes.end());
  fx::transforms::check_pass_names(named);  // the same error for a bad name
  for (const auto& p : enabled_passes) lo.canonical.disabled.erase(p);
  return lo;
}

std::vector<std::string> ModelOptions::child_args() const {
  std::vector<std::string> a;
  for (const auto& p : disabled_passes) a.insert(a.end(), {"--disable-pass", p});
  for (const auto& p : enabled_passes) a.insert(a.end(), {"--enable-pass", p});
  if (no_canonicalize) a.push_back("--no-canonicalize");
  return a;
}

void add_model_options(CLI::App* cmd, ModelOptions& o) {
  cmd->add_option(
      "--dim", o.dims,
      "Bind a symbolic dimension, NAME=N (repeatable); unbound ones are assumed "
      "(batch-like 1, sequence 128, waveform samples 16000, height/width 224, other 64)");
  std::string passes;
  for (const auto& p : fx::transforms::canonical_pass_names())
    passes += (passes.empty() ? "" : ", ") + p;
  cmd->add_option("--disable-pass", o.disabled_passes,
                  "Skip a canonical pass (repeatable): " + passes);
  cmd->add_option("--enable-pass", o.enabled_passes,
                  "Run a pass even when --disable-pass names it (repeatable; all passes run by "
                  "default)");
  cmd->add_flag("--no-canonicalize", o.no_canonicalize,
                "Use the graph exactly as imported (no Identity/Constant folding)");
}

std::vector<std::string> plan_disabled_passes(const ModelOptions& o) {
  std::vector<std::string> out;
  for (const auto& pass : o.disabled_passes)
    if (std::find(o.enabled_passes.begin(), o.enabled_passes.end(), pass) ==
            o.enabled_passes.end() &&
        std::find(out.begin(), out.end(), pass) == out.end())
      out.push_back(pass);
  return out;
}

ModelOptions with_plan_passes(const ModelOptions& o, const std::string& plan) {
  ModelOptions out = o;
  if (plan.empty()) return out;
  std::vector<std::string> added;
  const fx::FusionPlan made = fx::FusionPlan::load(plan);  // outlives the loop
  for (const auto& pass : made.disabled_passes()) {
    const auto named = [&](const std::vector<std::string>& v) {
      return std::find(v.begin(), v.end(), pass) != v.end();
    };
    if (named(o.enabled_passes) || named(out.disabled_passes)) continue;
    out.disabled_passes.push_back(pass);
    added.push_back(pass);
  }
  if (!added.empty())
    fmt::print(stderr,
               "fxc: {} was made with the model read without {}; reading it the same way "
               "(--enable-pass NAME overrides)\n",
               plan, fmt::join(added, ", "));
  return out;
}

fx::LoadedModel load_model(const std::string& path, const ModelOptions& o) {
  return fx::load_onnx(path, o.load_options());
}

void print_model_header(const fx::LoadedModel& m, std::FILE* out) {
  if (!m.assumed_dims.empty())
    fmt::print(out, "{}\n", fx::transforms::assumed_dims_text(m.assumed_dims));
  fmt::print(out, "{}\n", m.canonical.summary());
}

nlohmann::json model_header_json(const fx::LoadedModel& m) {
  nlohmann::json dims = nlohmann::json::object();
  for (const auto& a : m.assumed_dims)
    dims[a.symbol] = {{"value", a.value}, {"kind", fx::transforms::dim_kind_name(a.kind)}};
  auto passes = nlohmann::json::array();
  for (const auto& p : m.canonical.passes)
    passes.push_back({{"name", p.pass},
                      {"ran", p.ran},
                      {"skipped_because", p.skipped_because},
                      {"nodes_removed", p.nodes_removed},
                      {"removed_ops", p.removed_ops},
                      {"weights", p.weights.size()},
                      {"weight_bytes", p.weight_bytes},
                      {"merged", p.merged},
                      {"folded_into", p.folded_into}});
  return {{"assumed_dims", dims},
          {"canonical",
           {{"enabled", m.canonical.enabled},
            {"summary", m.canonical.summary()},
            {"nodes_before", m.canonical.nodes_before},
            {"nodes_after", m.canonical.nodes_after},
            {"passes", passes}}}};
}

std::vector<std::string> dim_bindings(const fx::LoadedModel& m, const ModelOptions& o) {
  std::vector<std::string> out = o.dims;
  for (const auto& a : m.assumed_dims) out.push_back(a.symbol + "=" + std::to_string(a.value));
  return out;
}

std::vector<fx::PlanDim> plan_dims(const fx::LoadedModel& m, const ModelOptions& o) {
  std::vector<fx::PlanDim> out;
  for (const auto& [name, value] : o.load_options().dims) out.push_back({name, value, false});
  for (const auto& a : m.assumed_dims) out.push_back({a.symbol, a.value, true});
  return out;
}

int64_t default_opset(const fx::ModelInfo& info) {
  for (const auto& [domain, version] : info.opsets)
    if (domain.empty() || domain == "ai.onnx") return version;
  return 0;
}

}  // namespace fxc
