// SPDX-License-Identifier: Apache-2.0
#include "analysis/group_graph.h"

#include <algorithm>

namespace fx {

GroupGraph::GroupGraph(const Graph& g, const std::vector<NodeId>& topo)
    : g_(g),
      parent_(g.node_count()),
      members_(g.node_count()),
      pos_(g.node_count(), 0),
      seen_(g.node_count(), 0) {
  for (std::size_t i = 0; i < parent_.size(); ++i) {
    parent_[i] = static_cast<NodeId>(i);
    members_[i] = {static_cast<NodeId>(i)};
  }
  for (std::size_t i = 0; i < topo.size(); ++i) pos_[idx(topo[i])] = static_cast<int64_t>(i);
}

NodeId GroupGraph::find(NodeId n) const {
  NodeId r = n;
  while (parent_[idx(r)] != r) r = parent_[idx(r)];
  while (parent_[idx(n)] != r) {  // path compression
    NodeId next = parent_[idx(n)];
    parent_[idx(n)] = r;
    n = next;
  }
  return r;
}

std::vector<NodeId> GroupGraph::successors(NodeId root) const {
  std::vector<NodeId> out;
  for (NodeId m : members_[idx(root)])
    for (ValueId v : g_.node(m).outputs) {
      if (v == kNoValue) continue;
      for (NodeId c : g_.value(v).consumers) {
        NodeId r = find(c);
        if (r != root) out.push_back(r);
      }
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<NodeId> GroupGraph::predecessors(NodeId root) const {
  std::vector<NodeId> out;
  for (NodeId m : members_[idx(root)])
    for (ValueId v : g_.node(m).inputs) {
      if (v == kNoValue || g_.value(v).producer == kNoNode) continue;
      NodeId r = find(g_.value(v).producer);
      if (r != root) out.push_back(r);
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Depth-first search over groups whose position lies strictly inside (lo, hi). Every
// path between two groups passes only through positions between theirs, because the
// positions are a topological order of the contracted graph.
std::vector<NodeId> GroupGraph::window(NodeId from, int64_t lo, int64_t hi, bool forward,
                                       NodeId target, bool* hit_target, int max_visits,
                                       bool* too_far) const {
  ++stamp_;
  if (stamp_ == 0) std::fill(seen_.begin(), seen_.end(), 0), stamp_ = 1;
  std::vector<NodeId> found, stack;
  auto expand = [&](NodeId g) {
    for (NodeId s : forward ? successors(g) : predecessors(g)) {
      if (s == target) {
        if (g != from && hit_target) *hit_target = true;
        continue;
      }
      int64_t p = pos_[idx(s)];
      if (p <= lo || p >= hi || seen_[idx(s)] == stamp_) continue;
      seen_[idx(s)] = stamp_;
      stack.push_back(s);
    }
  };
  expand(from);
  while (!stack.empty()) {
    if (hit_target && *hit_target) break;
    if (max_visits > 0 && static_cast<int>(found.size()) >= max_visits) {
      if (too_far) *too_far = true;
      break;
    }
    NodeId g = stack.back();
    stack.pop_back();
    found.push_back(g);
    expand(g);
  }
  return found;
}

MergeCheck GroupGraph::check(NodeId a, NodeId b, int max_visits) const {
  if (pos_[idx(a)] > pos_[idx(b)]) std::swap(a, b);
  bool cycle = false, too_far = false;
  window(a, pos_[idx(a)], pos_[idx(b)], true, b, &cycle, max_visits, &too_far);
  if (cycle) return MergeCheck::Cycle;
  return too_far ? MergeCheck::TooFar : MergeCheck::Ok;
}

NodeId GroupGraph::merge(NodeId a, NodeId b) {
  if (pos_[idx(a)] > pos_[idx(b)]) std::swap(a, b);
  const int64_t lo = pos_[idx(a)], hi = pos_[idx(b)];
  // Groups after a that must stay after the merged group, groups before b that must stay
  // before it; their positions, with a's and b's, are handed out again in that order.
  auto fwd = window(a, lo, hi, true, b, nullptr, 0, nullptr);
  auto bwd = window(b, lo, hi, false, a, nullptr, 0, nullptr);
  std::vector<int64_t> slots{lo, hi};
  for (NodeId g : fwd) slots.push_back(pos_[idx(g)]);
  for (NodeId g : bwd) slots.push_back(pos_[idx(g)]);
  std::sort(slots.begin(), slots.end());
  auto by_pos = [&](NodeId x, NodeId y) { return pos_[idx(x)] < pos_[idx(y)]; };
  std::sort(fwd.begin(), fwd.end(), by_pos);
  std::sort(bwd.begin(), bwd.end(), by_pos);

  NodeId root = members_[idx(a)].size() >= members_[idx(b)].size() ? a : b;
  NodeId other = root == a ? b : a;
  parent_[idx(other)] = root;
  auto& into = members_[idx(root)];
  auto& from = members_[idx(other)];
  into.insert(into.end(), from.begin(), from.end());
  from.clear();
  from.shrink_to_fit();

  std::size_t k = 0;
  for (NodeId g : bwd) pos_[idx(g)] = slots[k++];
  pos_[idx(root)] = slots[k++];
  for (NodeId g : fwd) pos_[idx(g)] = slots[k++];
  return root;
}

bool GroupGraph::contracted_acyclic() const {
  const std::size_t n = parent_.size();
  std::vector<int> indeg(n, 0);
  std::vector<std::vector<NodeId>> succ(n);
  std::size_t groups = 0;
  for (std::size_t i = 0; i < n; ++i) {
    NodeId r = static_cast<NodeId>(i);
    if (find(r) != r) continue;
    ++groups;
    succ[i] = successors(r);
    for (NodeId s : succ[i]) ++indeg[idx(s)];
  }
  std::vector<NodeId> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (find(static_cast<NodeId>(i)) == static_cast<NodeId>(i) && indeg[i] == 0)
      ready.push_back(static_cast<NodeId>(i));
  std::size_t done = 0;
  while (!ready.empty()) {
    NodeId r = ready.back();
    ready.pop_back();
    ++done;
    for (NodeId s : succ[idx(r)])
      if (--indeg[idx(s)] == 0) ready.push_back(s);
  }
  return done == groups;
}

}  // namespace fx
