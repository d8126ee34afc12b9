// SPDX-License-Identifier: Apache-2.0
#include "drawing/visible_graph.h"

#include <gtest/gtest.h>

#include "graphs.h"

namespace fx::drawing {
namespace {

// a: three ops; b: two ops; a feeds b through two values.
Graph two_groups() {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 4});
  ValueId a1 = testing::scoped_op(b, "Relu", {x}, "a");
  ValueId a2 = testing::scoped_op(b, "Sigmoid", {a1}, "a");
  ValueId a3 = testing::scoped_op(b, "Tanh", {a1}, "a");
  ValueId b1 = testing::scoped_op(b, "Add", {a2, a3}, "b");
  b.output(testing::scoped_op(b, "Neg", {b1}, "b"));
  return b.build();
}

int find_box(const VisibleGraph& vg, Item item) {
  for (std::size_t i = 0; i < vg.boxes.size(); ++i)
    if (vg.boxes[i].item == item) return int(i);
  return -1;
}

TEST(LevelGraph, AggregatesEdgesBetweenChildren) {
  Graph g = two_groups();
  ScopeTree t(g, {.max_children = 400, .min_repeats = 99});
  LevelGraph top = level_graph(g, t, kRootGroup);
  ASSERT_EQ(top.items.size(), 2u);
  ASSERT_EQ(top.edges.size(), 1u);
  EXPECT_EQ(top.edges[0].from, 0);
  EXPECT_EQ(top.edges[0].to, 1);
  EXPECT_EQ(top.edges[0].count, 2);
  EXPECT_EQ(top.edges[0].bytes, 2 * 4 * 4);  // two distinct 1x4 float tensors
}

TEST(LevelGraph, KeepsOnlyEdgesInsideTheGroup) {
  Graph g = two_groups();
  ScopeTree t(g, {.max_children = 400, .min_repeats = 99});
  const GroupId a = t.group(kRootGroup).children[0].id;
  LevelGraph inner = level_graph(g, t, a);
  ASSERT_EQ(inner.items.size(), 3u);
  // Relu -> Sigmoid and Relu -> Tanh; the edges into b leave the group.
  ASSERT_EQ(inner.edges.size(), 2u);
  for (const auto& e : inner.edges) EXPECT_EQ(e.from, 0);
}

TEST(VisibleGraph, ClosedGroupsAreSingleBoxes) {
  Graph g = two_groups();
  ScopeTree t(g, {.max_children = 400, .min_repeats = 99});
  Expansion closed(t.group_count());
  VisibleGraph vg = visible_graph(g, t, closed);
  ASSERT_EQ(vg.boxes.size(), 2u);
  ASSERT_EQ(vg.edges.size(), 1u);
  EXPECT_EQ(vg.edges[0].count, 2);
  for (std::size_t n = 0; n < 3; ++n) EXPECT_EQ(vg.box_of_node[n], 0);
}

TEST(VisibleGraph, OpeningAGroupShowsItsNodesAndRoutesEdgesToThem) {
  Graph g = two_groups();
  ScopeTree t(g, {.max_children = 400, .min_repeats = 99});
  const GroupId a = t.group(kRootGroup).children[0].id;
  const GroupId bgrp = t.group(kRootGroup).children[1].id;
  Expansion e(t.group_count());
  e.set_open(a, true);
  VisibleGraph vg = visible_graph(g, t, e);
  EXPECT_EQ(vg.boxes.size(), 5u);  // a (open), b, and a's three nodes
  const int sig = find_box(vg, {Item::Node, g.find_node("a/Sigmoid_1")});
  const int tanh = find_box(vg, {Item::Node, g.find_node("a/Tanh_2")});
  const int bbox = find_box(vg, {Item::Group, bgrp});
  ASSERT_GE(sig, 0);
  ASSERT_GE(tanh, 0);
  int into_b = 0;
  for (const auto& edge : vg.edges) {
    EXPECT_NE(vg.boxes[std::size_t(edge.from)].open, true);  // never from a frame
    if (edge.to == bbox) {
      ++into_b;
      EXPECT_TRUE(edge.from == sig || edge.from == tanh);
      EXPECT_EQ(edge.count, 1);
    }
  }
  EXPECT_EQ(into_b, 2);
  EXPECT_EQ(vg.edges.size(), 4u);  // Relu->Sigmoid, Relu->Tanh, Sigmoid->b, Tanh->b
}

TEST(VisibleGraph, RevealOpensEveryAncestor) {
  Graph g = testing::repeated_blocks(12);
  ScopeTree t(g);
  const NodeId relu = g.find_node("layers.7/mlp/Relu_" + std::to_string(7 * 5 + 2));
  ASSERT_NE(relu, kNoNode);
  Expansion e(t.group_count());
  EXPECT_EQ(visible_graph(g, t, e).boxes.size(), 2u);
  e.reveal(t, relu);
  VisibleGraph vg = visible_graph(g, t, e);
  const int box = vg.box_of_node[std::size_t(relu)];
  ASSERT_GE(box, 0);
  EXPECT_EQ(vg.boxes[std::size_t(box)].item, (Item{Item::Node, relu}));
  // repeat box + head, 12 blocks, layers.7's 3 children, mlp's 3 ops.
  EXPECT_EQ(vg.boxes.size(), 2u + 12u + 3u + 3u);
}

}  // namespace
}  // namespace fx::drawing

namespace fx::drawing {
namespace {

TEST(InitialExpansion, OpensSmallModelsFullyAndLargeOnesWithinTheBudget) {
  Graph small = testing::repeated_blocks(2);
  ScopeTree ts(small);
  Expansion es = initial_expansion(ts, 60);
  for (GroupId g = 1; g < GroupId(ts.group_count()); ++g) EXPECT_TRUE(es.is_open(g)) << g;

  Graph big = testing::repeated_blocks(40);
  ScopeTree tb(big);
  Expansion eb = initial_expansion(tb, 30);
  const VisibleGraph vg = visible_graph(big, tb, eb);
  EXPECT_LE(vg.boxes.size(), 30u);
  EXPECT_GT(vg.boxes.size(), 2u);  // opened something: head at least
}

}  // namespace
}  // namespace fx::drawing
