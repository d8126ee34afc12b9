// SPDX-License-Identifier: Apache-2.0
// contract_groups: the fused graph the GUI shows beside the original.
#include <gtest/gtest.h>

#include "analysis/fused_graph.h"
#include "test_graphs.h"

namespace fx {
namespace {

using testing::batch_norm;
using testing::conv;

FusionGroup group(const std::string& id, std::vector<std::string> nodes) {
  FusionGroup g;
  g.id = id;
  g.nodes = std::move(nodes);
  return g;
}

// x -> conv1 -> bn1 -> relu1 -> conv2 -> relu2 -> y
Graph chain() {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 8, 8});
  auto c1 = conv(b, x, 4, 4, 8, "conv1");
  auto n1 = batch_norm(b, c1, 4, "bn1");
  auto r1 = b.op("Relu", {n1}, {}, "relu1");
  auto c2 = conv(b, r1, 4, 4, 8, "conv2");
  b.output(b.op("Relu", {c2}, {}, "relu2"));
  return b.build();
}

TEST(FusedGraph, ContractsAGroupIntoOneKernelNode) {
  const Graph g = chain();
  const FusionGroup a = group("fg-a", {"conv1", "bn1", "relu1"});
  const FusedGraph f = contract_groups(g, {&a});
  ASSERT_EQ(f.graph.node_count(), 3u);
  EXPECT_TRUE(f.skipped.empty());
  const NodeId k = f.kernel_of[std::size_t(g.find_node("bn1"))];
  ASSERT_NE(k, kNoNode);
  EXPECT_EQ(f.kernel_of[std::size_t(g.find_node("conv1"))], k);
  EXPECT_EQ(f.kernel_of[std::size_t(g.find_node("relu1"))], k);
  const Node& kn = f.graph.node(k);
  EXPECT_EQ(kn.name, "fg-a");
  EXPECT_EQ(kn.domain, kFusedKernelDomain);
  EXPECT_EQ(kn.op_type, "Conv+BatchNormalization+Relu");
  EXPECT_TRUE(f.is_kernel(k));
  EXPECT_EQ(f.group_of[std::size_t(k)], 0);
  ASSERT_EQ(f.originals[std::size_t(k)].size(), 3u);
  EXPECT_EQ(f.originals[std::size_t(k)][0], g.find_node("conv1"));
  // External inputs: x, the conv weight and the four BN parameters; the internal
  // tensors conv1:0 and bn1:0 are gone; relu1's output feeds conv2.
  ASSERT_EQ(kn.inputs.size(), 6u);
  EXPECT_EQ(f.graph.value(kn.inputs[0]).name, "x");
  ASSERT_EQ(kn.outputs.size(), 1u);
  EXPECT_EQ(f.graph.value(kn.outputs[0]).name,
            g.value(g.node(g.find_node("relu1")).outputs[0]).name);
  EXPECT_EQ(f.graph.find_value(g.value(g.node(g.find_node("conv1")).outputs[0]).name), kNoValue);
  // Untouched nodes keep their names; the fused graph is a valid DAG.
  const NodeId c2 = f.graph.find_node("conv2");
  ASSERT_NE(c2, kNoNode);
  EXPECT_FALSE(f.is_kernel(c2));
  EXPECT_EQ(f.originals[std::size_t(c2)], std::vector<NodeId>{g.find_node("conv2")});
  EXPECT_EQ(f.graph.value(f.graph.node(c2).inputs[0]).producer, k);
  EXPECT_NO_THROW(f.graph.validate());
  EXPECT_EQ(f.graph.outputs().size(), 1u);
}

TEST(FusedGraph, SkipsGroupsWithUnknownOrSharedNodes) {
  const Graph g = chain();
  const FusionGroup a = group("fg-a", {"conv2", "relu2"});
  const FusionGroup missing = group("fg-b", {"relu1", "nope"});
  const FusionGroup overlap = group("fg-c", {"relu2"});
  const FusedGraph f = contract_groups(g, {&a, &missing, &overlap});
  EXPECT_EQ(f.graph.node_count(), 4u);
  ASSERT_EQ(f.skipped.size(), 2u);
  EXPECT_NE(f.skipped[0].find("nope"), std::string::npos);
  EXPECT_NE(f.skipped[1].find("fg-a"), std::string::npos);
  EXPECT_EQ(f.kernel_of[std::size_t(g.find_node("relu1"))], f.graph.find_node("relu1"));
}

TEST(FusedGraph, DissolvesAGroupThatWouldMakeACycle) {
  // a -> b -> c and a -> c: contracting {a, c} would make a <-> b a cycle.
  GraphBuilder bld;
  auto x = bld.input("x", {4});
  auto a = bld.op("Relu", {x}, {}, "a");
  auto b = bld.op("Neg", {a}, {}, "b");
  bld.output(bld.op("Add", {a, b}, {}, "c"));
  const Graph g = bld.build();
  const FusionGroup bad = group("fg-bad", {"a", "c"});
  const FusedGraph f = contract_groups(g, {&bad});
  EXPECT_EQ(f.graph.node_count(), 3u);
  ASSERT_EQ(f.skipped.size(), 1u);
  EXPECT_NE(f.skipped[0].find("cycle"), std::string::npos);
  EXPECT_NO_THROW(f.graph.validate());
}

TEST(FusedGraph, ShortensLongOpChains) {
  EXPECT_EQ(kernel_op_label({"Add", "Mul"}), "Add+Mul");
  EXPECT_EQ(kernel_op_label({"A", "B", "C", "D", "E"}), "A+…+E (5 ops)");
}

}  // namespace
}  // namespace fx
