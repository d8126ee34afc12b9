// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the view shows for a given expansion state, and the per-level graphs that
// get laid out.
//
//   level_graph(g)      the children of one group as boxes, with the data edges
//                       between them aggregated (one edge per pair of boxes, with a
//                       count); edges that leave the group are not part of it
//   visible_graph(exp)  every box on screen: expanded groups are opened, collapsed
//                       groups are single boxes; edges aggregated between boxes
//
// Only what is expanded is ever visited level by level, so the top of a
// 100,000-node model costs one pass over its edges and a few hundred boxes.

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "drawing/scope_tree.h"

namespace fx::drawing {

struct AggregatedEdge {
  int32_t from = -1;  // index into the box list
  int32_t to = -1;
  int32_t count = 0;         // data edges folded into this one
  ValueId value = kNoValue;  // the first of them, for the shape label
  int64_t bytes = 0;         // sum of the static byte sizes of the distinct values
};

struct LevelGraph {
  GroupId group = kRootGroup;
  std::vector<Item> items;  // the group's children
  std::vector<AggregatedEdge> edges;
};

LevelGraph level_graph(const Graph& graph, const ScopeTree& tree, GroupId group);

// The set of open groups; the root is always open.
class Expansion {
 public:
  explicit Expansion(std::size_t group_count = 1) : open_(group_count, false) { open_[0] = true; }
  bool is_open(GroupId g) const { return g == kRootGroup || open_[static_cast<std::size_t>(g)]; }
  void set_open(GroupId g, bool open) {
    if (g != kRootGroup) open_[static_cast<std::size_t>(g)] = open;
  }
  // Opens every group on the way to n, so that n becomes its own box.
  void reveal(const ScopeTree& tree, NodeId n);
  std::size_t size() const { return open_.size(); }

 private:
  std::vector<bool> open_;
};

// The expansion a model opens with: groups opened breadth-first, in data-flow order,
// as long as the boxes on screen stay within max_boxes, so that a small model opens
// fully expanded and a large one shows its outline.
Expansion initial_expansion(const ScopeTree& tree, int max_boxes = 60);

struct VisibleBox {
  Item item;
  GroupId parent = kRootGroup;  // the open group it is drawn in
  bool open = false;            // an open group: drawn as a frame around its children
};

struct VisibleGraph {
  std::vector<VisibleBox> boxes;      // parents before their children
  std::vector<AggregatedEdge> edges;  // between closed boxes (nodes or closed groups)
  std::vector<int32_t> box_of_node;   // NodeId -> index of the closed box showing it
};

VisibleGraph visible_graph(const Graph& graph, const ScopeTree& tree, const Expansion& expansion);

}  // namespace fx::drawing
