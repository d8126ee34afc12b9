// SPDX-License-Identifier: Apache-2.0
#include "ir/subgraph.h"

#include <variant>

namespace fx {

std::vector<std::pair<std::string, const Graph*>> subgraphs_of(const Node& node) {
  std::vector<std::pair<std::string, const Graph*>> out;
  for (const auto& [name, attr] : node.attrs.all())
    if (const auto* ref = std::get_if<SubgraphRef>(&attr); ref && ref->graph)
      out.emplace_back(name, ref->graph.get());
  return out;
}

bool has_subgraphs(const Node& node) {
  for (const auto& [name, attr] : node.attrs.all())
    if (const auto* ref = std::get_if<SubgraphRef>(&attr); ref && ref->graph) return true;
  return false;
}

int explicit_input_count(const Node& node) {
  return static_cast<int>(node.inputs.size()) - node.implicit_inputs;
}

int64_t total_node_count(const Graph& g) {
  int64_t n = static_cast<int64_t>(g.node_count());
  for (const Node& node : g.nodes())
    for (const auto& [name, sub] : subgraphs_of(node)) n += total_node_count(*sub);
  return n;
}

}  // namespace fx
