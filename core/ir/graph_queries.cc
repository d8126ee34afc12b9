// SPDX-License-Identifier: Apache-2.0
#include "ir/graph_queries.h"

#include <algorithm>
#include <set>

namespace fx {

std::vector<ValueId> group_external_inputs(const Graph& g, const std::vector<NodeId>& nodes) {
  std::set<ValueId> produced;
  for (NodeId n : nodes)
    for (ValueId v : g.node(n).outputs) produced.insert(v);
  std::vector<ValueId> out;
  for (NodeId n : nodes)
    for (ValueId v : g.node(n).inputs)
      if (v != kNoValue && !produced.count(v) && std::find(out.begin(), out.end(), v) == out.end())
        out.push_back(v);
  return out;
}

std::vector<ValueId> group_external_outputs(const Graph& g, const std::vector<NodeId>& nodes) {
  std::set<NodeId> members(nodes.begin(), nodes.end());
  std::vector<ValueId> out;
  for (NodeId n : nodes) {
    for (ValueId v : g.node(n).outputs) {
      if (v == kNoValue) continue;
      const Value& val = g.value(v);
      bool outside = val.is_graph_output;
      for (NodeId c : val.consumers) outside = outside || !members.count(c);
      if (outside) out.push_back(v);
    }
  }
  return out;
}

std::shared_ptr<TensorData> constant_data(const Graph& g, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& val = g.value(v);
  if (val.is_constant()) return val.data;
  if (val.producer == kNoNode) return nullptr;
  const Node& n = g.node(val.producer);
  if (n.op_type != "Constant" || !n.domain.empty() || !n.attrs.has("value")) return nullptr;
  return n.attrs.get_tensor("value");
}

}  // namespace fx
