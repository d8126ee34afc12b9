// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a before/after profile runs (`fxc profile --device`): this layer's profiler is
// the CPU runtime's; `--device cuda[:N]` is routed to the CUDA executor before it
// (app/fxc/cuda_device_cli.h, core/cuda_runtime/), so anything else reaching here is an
// error.

#include <string>

namespace fx {

// Returns for "cpu"; throws fx::Error, saying what is accepted, for anything else.
void require_cpu_execution(const std::string& device);

}  // namespace fx
