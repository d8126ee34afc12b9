// SPDX-License-Identifier: Apache-2.0
#pragma once
// The options every subcommand that opens a model takes, and the header lines it
// prints about how the model was read:
//
//   --dim NAME=N          bind a symbolic dim (others get assumed values, dim_defaults.h)
//   --disable-pass NAME   skip one canonical pass (transforms/canonical.h)
//   --enable-pass NAME    run a pass even when --disable-pass named it (every pass is on
//                         by default; conv-bn-folding was off before and scripts name it)
//   --no-canonicalize     analyse the graph exactly as imported
//
//   assumed: batch=1, seq=128; bind with --dim NAME=V
//   canonical: 139 Constant -> initializers, removed 72 Identity (...); 500 -> 289 nodes

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/fusion_plan.h"
#include "onnx/model_loader.h"

namespace fxc {

struct ModelOptions {
  std::vector<std::string> dims;
  std::vector<std::string> disabled_passes;
  std::vector<std::string> enabled_passes;
  bool no_canonicalize = false;

  fx::LoadOptions load_options() const;
  // The same options as arguments, for a child fxc that must read the model the same way.
  std::vector<std::string> child_args() const;
};

void add_model_options(CLI::App* cmd, ModelOptions& o);

// The options with the canonical passes a fusion plan was made without (its
// disabled_passes) disabled too, unless --enable-pass names one; says so on stderr when
// that adds a pass. `plan` empty: the options unchanged. Throws as FusionPlan::load.
ModelOptions with_plan_passes(const ModelOptions& o, const std::string& plan);

// The passes these options disable (--disable-pass less --enable-pass), for a plan.
std::vector<std::string> plan_disabled_passes(const ModelOptions& o);

// load_onnx with the options.
fx::LoadedModel load_model(const std::string& path, const ModelOptions& o);

// The "assumed:" and "canonical:" lines (the first only when a dim was assumed).
void print_model_header(const fx::LoadedModel& m, std::FILE* out = stdout);
// {"assumed_dims": {NAME: V}, "canonical": {"summary", "nodes_before", "nodes_after",
//  "passes": [{name, ran, nodes_removed, weights}]}}
nlohmann::json model_header_json(const fx::LoadedModel& m);
// Every dim the model was read with, user-bound and assumed, as NAME=V.
std::vector<std::string> dim_bindings(const fx::LoadedModel& m, const ModelOptions& o);
// The same for a fusion plan, each marked assumed or not.
std::vector<fx::PlanDim> plan_dims(const fx::LoadedModel& m, const ModelOptions& o);
// The model's default-domain (ai.onnx) opset, 0 when it imports none: kernels of ops
// that changed meaning (RoiAlign before 16, Softmax before 13) follow it.
int64_t default_opset(const fx::ModelInfo& info);

}  // namespace fxc
