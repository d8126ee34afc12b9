// SPDX-License-Identifier: Apache-2.0
#pragma once
// `fxc calibrate --device cuda[:N]`: bandwidth, launch overhead and the kernel classes
// measured on the GPU through the executor itself (each figure is one small graph run
// by CudaExecutor and timed with CUDA events), then fitted into a device profile by
// cuda_plan/gpu_calibration_fit.h.

#include <functional>
#include <string>

#include "cuda_plan/gpu_calibration_fit.h"

namespace fx::cuda {

struct GpuCalibrationOptions {
  int device = 0;
  int runs = 20;
  int64_t stream_mib = 256;  // the memory-bound kernels' input size
  std::function<void(const std::string&)> progress;
};

GpuMeasurements measure_gpu(const GpuCalibrationOptions& options);

}  // namespace fx::cuda
