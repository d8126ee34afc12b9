// SPDX-License-Identifier: Apache-2.0
#include "drawing/weight_nodes.h"

namespace fx::drawing {

Graph with_weight_nodes(const Graph& graph) {
  Graph out = graph;
  const std::size_t values = out.value_count();
  for (std::size_t i = 0; i < values; ++i) {
    const Value& v = out.value(ValueId(i));
    if (!v.is_constant() || v.producer != kNoNode || v.consumers.empty() || v.is_graph_output)
      continue;
    Node n;
    n.name = v.name;
    n.op_type = "Constant";
    n.outputs = {ValueId(i)};
    out.add_node(std::move(n));
  }
  return out;
}

}  // namespace fx::drawing
