// SPDX-License-Identifier: Apache-2.0
#include "cuda_plan/gpu_timing.h"

#include <algorithm>

#include "cuda_plan/kernel_params.h"
#include "util/error.h"

namespace fx::cuda {

namespace {

int64_t bytes_of(const Graph& g, const std::vector<ValueId>& vs) {
  int64_t b = 0;
  for (ValueId v : vs)
    if (v != kNoValue)
      if (auto s = g.value(v).byte_size()) b += *s;
  return b;
}

}  // namespace

int64_t launch_bytes_read(const Graph& g, const Launch& l) {
  return l.kind == LaunchKind::View ? 0 : bytes_of(g, l.inputs);
}
int64_t launch_bytes_written(const Graph& g, const Launch& l) {
  return l.kind == LaunchKind::View ? 0 : bytes_of(g, l.outputs);
}

int64_t launch_flops(const Graph& g, const Launch& l) {
  try {
    if (l.kind == LaunchKind::Conv) return conv_params(g, l.anchor).flops();
    if (l.kind == LaunchKind::Matmul) return matmul_params(g, l.anchor).flops();
  } catch (const Error&) {
    // Not runnable anyway; the executor reports it.
  }
  return 0;
}

ProfileResult gpu_profile_result(const Graph& graph, const LaunchPlan& plan,
                                 const DeviceMemoryPlan& memory,
                                 const std::vector<GpuRunTimes>& runs, const std::string& device,
                                 int warmup) {
  if (runs.empty()) throw Error("CUDA profile: no timed runs");
  ProfileResult r;
  r.timeline.source = "fusion-explorer cuda";
  r.timeline.device = device;
  r.timeline.lane_names[0] = "cuda stream 0";
  r.device = device;
  r.runs = static_cast<int>(runs.size());
  r.warmup = warmup;
  r.threads = 1;
  r.peak_activation_bytes = memory.arena_bytes;
  r.total_activation_bytes = memory.unshared_bytes;
  const std::size_t n = plan.launches.size();
  for (std::size_t run = 0; run < runs.size(); ++run) {
    const GpuRunTimes& t = runs[run];
    if (t.start_us.size() != n || t.duration_us.size() != n)
      throw Error("CUDA profile: run " + std::to_string(run) + " has " +
                  std::to_string(t.duration_us.size()) + " launch times for " + std::to_string(n) +
                  " launches");
    r.run_ms.push_back(t.wall_ms);
    for (std::size_t i = 0; i < n; ++i) {
      const Launch& l = plan.launches[i];
      if (l.kind == LaunchKind::View) continue;
      KernelEvent e;
      e.name = l.name;
      e.op_types = l.op_types;
      for (NodeId id : l.nodes) e.nodes.push_back(graph.node(id).name);
      if (l.group >= 0) e.group_id = l.group;
      e.run = static_cast<int>(run);
      e.start_us = t.start_us[i];
      e.duration_us = t.duration_us[i];
      e.bytes_read = launch_bytes_read(graph, l);
      e.bytes_written = launch_bytes_written(graph, l);
      e.flops = launch_flops(graph, l);
      e.args["provider"] = launch_kind_name(l.kind);
      if (!l.epilogue.empty()) e.args["epilogue"] = l.epilogue.str();
      r.timeline.events.push_back(std::move(e));
    }
  }
  r.median_ms = median(r.run_ms);
  r.kernels = aggregate_kernels(r.timeline);
  return r;
}

}  // namespace fx::cuda
