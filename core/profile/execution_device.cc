// SPDX-License-Identifier: Apache-2.0
#include "profile/execution_device.h"

#include "util/error.h"

namespace fx {

void require_cpu_execution(const std::string& device) {
  if (device == "cpu") return;
  throw Error("--device must be cpu, cuda or cuda:N (cuda runs through the CUDA executor), not '" +
              device + "'");
}

}  // namespace fx
