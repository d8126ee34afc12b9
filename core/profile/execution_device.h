// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a before/after profile can run (`fxc profile --device`): the CPU runtime only,
// for now. Asking for CUDA says why not: no GPU on this machine, or no CUDA execution
// path in this build (the CUDA backend only emits kernel sources).

#include <string>

namespace fx {

// Returns for "cpu"; throws fx::Error, saying why, for anything else.
void require_cpu_execution(const std::string& device);

}  // namespace fx
