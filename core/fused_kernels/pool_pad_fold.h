// SPDX-License-Identifier: Apache-2.0
#pragma once
// A zero Pad that only an AveragePool reads, folded into the pool (ONNX Runtime's
// PadFusion): PyTorch exports avg_pool2d(padding=p, count_include_pad=True) that way
// (Inception's pooling branches), and some exporters emit Pads of nothing before a pool
// (DenseNet's transitions). Apart, the Pad copies the whole tensor, and its NCHW-only
// kernel breaks the layout plan's NHWC chain through the block (conv_layout_plan.h);
// folded, the pool's own pads (counted in the divisor) do the same work in one pass, on
// either layout (nhwc_max_pool.h).
//
//   fold_pads_into_pools(g, steps);   // before plan_conv_layouts
//   folded_average_pool(g, s);        // the pool node a folded step computes

#include <memory>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

namespace fx {

// The AveragePool that step `s` computes: its lone AveragePool node, or, for a step of a
// foldable Pad and its AveragePool, a copy of the pool node with the Pad's pads added to
// its own, count_include_pad set where the Pad pads anything, and the Pad's input as its
// input. Nullopt for other steps.
std::optional<Node> folded_average_pool(const Graph& g, const Step& s);

// Merges every lone Pad step (mode constant, value 0, non-negative pads on the last two
// axes only of a rank-4 float32 tensor) whose one reader is a lone AveragePool step
// (pads and count_include_pad compatible: the pool pads nothing itself or counts its
// pads; no ceil_mode unless the Pad pads nothing) into one step running the pool with
// the pads merged. Returns how many were merged.
int fold_pads_into_pools(const Graph& g, std::vector<Step>& steps, int64_t opset = 0);

// The runtime's (NCHW) kernel of a step the layout plan may give an NHWC kernel: its
// lone node's, a folded Pad + AveragePool's (folded_average_pool), a BatchNormalization
// (+ Relu) step's NCHW pass (nhwc_batch_norm.h), or a QDQ MaxPool group's MaxPool on the
// 8-bit values (qdq_int8_kernel.cc).
std::shared_ptr<Kernel> make_runtime_step_kernel(const Graph& g, const Step& s, int64_t opset = 0);

}  // namespace fx
