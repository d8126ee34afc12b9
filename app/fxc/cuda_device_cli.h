// SPDX-License-Identifier: Apache-2.0
#pragma once
// The `--device cuda[:N]` routes of fxc profile and fxc calibrate, to the CUDA executor
// (core/cuda_runtime). Without it in this build, or without a GPU, each says why
// ("no CUDA device: cudaGetDeviceCount says ...") as an fx::Error.

#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "cuda_plan/device_spec.h"
#include "profile/before_after.h"
#include "profile/profiler.h"

namespace fxc {

struct CudaRunOptions {
  fx::cuda::DeviceSpec device;
  fx::ProfileOptions profile;  // runs, warmup, seed, opset, threads (CPU reference)
  fx::Tolerance tolerance;
  std::string stem;
};

// Throws the reason when `device` cannot run here (no executor in this build, no GPU, no
// such ordinal): checked before a model is read and analysed.
void require_cuda_device(const fx::cuda::DeviceSpec& device);

fx::ProfileResult profile_on_cuda(const fx::Graph& graph, const CudaRunOptions& o);
fx::BeforeAfterResult before_after_on_cuda(const fx::Graph& graph,
                                           const std::vector<const fx::FusionGroup*>& groups,
                                           const CudaRunOptions& o);
// Measures the GPU, writes the profile (`out`, or the cache under its name so that
// --device NAME finds it) and prints a summary; returns the exit code.
int calibrate_cuda(const fx::cuda::DeviceSpec& device, const std::string& out, int runs, bool json);

}  // namespace fxc
