// SPDX-License-Identifier: Apache-2.0
#pragma once
// The canonical passes one by one (canonical.h lists them and their order). Each reads
// a graph and returns the rewritten one, saying in `record` what it removed.

#include "ir/graph.h"
#include "transforms/canonical.h"

namespace fx::transforms {

Graph constant_to_initializer(const Graph& g, PassRecord& record);
Graph half_to_float(const Graph& g, PassRecord& record);  // half_to_float.cc
Graph identity_elimination(const Graph& g, PassRecord& record);
Graph shape_folding(const Graph& g, PassRecord& record);
Graph constant_folding(const Graph& g, PassRecord& record);
Graph conv_bn_folding(const Graph& g, PassRecord& record);
Graph dead_node_elimination(const Graph& g, PassRecord& record);
Graph merge_duplicate_initializers(const Graph& g, PassRecord& record);

}  // namespace fx::transforms
