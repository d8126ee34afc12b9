// SPDX-License-Identifier: Apache-2.0
#pragma once
// Builds a launch plan's CUDA source (cuda_source.h) into a shared library with nvcc and
// loads it, through the generated C++'s compiler cache (codegen/kernel_compiler.h): the
// same source, nvcc and architecture load the cached library. Loading needs only the
// CUDA runtime library, not a GPU, so the host tests check every entry point exists.
//
// nvcc: $FX_NVCC, else /usr/local/cuda/bin/nvcc, else nvcc on PATH. The library links the
// shared cudart, as the executor does, so that both use one runtime.

#include <memory>
#include <string>

#include "codegen/kernel_compiler.h"

namespace fx::cuda {

// The nvcc found, or "" with `why` set.
std::string find_nvcc(std::string* why = nullptr);

// `arch`: "sm_90" (the device's, cuda_device.h), or "native" on a machine with a GPU.
// Throws fx::Error: no nvcc, a compile error, or the library not loading.
std::shared_ptr<CompiledLibrary> build_cuda_library(const std::string& source,
                                                    const std::string& stem,
                                                    const std::string& arch);

}  // namespace fx::cuda
