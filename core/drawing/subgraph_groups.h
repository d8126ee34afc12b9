// SPDX-License-Identifier: Apache-2.0
#pragma once
// Control flow in the drawing: an If, Loop or Scan is drawn as an expandable group
// holding the node itself and one sub-group per branch/body with the subgraph's ops.
//
// The scope tree draws one Graph, so the subgraphs are inlined into a copy made for
// drawing only: the copy keeps every node and value of the model at the same id (so
// NodeIds from the analysis stay valid for the model's own nodes) and appends each
// subgraph's nodes after them, named "<node>/<attribute>/<op name>". The
// control-flow node's scope gains a component (its name), its subgraphs' nodes one
// more (the attribute: "then_branch", "body"); a body node that reads an outer value
// reads the same value in the copy, so the edge runs from the outer producer into
// the group. Nested control flow nests the same way.

#include "ir/graph.h"

namespace fx::drawing {

// The graph itself when it has no control flow; otherwise the copy described above.
Graph inline_subgraphs_for_drawing(const Graph& graph);

// For a node of the copy: the model's node (id < graph.node_count()) or, for an
// inlined node, kNoNode.
inline NodeId model_node(const Graph& model, NodeId drawn) {
  return drawn < static_cast<NodeId>(model.node_count()) ? drawn : kNoNode;
}

}  // namespace fx::drawing
