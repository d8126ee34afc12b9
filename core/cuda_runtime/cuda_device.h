// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which CUDA devices this process sees. Without one (no GPU, no driver) the message
// quotes cudaGetDeviceCount, so that `fxc profile --device cuda` says why.

#include <cstdint>
#include <string>
#include <vector>

namespace fx::cuda {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int sm_major = 0, sm_minor = 0, sm_count = 0;
  int64_t memory_bytes = 0, l2_bytes = 0, shared_memory_per_sm = 0;
  int driver_version = 0, runtime_version = 0;
  std::string arch() const { return "sm_" + std::to_string(sm_major * 10 + sm_minor); }
  std::string label() const;  // "cuda:0 NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)"
};

// The devices present; empty with `why` set ("cudaGetDeviceCount says ...") when none.
std::vector<CudaDeviceInfo> list_cuda_devices(std::string* why = nullptr);
// Device `index`, or fx::Error "no CUDA device: cudaGetDeviceCount says ..." / "cuda:N:
// only M devices".
CudaDeviceInfo require_cuda_device(int index);

}  // namespace fx::cuda
