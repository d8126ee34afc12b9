// SPDX-License-Identifier: Apache-2.0
#include "profile/execution_device.h"

#include <filesystem>

#include "util/error.h"

namespace fx {

void require_cpu_execution(const std::string& device) {
  if (device == "cpu") return;
  if (device != "cuda") throw Error("--device must be cpu or cuda, not '" + device + "'");
  std::error_code ec;
  bool gpu = std::filesystem::exists("/dev/nvidia0", ec) ||
             (std::filesystem::exists("/proc/driver/nvidia/gpus", ec) &&
              !std::filesystem::is_empty("/proc/driver/nvidia/gpus", ec));
  if (!gpu)
    throw Error(
        "--device cuda: no NVIDIA GPU found on this machine (no /dev/nvidia0); run with "
        "--device cpu");
  throw Error(
      "--device cuda: a GPU is present, but this build has no CUDA execution path for "
      "before/after yet (the CUDA backend only emits kernel sources); run with --device cpu");
}

}  // namespace fx
