// SPDX-License-Identifier: Apache-2.0
// Control flow in the analysis: an If is one opaque kernel outside, its branches are
// analysed on their own, and nothing fuses across the boundary (the why-not says so).

#include <gtest/gtest.h>

#include "analysis/fusion_finder.h"
#include "ir/graph_builder.h"
#include "test_graphs.h"

namespace fx {
namespace {

// A branch reading the outer value `outer` ([1024] float) by name.
std::shared_ptr<const Graph> branch(const std::string& outer, const std::vector<std::string>& ops,
                                    const std::string& prefix) {
  GraphBuilder b;
  Value v;
  v.name = outer;
  v.dtype = DType::Float32;
  v.shape = Shape::of({1024});
  ValueId x = b.graph().add_value(std::move(v));
  b.graph().add_outer_ref(x);
  for (const auto& op : ops) x = b.op(op, {x}, {}, prefix + op);
  b.output(x);
  return std::make_shared<const Graph>(b.build());
}

// x -> relu -> If(cond; then: Neg, Exp, Relu of relu's output; else: Sigmoid) -> exp
Graph if_graph() {
  GraphBuilder b;
  auto x = b.input("x", {1024});
  auto cond = b.input("cond", {}, DType::Bool);
  auto r = b.op("Relu", {x}, {}, "relu");
  const std::string rname = b.graph().value(r).name;
  auto then_g = branch(rname, {"Neg", "Exp", "Relu"}, "then_");
  auto else_g = branch(rname, {"Sigmoid"}, "else_");
  auto y = b.op("If", {cond, r},
                {{"then_branch", SubgraphRef{"then", 3, then_g}},
                 {"else_branch", SubgraphRef{"else", 1, else_g}}},
                "if", Shape::of({1024}), DType::Float32);
  b.graph().node(b.graph().find_node("if")).implicit_inputs = 1;
  b.output(b.op("Exp", {y}, {}, "after"));
  return b.build();
}

TEST(ControlFlowAnalysis, FusesInsideBranchesNeverAcross) {
  Graph g = if_graph();
  g.validate();
  AnalysisResult r = analyze_fusion(g, testing::test_profile(), FusionOptions{});
  // Outside: relu, if and after stay three kernels.
  for (const auto& gr : r.groups)
    for (const auto& n : gr.nodes) EXPECT_NE(n, "if");
  const NotFused* into = testing::not_fused(r, "relu", "if");
  ASSERT_NE(into, nullptr);
  EXPECT_EQ(into->reason, NotFusedReason::ControlFlow);
  EXPECT_NE(into->text.find("control-flow boundary"), std::string::npos) << into->text;
  const NotFused* out_of = testing::not_fused(r, "if", "after");
  ASSERT_NE(out_of, nullptr);
  EXPECT_EQ(out_of->reason, NotFusedReason::ControlFlow);
  // Inside: the then branch's chain is one group; the else branch has one node.
  ASSERT_EQ(r.subgraphs.size(), 2u);
  const SubgraphAnalysis* then_a = nullptr;
  for (const auto& sa : r.subgraphs)
    if (sa.attribute == "then_branch") then_a = &sa;
  ASSERT_NE(then_a, nullptr);
  EXPECT_EQ(then_a->node, "if");
  ASSERT_EQ(then_a->result.groups.size(), 1u);
  EXPECT_EQ(then_a->result.groups[0].nodes,
            (std::vector<std::string>{"then_Neg", "then_Exp", "then_Relu"}));
  // The why-not of a pair across the boundary, and of one inside a branch.
  EXPECT_NE(explain_pair(r, "relu", "then_Neg").find("control-flow boundary"), std::string::npos)
      << explain_pair(r, "relu", "then_Neg");
  EXPECT_NE(explain_pair(r, "then_Neg", "then_Exp").find("fused together"), std::string::npos)
      << explain_pair(r, "then_Neg", "then_Exp");
}

TEST(ControlFlowAnalysis, ValueReadOnlyByABranchIsConsumed) {
  Graph g = if_graph();
  const Value& r = g.value(g.node(g.find_node("relu")).outputs[0]);
  ASSERT_EQ(r.consumers.size(), 1u);
  EXPECT_EQ(g.node(r.consumers[0]).name, "if");
}

}  // namespace
}  // namespace fx
