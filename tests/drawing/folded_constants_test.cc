// SPDX-License-Identifier: Apache-2.0
// Constants are drawn inside the node that consumes them, as Netron draws weights: a
// Constant op is no box of its own unless asked for, and the consumer's box lists its
// constant inputs (weights and folded Constant ops) with their dims.
#include <gtest/gtest.h>

#include <algorithm>

#include "drawing/hierarchical_layout.h"
#include "drawing/weight_nodes.h"
#include "ir/graph_builder.h"

namespace fx::drawing {
namespace {

// x -> Conv(weight, bias) -> Mul(by a Constant op) -> Reshape(by another) -> Einsum(by a
// weight of an op the schema table does not list: named by its value).
Graph conv_with_constants() {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 3, 8, 8});
  const ValueId w = b.constant("conv1.weight",
                               TensorData::from_floats({4, 3, 3, 3}, std::vector<float>(108, 0.f)));
  const ValueId bias = b.constant("conv1.bias", TensorData::from_floats({4}, {0, 0, 0, 0}));
  const ValueId y = b.op("Conv", {x, w, bias}, {}, "conv", Shape::of({1, 4, 8, 8}));
  const ValueId scale = b.op("Constant", {}, {}, "scale", Shape::of({1}));
  const ValueId z = b.op("Mul", {y, scale}, {}, "mul");
  const ValueId shape = b.op("Constant", {}, {}, "shape", Shape::of({2}));
  const ValueId r = b.op("Reshape", {z, shape}, {}, "reshape", Shape::of({1, 256}));
  const ValueId proj =
      b.constant("proj.weight", TensorData::from_floats({256}, std::vector<float>(256, 0.f)));
  b.output(b.op("Einsum", {r, proj}, {}, "einsum", Shape::of({1, 256})));
  return b.build();
}

bool has_line(const std::vector<std::string>& lines, const std::string& text) {
  return std::find(lines.begin(), lines.end(), text) != lines.end();
}

TEST(FoldedConstants, ConstantOpsAreLinesOfTheirConsumer) {
  const Graph g = conv_with_constants();
  const ScopeTree tree(g);
  HierarchicalLayout layout(g, tree);
  const SceneLayout s = layout.compute(Expansion(tree.group_count()));
  const NodeId conv = g.find_node("conv"), mul = g.find_node("mul"), scale = g.find_node("scale");
  const NodeId shape = g.find_node("shape"), reshape = g.find_node("reshape");
  EXPECT_TRUE(tree.folded(scale));
  EXPECT_TRUE(tree.folded(shape));
  EXPECT_EQ(s.box_of_node[std::size_t(scale)], -1);
  EXPECT_EQ(s.box_of_node[std::size_t(shape)], -1);
  EXPECT_EQ(s.boxes.size(), 4u);  // Conv, Mul, Reshape, Einsum
  for (const SceneEdge& e : s.edges) {  // no edge from a constant
    EXPECT_NE(s.boxes[std::size_t(e.from)].item.id, scale);
    EXPECT_NE(s.boxes[std::size_t(e.from)].item.id, shape);
  }
  const auto conv_lines = box_lines(g, tree, {Item::Node, conv});
  ASSERT_EQ(conv_lines.size(), 3u);
  EXPECT_EQ(conv_lines[0], "Conv");
  // The schema's names where the op is listed (Netron's "W", "B"), else the value's.
  EXPECT_EQ(conv_lines[1], "W ⟨4×3×3×3⟩");
  EXPECT_EQ(conv_lines[2], "B ⟨4⟩");
  EXPECT_TRUE(has_line(box_lines(g, tree, {Item::Node, mul}), "B ⟨1⟩"));
  EXPECT_TRUE(has_line(box_lines(g, tree, {Item::Node, reshape}), "shape ⟨2⟩"));
  EXPECT_TRUE(has_line(box_lines(g, tree, {Item::Node, g.find_node("einsum")}), "weight ⟨256⟩"));
  // The box is tall enough for its three lines.
  const SceneBox& conv_box = s.boxes[std::size_t(s.box_of_node[std::size_t(conv)])];
  EXPECT_GE(conv_box.height, 3 * LabelMetrics{}.line_height);
}

TEST(FoldedConstants, OnDemandTheyAreNodesAgain) {
  const Graph g = conv_with_constants();
  const ScopeTree tree(g, {.fold_constants = false});
  HierarchicalLayout layout(g, tree);
  const SceneLayout s = layout.compute(Expansion(tree.group_count()));
  const NodeId scale = g.find_node("scale"), mul = g.find_node("mul");
  EXPECT_FALSE(tree.folded(scale));
  EXPECT_EQ(s.boxes.size(), 6u);
  ASSERT_GE(s.box_of_node[std::size_t(scale)], 0);
  bool edge = false;
  for (const SceneEdge& e : s.edges)
    edge |= e.from == s.box_of_node[std::size_t(scale)] && e.to == s.box_of_node[std::size_t(mul)];
  EXPECT_TRUE(edge);
  // Weights (initializers) are never nodes: they stay lines either way; the Constant op
  // is no line of its consumer when it is a box.
  EXPECT_EQ(box_lines(g, tree, {Item::Node, g.find_node("conv")}).size(), 3u);
  EXPECT_EQ(box_lines(g, tree, {Item::Node, mul}).size(), 1u);
}

TEST(FoldedConstants, AConstantThatIsAGraphOutputStaysABox) {
  GraphBuilder b;
  const ValueId c = b.op("Constant", {}, {}, "c", Shape::of({2}));
  b.output(c);
  const Graph g = b.build();
  const ScopeTree tree(g);
  EXPECT_FALSE(tree.folded(g.find_node("c")));
}

// Weights (initializers) become Constant nodes of a drawn copy, after the model's
// nodes: folded, the boxes read as before; unfolded, each weight is a box with an edge
// into its consumer.
TEST(FoldedConstants, WeightsAsNodesOnDemand) {
  const Graph g = conv_with_constants();
  const Graph drawn = with_weight_nodes(g);
  ASSERT_EQ(drawn.node_count(), g.node_count() + 3);  // conv weight and bias, proj weight
  for (std::size_t n = 0; n < g.node_count(); ++n)
    EXPECT_EQ(drawn.node(NodeId(n)).name, g.node(NodeId(n)).name);  // model ids kept
  const NodeId conv = g.find_node("conv");

  const ScopeTree folded(drawn);
  EXPECT_EQ(box_lines(drawn, folded, {Item::Node, conv}),
            box_lines(g, ScopeTree(g), {Item::Node, conv}));
  HierarchicalLayout folded_layout(drawn, folded);
  EXPECT_EQ(folded_layout.compute(Expansion(folded.group_count())).boxes.size(), 4u);

  const ScopeTree shown(drawn, {.fold_constants = false});
  HierarchicalLayout layout(drawn, shown);
  const SceneLayout s = layout.compute(Expansion(shown.group_count()));
  EXPECT_EQ(s.boxes.size(), 9u);  // 4 ops, 2 Constant ops, 3 weights
  EXPECT_EQ(box_lines(drawn, shown, {Item::Node, conv}), std::vector<std::string>{"Conv"});
  const NodeId weight = NodeId(g.node_count());  // the first appended: conv1.weight
  EXPECT_EQ(drawn.node(weight).name, "conv1.weight");
  bool edge = false;
  for (const SceneEdge& e : s.edges)
    edge |=
        e.from == s.box_of_node[std::size_t(weight)] && e.to == s.box_of_node[std::size_t(conv)];
  EXPECT_TRUE(edge);
}

}  // namespace
}  // namespace fx::drawing
