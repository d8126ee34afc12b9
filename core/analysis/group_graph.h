// SPDX-License-Identifier: Apache-2.0
#pragma once
// The contracted graph during fusion: union-find over dense node ids, each group with its
// members, and an incrementally maintained topological position per group, so that the
// "would contracting A and B make a cycle?" test only explores groups whose position lies
// strictly between A's and B's (Pearce-Kelly style). After a merge the positions inside
// that window are reassigned so the order stays topological.
//
// Cost per check: the groups in the window reachable from A, bounded by `max_visits`.

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace fx {

enum class MergeCheck { Ok, Cycle, TooFar };

class GroupGraph {
 public:
  // `topo` is a topological order of g's nodes.
  GroupGraph(const Graph& g, const std::vector<NodeId>& topo);

  NodeId find(NodeId n) const;
  const std::vector<NodeId>& members(NodeId root) const { return members_[idx(root)]; }
  int64_t position(NodeId root) const { return pos_[idx(root)]; }
  // Distinct groups consuming a value produced in `root` (excluding root).
  std::vector<NodeId> successors(NodeId root) const;
  std::vector<NodeId> predecessors(NodeId root) const;

  // Would contracting groups a and b (distinct roots) create a cycle?
  MergeCheck check(NodeId a, NodeId b, int max_visits) const;
  // Contracts a and b (check() must have said Ok); returns the new root.
  NodeId merge(NodeId a, NodeId b);

  // True when the contraction of the current groups is acyclic (for tests; O(V+E)).
  bool contracted_acyclic() const;

 private:
  static std::size_t idx(NodeId n) { return static_cast<std::size_t>(n); }
  // Groups reachable from `from` (forward or backward) with position in (lo, hi).
  std::vector<NodeId> window(NodeId from, int64_t lo, int64_t hi, bool forward, NodeId target,
                             bool* hit_target, int max_visits, bool* too_far) const;

  const Graph& g_;
  mutable std::vector<NodeId> parent_;
  std::vector<std::vector<NodeId>> members_;
  std::vector<int64_t> pos_;
  mutable std::vector<uint32_t> seen_;
  mutable uint32_t stamp_ = 0;
};

}  // namespace fx
