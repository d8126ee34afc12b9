// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs fp32-only kernels on float16/bfloat16 tensors: half inputs are widened to
// float32 before the kernel sees them and its float32 outputs narrowed to the half
// type the graph declares for them, so every kernel serves half models without
// knowing the type, and tensors between steps keep their true width (2 bytes).
// make_kernel wraps only nodes that touch a half (or undeclared) type; for the
// rest nothing changes.

#include <memory>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace fx {

// `out_types[i]`: the dtype the graph declares for output i (Undefined when it
// does not say: then a float32 result of a step that read a half input becomes
// that half type).
std::shared_ptr<Kernel> wrap_half_adapter(std::shared_ptr<Kernel> inner,
                                          std::vector<DType> out_types);

// True when `g` has float16/bfloat16 initializers.
bool has_half_constants(const Graph& g);
// A copy of `g` whose float16/bfloat16 initializers are float32: kernels that
// prepare weights when they are built (oneDNN's reordered weights) see float32, and
// weights are widened once instead of at every run.
Graph widen_half_constants(const Graph& g);

}  // namespace fx
