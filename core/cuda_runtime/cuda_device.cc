// SPDX-License-Identifier: Apache-2.0
#include "cuda_runtime/cuda_device.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "util/error.h"

namespace fx::cuda {

std::string CudaDeviceInfo::label() const {
  return fmt::format("cuda:{} {} ({}, {} SMs, {:.1f} GiB)", index, name, arch(), sm_count,
                     static_cast<double>(memory_bytes) / (1024.0 * 1024 * 1024));
}

std::vector<CudaDeviceInfo> list_cuda_devices(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    if (why)
      *why = e != cudaSuccess ? std::string("cudaGetDeviceCount says ") + cudaGetErrorString(e)
                              : "cudaGetDeviceCount says 0 devices";
    return {};
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::vector<CudaDeviceInfo> out;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    CudaDeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.sm_major = p.major;
    d.sm_minor = p.minor;
    d.sm_count = p.multiProcessorCount;
    d.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
    d.l2_bytes = p.l2CacheSize;
    d.shared_memory_per_sm = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
    d.driver_version = driver;
    d.runtime_version = runtime;
    out.push_back(std::move(d));
  }
  return out;
}

CudaDeviceInfo require_cuda_device(int index) {
  std::string why;
  const auto devices = list_cuda_devices(&why);
  if (devices.empty()) throw Error("no CUDA device: " + why);
  if (index < 0 || index >= static_cast<int>(devices.size()))
    throw Error("cuda:" + std::to_string(index) + ": this machine has " +
                std::to_string(devices.size()) +
                " CUDA device(s) (cuda:0 .. cuda:" + std::to_string(devices.size() - 1) + ")");
  return devices[static_cast<std::size_t>(index)];
}

}  // namespace fx::cuda
