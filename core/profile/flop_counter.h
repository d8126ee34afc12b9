// SPDX-License-Identifier: Apache-2.0
#pragma once
// Floating-point operations of one node, counted from the dims of its actual inputs
// and outputs (a multiply-add is 2). Used for achieved GFLOP/s in the profiler; it
// does not depend on the analysis layer's cost model.
//
// Conv/ConvTranspose, MatMul, Gemm: 2 x multiply-adds (+ bias). Elementwise and
// activation ops: one per output element. BatchNormalization 2, Softmax 5,
// LayerNormalization 8 per element; reductions and pools: one per element read.
// Pure data movement (Reshape, Transpose, Concat, Gather, ...): 0, as are ops it
// does not know.

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attribute.h"

namespace fx {

using DimsList = std::vector<std::vector<int64_t>>;

// `inputs` has an empty entry for an omitted optional input.
int64_t count_flops(const std::string& op_type, const Attributes& attrs, const DimsList& inputs,
                    const DimsList& outputs);

}  // namespace fx
