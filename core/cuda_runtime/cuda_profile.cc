// SPDX-License-Identifier: Apache-2.0
#include "cuda_runtime/cuda_profile.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <optional>
#include <set>

#include "cuda_plan/launch_plan.h"
#include "cuda_runtime/cuda_device.h"
#include "cuda_runtime/cuda_executor.h"
#include "profile/equivalence.h"
#include "profile/random_inputs.h"
#include "util/error.h"

namespace fx::cuda {

namespace {

std::vector<std::string> output_names(const Graph& g) {
  std::vector<std::string> names;
  for (ValueId v : g.outputs()) names.push_back(g.value(v).name);
  return names;
}

// The CPU runtime on the same inputs: the reference both GPU runs are checked against.
ProfileResult cpu_reference(const Graph& g, const CudaProfileOptions& o) {
  ProfileOptions po;
  po.runs = 1;
  po.warmup = 0;
  po.threads = o.cpu_threads;
  po.opset = o.opset;
  po.seed = o.seed;
  return Profiler(po).profile(g);
}

std::map<std::string, Tensor> inputs_for(const Graph& g, const CudaProfileOptions& o,
                                         const ProfileResult* cpu) {
  return cpu ? cpu->inputs : random_inputs(g, o.seed);
}

ProfileResult finish(const Graph& g, CudaExecutor& e, std::vector<GpuRunTimes> runs,
                     const CudaProfileOptions& o, std::vector<Tensor> outputs,
                     const std::map<std::string, Tensor>& inputs) {
  ProfileResult r = gpu_profile_result(g, e.plan(), e.memory(), runs, e.device().label(), o.warmup);
  r.inputs = inputs;
  r.outputs = std::move(outputs);
  return r;
}

}  // namespace

ProfileResult cuda_profile(const Graph& graph, const CudaProfileOptions& o) {
  const CudaDeviceInfo dev = require_cuda_device(o.device);
  std::optional<ProfileResult> cpu;
  if (o.compare_with_cpu) cpu = cpu_reference(graph, o);
  const auto inputs = inputs_for(graph, o, cpu ? &*cpu : nullptr);
  CudaExecutor e(graph, build_launch_plan(graph, {}), dev, o.stem);
  std::vector<Tensor> out = e.run(inputs);
  for (int i = 0; i < o.warmup; ++i) e.timed_run(inputs);
  std::vector<GpuRunTimes> runs;
  for (int i = 0; i < o.runs; ++i) runs.push_back(e.timed_run(inputs));
  ProfileResult r = finish(graph, e, std::move(runs), o, out, inputs);
  if (cpu) {
    const TensorDiff d = compare_outputs(cpu->outputs, out, output_names(graph), o.tolerance);
    if (!d.match) spdlog::warn("cuda: outputs differ from the CPU runtime's: {}", d.where);
    r.device +=
        d.match ? ", outputs match the CPU runtime" : ", outputs DIFFER from the CPU runtime";
  }
  return r;
}

BeforeAfterResult cuda_before_after(const Graph& graph,
                                    const std::vector<const FusionGroup*>& groups,
                                    const CudaProfileOptions& o) {
  const CudaDeviceInfo dev = require_cuda_device(o.device);
  std::optional<ProfileResult> cpu;
  if (o.compare_with_cpu) cpu = cpu_reference(graph, o);
  const auto inputs = inputs_for(graph, o, cpu ? &*cpu : nullptr);
  CudaExecutor before(graph, build_launch_plan(graph, {}), dev, o.stem);
  LaunchPlan fused = build_launch_plan(graph, groups);
  const std::vector<GroupPlacement> placements = fused.groups;
  CudaExecutor after(graph, std::move(fused), dev, o.stem);
  const std::vector<Tensor> out_before = before.run(inputs), out_after = after.run(inputs);
  for (int i = 0; i < o.warmup; ++i) {
    before.timed_run(inputs);
    after.timed_run(inputs);
  }
  std::vector<GpuRunTimes> tb, ta;
  for (int i = 0; i < o.runs; ++i) {
    // The order flips every round, as on the CPU: a clock ramp hits both alike.
    if (i % 2 == 0) {
      tb.push_back(before.timed_run(inputs));
      ta.push_back(after.timed_run(inputs));
    } else {
      ta.push_back(after.timed_run(inputs));
      tb.push_back(before.timed_run(inputs));
    }
  }
  BeforeAfterResult r;
  r.before = finish(graph, before, std::move(tb), o, out_before, inputs);
  r.after = finish(graph, after, std::move(ta), o, out_after, inputs);
  r.speedup = r.before.median_ms / r.after.median_ms;
  r.tolerance = o.tolerance;
  const auto names = output_names(graph);
  r.outputs = compare_outputs(out_before, out_after, names, o.tolerance);
  if (cpu) {
    const TensorDiff db = compare_outputs(cpu->outputs, out_before, names, o.tolerance);
    const TensorDiff da = compare_outputs(cpu->outputs, out_after, names, o.tolerance);
    r.outputs.merge(db);
    r.outputs.merge(da);
    r.codegen_note = fmt::format(
        "outputs against the CPU runtime: unfused max abs error {:.3g} ({}), fused {:.3g} ({})",
        db.max_abs_error, db.match ? "match" : "DIFFER", da.max_abs_error,
        da.match ? "match" : "DIFFER");
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const FusionGroup& fg = *groups[i];
    const GroupPlacement& gp = placements.at(i);
    GroupMeasurement m = planned_measurement(fg);
    m.status = gp.status;
    m.backend = gp.backend;
    m.reason = gp.reason;
    if (gp.status == "fused") {
      const std::set<std::string> members(fg.nodes.begin(), fg.nodes.end());
      m.before_us = kernels_covering(r.before.kernels, members, /*every_member=*/false);
      m.after_us = kernels_covering(r.after.kernels, members, /*every_member=*/false);
      m.measured_saved_us = m.before_us - m.after_us;
    }
    r.groups.push_back(std::move(m));
  }
  if (!groups.empty()) r.estimate_profile = groups[0]->estimate.profile;
  return r;
}

}  // namespace fx::cuda
