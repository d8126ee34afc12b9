// SPDX-License-Identifier: Apache-2.0
#include "plan_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "analysis/fusion_finder.h"
#include "calibration/host_device.h"
#include "calibration/machine_facts.h"
#include "codegen/group_kernels.h"
#include "profile/autotune_cache.h"
#include "util/error.h"

namespace fxc {

int resolved_threads(int threads) {
  if (threads > 0) return threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

fx::FusionPlan plan_for(const PlanChoice& c, const fx::Graph& g, AutotuneUse* use) {
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
  fx::use_generated_kernels(fo);
  fx::FusionPlan p(fx::analyze_fusion(g, fx::resolve_device(c.device, g), fo), c.model);
  p.accept_all_above(c.threshold);
  if (c.autotune_cache && fx::AutotuneCache::enabled()) {
    AutotuneUse u;
    u.enabled = true;
    u.path = fx::AutotuneCache::default_path(fx::host_machine_facts().cpu_model);
    try {
      const fx::AutotuneCache cache = fx::AutotuneCache::open(u.path);
      u.entries = cache.size();
      const fx::AutotuneVerdict v =
          fx::reject_autotuned_slower(p, g, resolved_threads(c.threads), cache);
      u.consulted = v.consulted;
      u.rejected = v.rejected;
    } catch (const fx::FileError& e) {
      u.error = e.what();
      fmt::print(stderr, "fxc: autotune cache ignored: {}\n", e.what());
    }
    if (use) *use = u;
  }
  return p;
}

}  // namespace fxc
