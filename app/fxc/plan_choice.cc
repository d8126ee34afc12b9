// SPDX-License-Identifier: Apache-2.0
#include "plan_choice.h"

#include <fmt/format.h>

#include "analysis/fusion_finder.h"
#include "calibration/host_device.h"
#include "codegen/group_kernels.h"
#include "util/error.h"

namespace fxc {

fx::FusionPlan plan_for(const PlanChoice& c, const fx::Graph& g) {
  if (!c.plan.empty()) {
    fx::FusionPlan p = fx::FusionPlan::load(c.plan);
    for (const auto& m : p.bind(g)) {
      if (c.name_the_plan)
        fmt::print(stderr, "fxc: plan {}: node '{}' is not in the model; its group is dropped\n",
                   c.plan, m);
      else
        fmt::print(stderr, "fxc: plan node '{}' is not in the model\n", m);
    }
    return p;
  }
  if (c.opt_level < 0) throw fx::Error("give --plan PLAN or --opt-level N");
  fx::FusionOptions fo;
  fo.opt_level = c.opt_level;
  fo.threshold = c.threshold;
  fx::use_generated_kernels(fo, g);
  fx::FusionPlan p(fx::analyze_fusion(g, fx::resolve_device(c.device, g), fo), c.model);
  p.accept_all_above(c.threshold);
  return p;
}

}  // namespace fxc
