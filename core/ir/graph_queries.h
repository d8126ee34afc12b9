// SPDX-License-Identifier: Apache-2.0
#pragma once
// Questions about a graph that the kernel builders of several layers ask (the generated
// kernels' lowering, codegen/kernel_ir.h, and the hand-written fused kernels,
// fused_kernels/): which values a set of nodes exchanges with the rest of the graph, and
// which values are known before running.

#include <memory>
#include <vector>

#include "ir/graph.h"

namespace fx {

// The values `nodes` read from outside / that are read outside them (or are graph
// outputs), in first-use / production order.
std::vector<ValueId> group_external_inputs(const Graph& g, const std::vector<NodeId>& nodes);
std::vector<ValueId> group_external_outputs(const Graph& g, const std::vector<NodeId>& nodes);

// The data of a value known before running: an initializer, or the output of a
// Constant node (its `value` attribute); null otherwise.
std::shared_ptr<TensorData> constant_data(const Graph& g, ValueId v);

}  // namespace fx
