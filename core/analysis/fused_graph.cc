// SPDX-License-Identifier: Apache-2.0
#include "analysis/fused_graph.h"

#include <algorithm>
#include <unordered_set>

#include "util/error.h"

namespace fx {
namespace {

std::string common_scope(const std::string& a, const std::string& b) {
  std::size_t end = 0;
  for (std::size_t i = 0;; ++i) {
    const bool a_end = i == a.size() || a[i] == '/';
    const bool b_end = i == b.size() || b[i] == '/';
    if (a_end && b_end && a.compare(0, i, b, 0, i) == 0) end = i;
    if (i == a.size() || i == b.size() || a[i] != b[i]) break;
  }
  return a.substr(0, end);
}

}  // namespace

std::string kernel_op_label(const std::vector<std::string>& ops, std::size_t max_ops) {
  std::string s;
  if (ops.size() <= max_ops) {
    for (std::size_t i = 0; i < ops.size(); ++i) s += (i ? "+" : "") + ops[i];
    return s;
  }
  return ops.front() + "+…+" + ops.back() + " (" + std::to_string(ops.size()) + " ops)";
}

FusedGraph contract_groups(const Graph& g, const std::vector<const FusionGroup*>& groups) {
  FusedGraph f;
  const std::size_t n = g.node_count();
  std::vector<int> group_of_node(n, -1);
  std::vector<std::vector<NodeId>> members(groups.size());
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const FusionGroup& fg = *groups[gi];
    std::vector<NodeId> ids;
    std::string why;
    for (const std::string& name : fg.nodes) {
      const NodeId id = g.find_node(name);
      if (id == kNoNode) {
        why = "node '" + name + "' is not in the graph";
        break;
      }
      if (group_of_node[std::size_t(id)] >= 0) {
        why = "node '" + name + "' is already in group " +
              groups[std::size_t(group_of_node[std::size_t(id)])]->id;
        break;
      }
      ids.push_back(id);
    }
    if (ids.empty() && why.empty()) why = "no members";
    if (!why.empty()) {
      f.skipped.push_back(fg.id + ": " + why);
      continue;
    }
    for (NodeId id : ids) group_of_node[std::size_t(id)] = int(gi);
    members[gi] = std::move(ids);
  }

  // One fused node per group (at its first member in topological order) or per node
  // outside every group; a group whose contraction makes a cycle is dissolved again.
  const std::vector<NodeId> topo = g.topological_order();
  std::vector<std::size_t> topo_pos(n);
  for (std::size_t i = 0; i < topo.size(); ++i) topo_pos[std::size_t(topo[i])] = i;
  for (auto& m : members)
    std::sort(m.begin(), m.end(), [&](NodeId a, NodeId b) { return topo_pos[a] < topo_pos[b]; });

  auto build = [&]() -> bool {
    f.graph = Graph();
    f.originals.clear();
    f.group_of.clear();
    f.kernel_of.assign(n, kNoNode);
    auto value = [&](ValueId v) -> ValueId {
      if (v == kNoValue) return kNoValue;
      const Value& src = g.value(v);
      const ValueId existing = f.graph.find_value(src.name);
      if (existing != kNoValue) return existing;
      Value copy;
      copy.name = src.name;
      copy.dtype = src.dtype;
      copy.shape = src.shape;
      copy.data = src.data;
      const ValueId id = f.graph.add_value(std::move(copy));
      if (src.is_graph_input) f.graph.add_input(id);
      return id;
    };
    for (ValueId v : g.inputs()) value(v);
    std::vector<Node> pending;
    for (NodeId id : topo) {
      const int gi = group_of_node[std::size_t(id)];
      if (gi < 0) {
        const Node& src = g.node(id);
        Node copy = src;
        for (ValueId& v : copy.inputs) v = value(v);
        for (ValueId& v : copy.outputs) v = value(v);
        f.kernel_of[std::size_t(id)] = NodeId(f.originals.size());
        f.originals.push_back({id});
        f.group_of.push_back(-1);
        pending.push_back(std::move(copy));
        continue;
      }
      const std::vector<NodeId>& m = members[std::size_t(gi)];
      if (m.front() != id) continue;  // the group is emitted at its first member
      std::unordered_set<NodeId> in(m.begin(), m.end());
      Node k;
      const FusionGroup& fg = *groups[std::size_t(gi)];
      k.name = fg.id;
      k.domain = kFusedKernelDomain;
      std::vector<std::string> ops;
      std::unordered_set<ValueId> seen_in, seen_out;
      for (std::size_t i = 0; i < m.size(); ++i) {
        const Node& src = g.node(m[i]);
        ops.push_back(src.op_type);
        k.scope = i == 0 ? src.scope : common_scope(k.scope, src.scope);
        for (ValueId v : src.inputs) {
          if (v == kNoValue) continue;
          const NodeId p = g.value(v).producer;
          if ((p == kNoNode || !in.count(p)) && seen_in.insert(v).second)
            k.inputs.push_back(value(v));
        }
        for (ValueId v : src.outputs) {
          const Value& val = g.value(v);
          const bool used_outside =
              val.is_graph_output || std::any_of(val.consumers.begin(), val.consumers.end(),
                                                 [&](NodeId c) { return !in.count(c); });
          if (used_outside && seen_out.insert(v).second) k.outputs.push_back(value(v));
        }
      }
      k.op_type = kernel_op_label(ops);
      for (NodeId orig : m) f.kernel_of[std::size_t(orig)] = NodeId(f.originals.size());
      f.originals.push_back(m);
      f.group_of.push_back(gi);
      pending.push_back(std::move(k));
    }
    for (Node& node : pending) f.graph.add_node(std::move(node));
    for (ValueId v : g.outputs()) f.graph.add_output(value(v));
    try {
      f.graph.topological_order();
      return true;
    } catch (const Error&) {
      return false;
    }
  };

  while (!build()) {
    // A cycle: dissolve the largest remaining group (rare: the finder checks for
    // cycles; a hand-edited plan may not) and try again.
    int worst = -1;
    for (std::size_t gi = 0; gi < members.size(); ++gi)
      if (!members[gi].empty() &&
          (worst < 0 || members[gi].size() > members[std::size_t(worst)].size()))
        worst = int(gi);
    if (worst < 0) throw Error("contract_groups: the graph itself has a cycle");
    f.skipped.push_back(groups[std::size_t(worst)]->id + ": contracting it would make a cycle");
    for (NodeId id : members[std::size_t(worst)]) group_of_node[std::size_t(id)] = -1;
    members[std::size_t(worst)].clear();
  }
  return f;
}

}  // namespace fx
