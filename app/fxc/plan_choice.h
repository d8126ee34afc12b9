// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fusion plan a subcommand works on: a plan file (--plan), or the model analysed
// at --opt-level with every group above --threshold accepted. Shared by profile,
// codegen and export, which take the same options.

#include <string>

#include "analysis/fusion_plan.h"

namespace fxc {

struct PlanChoice {
  std::string plan;                 // --plan; wins over opt_level
  int opt_level = -1;               // --opt-level; -1 with neither: an error
  double threshold = 0.30;          // --threshold
  std::string device = "cpu-host";  // device profile of the analysis
  std::string model;                // the model's path, the analysed plan's name
  // How a plan node missing from the model is reported on stderr: with the plan's path
  // and "its group is dropped" (profile), or briefly (codegen, export).
  bool name_the_plan = false;
  // --opt-level only: leave out groups the autotune cache measured slower fused on this
  // CPU at `threads` (profile/autotune_cache.h; FX_AUTOTUNE_CACHE=off turns it off).
  bool autotune_cache = true;
  int threads = 0;  // 0: all hardware threads
};

// What the autotune cache did for an analysed plan (said in fxc's JSON and text output).
struct AutotuneUse {
  bool enabled = false;     // consulted: --opt-level, not switched off
  std::string path, error;  // error: the cache could not be read (the plan ignores it)
  std::size_t entries = 0;
  int consulted = 0, rejected = 0;
};

// Hardware threads for a --threads of 0.
int resolved_threads(int threads);

// Loads and binds the plan (a node missing from `g` drops its group, with a line on
// stderr), or analyses `g`. Throws fx::Error with neither a plan nor a level.
// With `use`, says what the autotune cache did.
fx::FusionPlan plan_for(const PlanChoice& c, const fx::Graph& g, AutotuneUse* use = nullptr);

}  // namespace fxc
