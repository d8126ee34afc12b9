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
};

// Loads and binds the plan (a node missing from `g` drops its group, with a line on
// stderr), or analyses `g`. Throws fx::Error with neither a plan nor a level.
fx::FusionPlan plan_for(const PlanChoice& c, const fx::Graph& g);

}  // namespace fxc
