// SPDX-License-Identifier: Apache-2.0
#pragma once
// C++ source for lowered groups (kernel_ir.h). The source depends on nothing but the
// C/C++ standard library and OpenMP, has one extern "C" entry point per group:
//
//   void <entry>(const float* const* inputs, float* const* outputs,
//                const int64_t* dims,   // the reference shape, `rank` dims
//                int threads);
//
// and names the original nodes in comments so that a crash in a generated kernel can
// be traced back to the model. Rows run in parallel (OpenMP); the inner loop over a
// row is contiguous and carries `#pragma omp simd`; a row kernel's intermediates that
// are needed by a later pass over the row live in a per-thread row buffer (the row
// stays in L1/L2 between passes).

#include <string>
#include <vector>

#include "codegen/kernel_ir.h"

namespace fx {

// One group's function (no includes). Throws fx::Error when the group cannot be
// scheduled (e.g. a reduction of a per-row scalar).
std::string emit_cpp_function(const LoweredGroup& g);

// A whole translation unit: the common prelude and each group's function.
std::string emit_cpp_source(const std::vector<LoweredGroup>& groups);

// The prelude alone: includes and the helpers the kernels call, the text of
// codegen/prelude/fx_generated_prelude.h (embedded at build time).
std::string emit_cpp_prelude();

}  // namespace fx
