// SPDX-License-Identifier: Apache-2.0
#pragma once
// MatMul + generated epilogue in one step, part by part (the seeds' "UB fusion"): the
// MatMul's output is cut into parts, each one oneDNN matmul primitive run on the
// runtime's thread pool (as the runtime's MatMul, runtime/dnnl_parts.h), and each
// part's epilogue runs on the same thread right after its matmul, over the rows (or
// columns) just written, while they are still in cache. The MatMul's output does not
// go through memory between two passes over the whole tensor.
//
//   auto k = make_matmul_epilogue_kernel(g, anchor, lowered, gen, step_in, step_out, &why);
//   if (!k) ...  // `why` says why; run the anchor and the epilogue one after the other
//
// Constant weights [K, N]: parts cut the rows (the MatMul's leading axes) along the
// epilogue's cut axis (GeneratedKernel::cut_axis); a single row (M = 1) is cut into
// column slices, each with its own slice of the weights. Weights that are an input of
// the same batch dims (attention): parts cut the batch along the cut axis. Otherwise
// (e.g. a reduction over a single row) the epilogue runs after all parts.

#include <memory>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "codegen/kernel_ir.h"
#include "ir/graph.h"
#include "runtime/kernel.h"

namespace fx {

// The step's kernel for MatMul `anchor` followed by the generated `epilogue` (`gen`
// compiled from it), with the step's inputs and outputs (ctx order). nullptr with
// `why` set when it does not apply: the anchor is not a MatMul with constant 2-D
// float32 weights and an input of rank >= 2 (or two inputs of the same rank >= 3), or
// the epilogue does not read the MatMul's output whole (unbroadcast, of the reference
// shape's rank).
std::shared_ptr<Kernel> make_matmul_epilogue_kernel(const Graph& g, NodeId anchor,
                                                    const LoweredGroup& epilogue,
                                                    std::shared_ptr<GeneratedKernel> gen,
                                                    const std::vector<ValueId>& step_inputs,
                                                    const std::vector<ValueId>& step_outputs,
                                                    std::string* why);

}  // namespace fx
