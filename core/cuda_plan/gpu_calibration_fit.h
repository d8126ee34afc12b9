// SPDX-License-Identifier: Apache-2.0
#pragma once
// `fxc calibrate --device cuda`: what was measured on the GPU (cuda_runtime/
// cuda_calibration.h) turned into a device profile that replaces the datasheet one for
// that GPU. Kept apart from the measuring so that the arithmetic is tested without a GPU.

#include <cstdint>
#include <string>

#include "device/device_profile.h"

namespace fx::cuda {

// Medians of timed repetitions on one device.
struct GpuMeasurements {
  std::string device_name;  // cudaDeviceProp::name
  std::string driver;       // "driver 12080, runtime 13000"
  int sm_count = 0;
  int64_t shared_memory_per_sm = 0, l2_bytes = 0;
  // Bytes read + written per second.
  double copy_bytes_per_s = 0;         // the strided-copy kernel, contiguous (the floor)
  double elementwise_bytes_per_s = 0;  // a generated elementwise chain
  double reduction_bytes_per_s = 0;    // a generated Softmax row kernel
  double transpose_bytes_per_s = 0;    // the strided copy as a 2-D transpose
  double launch_overhead_s = 0;        // per launch of an empty-sized kernel, back to back
  double matmul_flops_per_s = 0;       // cuBLASLt float32 (no TF32)
  double conv_flops_per_s = 0;         // cuDNN float32 3x3 convolution
  double depthwise_bytes_per_s = 0;    // cuDNN 3x3 max pooling (windowed, memory-bound)
};

// Throws fx::Error when a figure the profile needs is missing (zero or negative).
DeviceProfile gpu_profile_from_measurements(const GpuMeasurements& m, const std::string& name,
                                            const std::string& date);

// "nvidia-h100" for an "NVIDIA H100 80GB HBM3", else "cuda-" + the name lowercased with
// dashes: the profile name a calibration saves under.
std::string gpu_profile_name(const std::string& device_name);

}  // namespace fx::cuda
