// SPDX-License-Identifier: Apache-2.0
#pragma once
// `--device` of `fxc profile` / `fxc calibrate`: "cpu", "cuda" (device 0) or "cuda:N".

#include <string>

namespace fx::cuda {

struct DeviceSpec {
  bool cuda = false;
  int index = 0;  // the CUDA device ordinal
  std::string str() const { return cuda ? "cuda:" + std::to_string(index) : "cpu"; }
};

// Throws fx::Error for anything else, saying what is accepted.
DeviceSpec parse_device_spec(const std::string& text);

}  // namespace fx::cuda
