// SPDX-License-Identifier: Apache-2.0
#include "drawing/visible_graph.h"

#include <deque>
#include <unordered_map>
#include <unordered_set>

namespace fx::drawing {
namespace {

// Folds data edges into one edge per (from, to) pair of boxes.
class EdgeFolder {
 public:
  void add(int32_t from, int32_t to, ValueId v, const Value& value) {
    if (from < 0 || to < 0 || from == to) return;
    const uint64_t key = (uint64_t(uint32_t(from)) << 32) | uint32_t(to);
    auto [it, added] = index_.try_emplace(key, edges_.size());
    if (added) edges_.push_back({from, to, 0, v, 0});
    AggregatedEdge& e = edges_[it->second];
    e.count += 1;
    // A value feeding several nodes in the same box is moved once.
    if (seen_.insert(key ^ (uint64_t(uint32_t(v)) * 0x9e3779b97f4a7c15ULL)).second)
      e.bytes += value.byte_size().value_or(0);
  }
  std::vector<AggregatedEdge> take() { return std::move(edges_); }

 private:
  std::vector<AggregatedEdge> edges_;
  std::unordered_map<uint64_t, std::size_t> index_;
  std::unordered_set<uint64_t> seen_;
};

void collect_nodes(const ScopeTree& tree, GroupId g, std::vector<NodeId>& out) {
  for (const Item& it : tree.group(g).children) {
    if (it.kind == Item::Node)
      out.push_back(it.id);
    else
      collect_nodes(tree, it.id, out);
  }
}

}  // namespace

LevelGraph level_graph(const Graph& graph, const ScopeTree& tree, GroupId group) {
  LevelGraph level;
  level.group = group;
  level.items = tree.group(group).children;
  std::vector<NodeId> nodes;
  if (group == kRootGroup) {
    nodes.resize(graph.node_count());
    for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i] = NodeId(i);
  } else {
    collect_nodes(tree, group, nodes);
  }
  EdgeFolder folder;
  for (NodeId n : nodes) {
    const int32_t from = tree.child_slot(n, group);
    for (ValueId v : graph.node(n).outputs) {
      if (v == kNoValue) continue;
      const Value& value = graph.value(v);
      for (NodeId c : value.consumers) folder.add(from, tree.child_slot(c, group), v, value);
    }
  }
  level.edges = folder.take();
  return level;
}

void Expansion::reveal(const ScopeTree& tree, NodeId n) {
  for (GroupId g : tree.ancestors_of(n)) set_open(g, true);
}

Expansion initial_expansion(const ScopeTree& tree, int max_boxes) {
  Expansion e(tree.group_count());
  auto visible = int(tree.group(kRootGroup).children.size());
  std::deque<GroupId> queue;
  auto push_children = [&](GroupId g) {
    for (const Item& it : tree.group(g).children)
      if (it.kind == Item::Group) queue.push_back(it.id);
  };
  push_children(kRootGroup);
  while (!queue.empty()) {
    const GroupId g = queue.front();
    queue.pop_front();
    // Opening replaces one box by its children; the frame stays as well.
    const auto added = int(tree.group(g).children.size());
    if (visible + added > max_boxes) continue;
    e.set_open(g, true);
    visible += added;
    push_children(g);
  }
  return e;
}

VisibleGraph visible_graph(const Graph& graph, const ScopeTree& tree, const Expansion& expansion) {
  VisibleGraph vg;
  vg.box_of_node.assign(graph.node_count(), -1);
  std::vector<int32_t> box_of_group(tree.group_count(), -1);
  // Depth-first over open groups only: closed groups are never entered.
  std::vector<GroupId> stack{kRootGroup};
  while (!stack.empty()) {
    GroupId g = stack.back();
    stack.pop_back();
    for (const Item& it : tree.group(g).children) {
      const bool open = it.kind == Item::Group && expansion.is_open(it.id);
      const auto index = static_cast<int32_t>(vg.boxes.size());
      vg.boxes.push_back({it, g, open});
      if (it.kind == Item::Node)
        vg.box_of_node[static_cast<std::size_t>(it.id)] = index;
      else
        box_of_group[static_cast<std::size_t>(it.id)] = index;
      if (open) stack.push_back(it.id);
    }
  }
  // A node inside a closed group is shown by the outermost closed group above it.
  for (std::size_t n = 0; n < graph.node_count(); ++n) {
    if (vg.box_of_node[n] >= 0) continue;
    for (GroupId g : tree.ancestors_of(NodeId(n))) {
      if (!expansion.is_open(g)) {
        vg.box_of_node[n] = box_of_group[static_cast<std::size_t>(g)];
        break;
      }
    }
  }
  EdgeFolder folder;
  for (std::size_t n = 0; n < graph.node_count(); ++n) {
    for (ValueId v : graph.nodes()[n].outputs) {
      if (v == kNoValue) continue;
      const Value& value = graph.value(v);
      for (NodeId c : value.consumers)
        folder.add(vg.box_of_node[n], vg.box_of_node[static_cast<std::size_t>(c)], v, value);
    }
  }
  vg.edges = folder.take();
  return vg;
}

}  // namespace fx::drawing
