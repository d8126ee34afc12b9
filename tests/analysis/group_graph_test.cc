// SPDX-License-Identifier: Apache-2.0
#include "analysis/group_graph.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"

namespace fx {
namespace {

// a -> b -> c and a -> c: contracting a and c alone would need b both before and after.
Graph diamond() {
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto a = b.op("Relu", {x}, {}, "a");
  auto m = b.op("Neg", {a}, {}, "b");
  b.output(b.op("Add", {a, m}, {}, "c"));
  return b.build();
}

TEST(GroupGraph, DetectsCycleThroughThirdGroup) {
  Graph g = diamond();
  GroupGraph gg(g, g.topological_order());
  NodeId a = g.find_node("a"), b = g.find_node("b"), c = g.find_node("c");
  EXPECT_EQ(gg.check(a, c, 100), MergeCheck::Cycle);
  EXPECT_EQ(gg.check(c, a, 100), MergeCheck::Cycle);  // argument order does not matter
  EXPECT_EQ(gg.check(a, b, 100), MergeCheck::Ok);
  NodeId ab = gg.merge(a, b);
  EXPECT_EQ(gg.find(a), gg.find(b));
  EXPECT_EQ(gg.members(ab).size(), 2u);
  // Now {a,b} -> c directly: no third group in between.
  EXPECT_EQ(gg.check(ab, c, 100), MergeCheck::Ok);
  EXPECT_TRUE(gg.contracted_acyclic());
}

TEST(GroupGraph, PositionsStayTopologicalAfterMerges) {
  // Two chains x->p1->p2 and x->q1->q2 joined by q1 -> p2; merge p1 with p2 after
  // merging q1 with p2's producer side; every edge must go forward in position.
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto p1 = b.op("Relu", {x}, {}, "p1");
  auto q1 = b.op("Neg", {x}, {}, "q1");
  auto p2 = b.op("Add", {p1, q1}, {}, "p2");
  auto q2 = b.op("Exp", {q1}, {}, "q2");
  b.output(b.op("Mul", {p2, q2}, {}, "out"));
  Graph g = b.build();
  GroupGraph gg(g, g.topological_order());
  auto id = [&](const char* n) { return gg.find(g.find_node(n)); };
  ASSERT_EQ(gg.check(id("q1"), id("q2"), 100), MergeCheck::Ok);
  gg.merge(id("q1"), id("q2"));
  ASSERT_EQ(gg.check(id("p1"), id("p2"), 100), MergeCheck::Ok);
  gg.merge(id("p1"), id("p2"));
  for (const auto& n : g.nodes())
    for (ValueId o : n.outputs)
      for (NodeId c : g.value(o).consumers) {
        NodeId from = gg.find(g.find_node(n.name)), to = gg.find(c);
        if (from != to) {
          EXPECT_LT(gg.position(from), gg.position(to)) << n.name;
        }
      }
  EXPECT_TRUE(gg.contracted_acyclic());
}

TEST(GroupGraph, VisitBudgetGivesTooFar) {
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto first = b.op("Relu", {x}, {}, "first");
  auto v = first;
  for (int i = 0; i < 50; ++i) v = b.op("Neg", {v}, {}, "n" + std::to_string(i));
  b.output(b.op("Add", {first, v}, {}, "last"));
  Graph g = b.build();
  GroupGraph gg(g, g.topological_order());
  EXPECT_EQ(gg.check(g.find_node("first"), g.find_node("last"), 10), MergeCheck::TooFar);
  EXPECT_EQ(gg.check(g.find_node("first"), g.find_node("last"), 1000), MergeCheck::Cycle);
}

}  // namespace
}  // namespace fx
