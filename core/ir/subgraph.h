// SPDX-License-Identifier: Apache-2.0
#pragma once
// Control flow in the IR: nodes that hold subgraphs (If's then/else branches, Loop's
// and Scan's body, SequenceMap's body).
//
// A subgraph is a Graph of its own, held by the node's graph attribute (SubgraphRef).
// It reads values of the enclosing graph by name: at import those names become the
// subgraph's outer references (Graph::outer_refs, Value::is_outer_ref) and, in the
// enclosing graph, implicit inputs of the node (Node::implicit_inputs) appended after
// its ONNX inputs. Every walk over consumers therefore sees a use inside a body, and
// executing the node means feeding the body its outer references by name.

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace fx {

// The node's subgraphs with their attribute names ("then_branch", "body"), in
// attribute-name order.
std::vector<std::pair<std::string, const Graph*>> subgraphs_of(const Node& node);
bool has_subgraphs(const Node& node);
// Inputs the ONNX node has (the implicit ones left out).
int explicit_input_count(const Node& node);
// Nodes of `g` and of every subgraph nested in it.
int64_t total_node_count(const Graph& g);

}  // namespace fx
