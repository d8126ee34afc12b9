// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where every tensor of a launch plan lives in device memory, in bytes: the CPU runtime's
// lifetime logic (runtime/memory_plan.h: values whose lifetimes do not overlap share a
// slot, views share their root's memory) over the launches instead of the CPU steps,
// with the slots laid out one after another in a single arena. Constants the launches
// read and the graph inputs get regions of their own (uploaded once / per run).
//
// No launch writes over its input on the GPU (a row kernel reads its row in several
// passes), so the in-place handover of the CPU plan is off. Every value needs a static
// shape: a symbolic dim is an error naming the value (fix it with --dim).

#include <cstdint>
#include <vector>

#include "cuda_plan/launch_plan.h"
#include "ir/graph.h"

namespace fx::cuda {

enum class Region { None, Weights, Inputs, Arena };

struct DeviceBuffer {
  Region region = Region::None;
  int64_t offset = 0;  // bytes from the start of its region
  int64_t bytes = 0;
};

struct DeviceMemoryPlan {
  static constexpr int64_t kAlignment = 256;  // cudaMalloc's, and cuBLASLt/cuDNN's wish

  std::vector<DeviceBuffer> buffer_of_value;  // per ValueId
  int64_t weight_bytes = 0, input_bytes = 0, arena_bytes = 0;
  int64_t unshared_bytes = 0;  // the arena's values summed, without reuse
  int slot_count = 0;

  const DeviceBuffer& buffer(ValueId v) const {
    return buffer_of_value[static_cast<std::size_t>(v)];
  }
  // Throws fx::Error naming the value when some value has no static shape.
  static DeviceMemoryPlan build(const Graph& graph, const LaunchPlan& plan);
};

}  // namespace fx::cuda
