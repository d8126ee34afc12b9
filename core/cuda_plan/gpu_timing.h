// SPDX-License-Identifier: Apache-2.0
#pragma once
// A GPU run's per-launch times (CUDA events around every launch on the stream) turned
// into the same ProfileResult the CPU profiler produces, so that the JSON
// (profile_json.h), the Chrome trace and the GUI's timeline lanes read GPU runs alike.
// Bytes come from the static shapes of what each launch reads and writes, FLOPs from
// the cuDNN / cuBLASLt parameters (0 for memory-bound kernels).

#include <string>
#include <vector>

#include "cuda_plan/device_memory_plan.h"
#include "cuda_plan/launch_plan.h"
#include "profile/profiler.h"

namespace fx::cuda {

// One timed run: per launch (LaunchPlan order; views 0), the start from the run's first
// event and the duration, in microseconds, and the run's wall time.
struct GpuRunTimes {
  std::vector<double> start_us, duration_us;
  double wall_ms = 0;
};

// Throws fx::Error when a run's vectors do not match the plan's launches.
ProfileResult gpu_profile_result(const Graph& graph, const LaunchPlan& plan,
                                 const DeviceMemoryPlan& memory,
                                 const std::vector<GpuRunTimes>& runs, const std::string& device,
                                 int warmup);

// Bytes a launch reads and writes (static shapes; values without one count 0).
int64_t launch_bytes_read(const Graph& graph, const Launch& l);
int64_t launch_bytes_written(const Graph& graph, const Launch& l);
int64_t launch_flops(const Graph& graph, const Launch& l);

}  // namespace fx::cuda
