// SPDX-License-Identifier: Apache-2.0
// Control flow in the drawing: an If becomes a group holding the node and one
// sub-group per branch, the model's node ids unchanged.

#include <gtest/gtest.h>

#include "drawing/scope_tree.h"
#include "drawing/subgraph_groups.h"
#include "ir/graph_builder.h"

namespace fx::drawing {
namespace {

std::shared_ptr<const Graph> branch(const std::string& outer, int ops, const std::string& prefix) {
  GraphBuilder b;
  Value v;
  v.name = outer;
  v.dtype = DType::Float32;
  v.shape = Shape::of({8});
  ValueId x = b.graph().add_value(std::move(v));
  b.graph().add_outer_ref(x);
  for (int i = 0; i < ops; ++i) x = b.op("Relu", {x}, {}, prefix + std::to_string(i));
  b.output(x);
  return std::make_shared<const Graph>(b.build());
}

Graph if_graph(int else_ops = 1) {
  GraphBuilder b;
  auto x = b.input("x", {8});
  auto cond = b.input("cond", {}, DType::Bool);
  auto r = b.op("Relu", {x}, {}, "relu");
  const std::string rname = b.graph().value(r).name;
  auto y = b.op("If", {cond, r},
                {{"then_branch", SubgraphRef{"then", 3, branch(rname, 3, "t")}},
                 {"else_branch", SubgraphRef{"else", else_ops, branch(rname, else_ops, "e")}}},
                "if", Shape::of({8}), DType::Float32);
  b.graph().node(b.graph().find_node("if")).implicit_inputs = 1;
  b.output(b.op("Exp", {y}, {}, "after"));
  return b.build();
}

TEST(SubgraphGroups, ControlFlowNodeBecomesAGroupWithItsBranches) {
  const Graph g = if_graph();
  const Graph drawn = inline_subgraphs_for_drawing(g);
  ASSERT_EQ(drawn.node_count(), 3u + 3u + 1u);
  // The model's nodes keep their ids; inlined nodes follow.
  for (std::size_t i = 0; i < g.node_count(); ++i)
    EXPECT_EQ(drawn.node(NodeId(i)).name, g.node(NodeId(i)).name);
  EXPECT_EQ(model_node(g, NodeId(4)), kNoNode);
  const NodeId t0 = drawn.find_node("if/then_branch/t0");
  ASSERT_NE(t0, kNoNode);
  // The branch reads relu's output: an edge from the outer producer into the group.
  const ValueId in = drawn.node(t0).inputs[0];
  EXPECT_EQ(drawn.value(in).producer, drawn.find_node("relu"));

  ScopeTree tree(drawn);
  const Group* if_group = nullptr;
  const Group* then_group = nullptr;
  for (const Group& grp : tree.groups()) {
    if (grp.path == "if") if_group = &grp;
    if (grp.path == "if/then_branch") then_group = &grp;
  }
  ASSERT_NE(if_group, nullptr);
  ASSERT_NE(then_group, nullptr);
  EXPECT_EQ(if_group->node_count, 1 + 3 + 1);
  EXPECT_EQ(then_group->node_count, 3);
  EXPECT_EQ(tree.group(tree.group_of(drawn.find_node("if"))).path, "if");
}

// Branches of the same ops are alternatives, not a repeated block: each stays its own
// group beside the If node, then_branch first.
TEST(SubgraphGroups, IdenticalBranchesAreNotSummarizedAsRepeats) {
  const Graph drawn = inline_subgraphs_for_drawing(if_graph(3));
  ScopeTree tree(drawn);
  GroupId if_group = kNoGroup;
  for (std::size_t i = 0; i < tree.group_count(); ++i)
    if (tree.group(GroupId(i)).path == "if") if_group = GroupId(i);
  ASSERT_NE(if_group, kNoGroup);
  EXPECT_EQ(tree.group(if_group).repeat_count, 0);
  std::vector<std::string> kids;
  for (const Item& it : tree.group(if_group).children) {
    if (it.kind != Item::Group) continue;
    EXPECT_EQ(tree.group(it.id).kind, GroupKind::Scope);
    EXPECT_EQ(tree.group(it.id).repeat_count, 0);
    kids.push_back(tree.group(it.id).path);
  }
  EXPECT_EQ(kids, (std::vector<std::string>{"if/then_branch", "if/else_branch"}));
  // then before else, as the If reads (its attributes come sorted by name).
  EXPECT_LT(drawn.find_node("if/then_branch/t0"), drawn.find_node("if/else_branch/e0"));
}

TEST(SubgraphGroups, GraphWithoutControlFlowIsUnchanged) {
  GraphBuilder b;
  b.output(b.op("Relu", {b.input("x", {4})}, {}, "r"));
  const Graph g = b.build();
  EXPECT_EQ(inline_subgraphs_for_drawing(g).node_count(), g.node_count());
}

}  // namespace
}  // namespace fx::drawing
