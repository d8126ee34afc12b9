// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a launch plan on one CUDA device: the unfused plan (one kernel per ONNX node) or
// a fused one (the plan's groups), everything on one stream. Set-up does the slow work
// once: device memory (device_memory_plan.h), constants uploaded, cuDNN algorithms
// searched, cuBLASLt algorithms chosen, the generated kernels built with nvcc and loaded.
//
//   CudaExecutor e(graph, build_launch_plan(graph, {}), require_cuda_device(0), "resnet50");
//   std::vector<Tensor> out = e.run(inputs);      // graph outputs, copied to the host
//   GpuRunTimes t = e.timed_run(inputs);          // CUDA events around every launch
//
// Inputs are uploaded before a timed run's first event: times cover the kernels only.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cuda_plan/device_memory_plan.h"
#include "cuda_plan/gpu_timing.h"
#include "cuda_plan/launch_plan.h"
#include "cuda_runtime/cuda_device.h"
#include "ir/graph.h"
#include "runtime/tensor.h"

namespace fx::cuda {

class CudaExecutor {
 public:
  // Throws fx::Error: a launch the libraries refuse, a compile error, out of memory.
  CudaExecutor(const Graph& graph, LaunchPlan plan, const CudaDeviceInfo& device,
               const std::string& stem);
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);
  GpuRunTimes timed_run(const std::map<std::string, Tensor>& inputs);

  const LaunchPlan& plan() const { return plan_; }
  const DeviceMemoryPlan& memory() const { return memory_; }
  const CudaDeviceInfo& device() const { return device_; }

 private:
  struct Impl;
  const Graph& graph_;
  LaunchPlan plan_;
  DeviceMemoryPlan memory_;
  CudaDeviceInfo device_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fx::cuda
