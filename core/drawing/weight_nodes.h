// SPDX-License-Identifier: Apache-2.0
#pragma once
// Weights as nodes, for "View > Constants as Nodes": a copy of the drawn graph in which
// every initializer that an op reads gets a Constant node of its own producing it,
// appended after the graph's nodes (so the model's node ids, which the cost, plan and
// analysis index, stay as they are, as for inlined subgraph bodies). The scope tree
// folds these nodes into their consumers' boxes unless told not to (scope_tree.h).

#include "ir/graph.h"

namespace fx::drawing {

Graph with_weight_nodes(const Graph& graph);

}  // namespace fx::drawing
