// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUDA C++ for the same lowered groups as cpp_emitter.h (memory-bound chains and row
// kernels). One block per row for row kernels (block-wide reductions through warp
// shuffles); a grid-stride loop over (row, element) for elementwise chains. A row
// value needed by a later pass is recomputed from the inputs (they sit in L1/L2)
// rather than buffered. Host entry point per group, all pointers on the device:
//
//   extern "C" int <entry>_cuda(const float* const* in, float* const* out,
//                               const int64_t* dims, void* stream);   // cudaError_t

#include <string>
#include <vector>

#include "codegen/kernel_ir.h"

namespace fx {

std::string emit_cuda_source(const std::vector<LoweredGroup>& groups);

}  // namespace fx
