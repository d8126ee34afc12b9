// SPDX-License-Identifier: Apache-2.0
#include "drawing/subgraph_groups.h"

#include <algorithm>
#include <map>
#include <string>

#include "ir/subgraph.h"

namespace fx::drawing {

namespace {

// A scope component from a node name: "/encoder/If_3" -> "encoder.If_3" (a '/'
// would split it into several groups).
std::string component(const std::string& name) {
  std::string s = name;
  while (!s.empty() && s.front() == '/') s.erase(s.begin());
  for (char& c : s)
    if (c == '/') c = '.';
  return s.empty() ? "node" : s;
}

// An If's then_branch before its else_branch, the order the node is read in (the
// attributes come sorted by name); other subgraphs in attribute order.
std::vector<std::pair<std::string, const Graph*>> in_reading_order(const Node& n) {
  auto subs = subgraphs_of(n);
  std::stable_partition(subs.begin(), subs.end(),
                        [](const auto& s) { return s.first == "then_branch"; });
  return subs;
}

std::string join(const std::string& scope, const std::string& part) {
  return scope.empty() ? part : scope + "/" + part;
}

// Appends `body`'s nodes to `out`, their values renamed under `prefix`; values the
// body reads from outside resolve through `outer` (name -> id in `out`).
void inline_body(Graph& out, const Graph& body, const std::string& prefix, const std::string& scope,
                 const std::map<std::string, ValueId>& outer) {
  std::map<std::string, ValueId> names = outer;  // this body's names shadow nothing
  std::vector<ValueId> id_of(body.value_count(), kNoValue);
  for (std::size_t i = 0; i < body.value_count(); ++i) {
    const Value& v = body.value(ValueId(i));
    if (v.is_outer_ref) {
      auto it = outer.find(v.name);
      if (it != outer.end()) {
        id_of[i] = it->second;
        continue;
      }
    }
    Value copy;
    copy.name = prefix + v.name;
    copy.kind = v.kind;
    copy.dtype = v.dtype;
    copy.shape = v.shape;
    copy.data = v.data;
    id_of[i] = out.add_value(std::move(copy));
    names[v.name] = id_of[i];
  }
  for (const Node& n : body.nodes()) {
    Node copy;
    copy.name = prefix + n.name;
    copy.op_type = n.op_type;
    copy.domain = n.domain;
    copy.attrs = n.attrs;
    copy.shape_unknown = n.shape_unknown;
    const bool control_flow = has_subgraphs(n);
    const std::string own = join(scope, component(n.name));
    copy.scope = control_flow ? own : scope;
    for (ValueId in : n.inputs) copy.inputs.push_back(in == kNoValue ? kNoValue : id_of[in]);
    for (ValueId o : n.outputs) copy.outputs.push_back(o == kNoValue ? kNoValue : id_of[o]);
    copy.implicit_inputs = n.implicit_inputs;
    out.add_node(std::move(copy));
    for (const auto& [attr, sub] : in_reading_order(n))
      inline_body(out, *sub, prefix + n.name + "/" + attr + "/", join(own, attr), names);
  }
}

}  // namespace

Graph inline_subgraphs_for_drawing(const Graph& graph) {
  bool any = false;
  for (const Node& n : graph.nodes()) any = any || has_subgraphs(n);
  if (!any) return graph;
  Graph out = graph;
  std::map<std::string, ValueId> names;
  for (std::size_t i = 0; i < graph.value_count(); ++i)
    if (!graph.value(ValueId(i)).name.empty())
      names.emplace(graph.value(ValueId(i)).name, ValueId(i));
  for (std::size_t i = 0; i < graph.node_count(); ++i) {
    const Node& n = graph.node(NodeId(i));
    if (!has_subgraphs(n)) continue;
    const std::string own = join(n.scope, component(n.name));
    out.node(NodeId(i)).scope = own;
    for (const auto& [attr, sub] : in_reading_order(n))
      inline_body(out, *sub, n.name + "/" + attr + "/", join(own, attr), names);
  }
  return out;
}

}  // namespace fx::drawing
