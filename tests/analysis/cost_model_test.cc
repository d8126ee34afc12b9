#include "analysis/cost_model.h"

#include <gtest/gtest.h>

#include "test_graphs.h"

namespace fx {
namespace {

using testing::test_profile;

TEST(CostModel, ConvBytesAndFlopsByHand) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  b.output(testing::conv(b, x, 3, 4, 8, "conv"));
  Graph g = b.build();
  CostModel cm(g, test_profile());
  const Cost& c = cm.node(g.find_node("conv"));
  ASSERT_TRUE(c.known);
  EXPECT_EQ(c.bytes_read, 3 * 8 * 8 * 4 + 4 * 3 * 3 * 3 * 4);  // x + W
  EXPECT_EQ(c.bytes_written, 4 * 8 * 8 * 4);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * (4 * 8 * 8) * (3 * 3 * 3));  // 2 x outputs x MACs each
  EXPECT_EQ(c.launches, 1);
  // max(2224 B / 1e9, 13824 / 1e9) + 1 us: compute bound.
  EXPECT_NEAR(c.time_s, 13824e-9 + 1e-6, 1e-12);
  EXPECT_EQ(c.profile, "test-device");
}

TEST(CostModel, MatMulAndGemmFlops) {
  GraphBuilder b;
  auto a = b.input("a", {2, 3});
  auto w = b.constant("w", testing::zeros({3, 5}));
  auto mm = b.op("MatMul", {a, w}, {}, "mm", Shape::of({2, 5}));
  auto w2 = b.constant("w2", testing::zeros({5, 7}));
  auto c = b.constant("c", testing::zeros({7}));
  b.output(b.op("Gemm", {mm, w2, c}, {}, "gemm", Shape::of({2, 7})));
  Graph g = b.build();
  CostModel cm(g, test_profile());
  EXPECT_DOUBLE_EQ(cm.node(g.find_node("mm")).flops, 2.0 * 2 * 5 * 3);
  EXPECT_DOUBLE_EQ(cm.node(g.find_node("gemm")).flops, 2.0 * 2 * 7 * 5 + 2 * 7);
  EXPECT_EQ(cm.node(g.find_node("mm")).bytes(), (6 + 15 + 10) * 4);
}

TEST(CostModel, ElementwiseReductionAndSoftmaxFlops) {
  GraphBuilder b;
  auto x = b.input("x", {4, 16});
  auto r = b.op("Relu", {x}, {}, "relu");
  auto s = b.op("Softmax", {r}, {{"axis", int64_t{-1}}}, "softmax");
  b.output(b.op("ReduceSum", {s}, {{"axes", std::vector<int64_t>{1}}}, "sum", Shape::of({4, 1})));
  Graph g = b.build();
  CostModel cm(g, test_profile());
  EXPECT_DOUBLE_EQ(cm.node(g.find_node("relu")).flops, 64);
  EXPECT_DOUBLE_EQ(cm.node(g.find_node("softmax")).flops, 5 * 64);
  EXPECT_DOUBLE_EQ(cm.node(g.find_node("sum")).flops, 64);  // one add per input element
  // The reduced row (16 floats) is shorter than the element tile, so the tile rules.
  EXPECT_EQ(cm.node(g.find_node("sum")).footprint_bytes, CostModel::kElementTile * 4 * 2);
}

TEST(CostModel, GroupCountsOnlyExternalTraffic) {
  GraphBuilder b;
  auto x = b.input("x", {256});  // 1 KiB
  auto a = b.op("Relu", {x}, {}, "a");
  auto c = b.op("Neg", {a}, {}, "c");
  auto d = b.op("Exp", {c}, {}, "d");
  b.output(d);
  b.output(b.op("Abs", {c}, {}, "outside"));
  Graph g = b.build();
  CostModel cm(g, test_profile());
  std::vector<NodeId> members{g.find_node("a"), g.find_node("c"), g.find_node("d")};
  Cost unf = cm.unfused(members);
  EXPECT_EQ(unf.bytes(), 6 * 1024);
  EXPECT_EQ(unf.launches, 3);
  Cost fused = cm.group(members);
  // Reads x; writes c (used by 'outside') and d (graph output); a stays on chip.
  EXPECT_EQ(fused.bytes_read, 1024);
  EXPECT_EQ(fused.bytes_written, 2 * 1024);
  EXPECT_EQ(fused.launches, 1);
  EXPECT_NEAR(fused.time_s, 3072 / 1e9 + 1e-6, 1e-12);
  EXPECT_EQ(fused.profile, "test-device");
  // Largest member tile (2 operands x 1024 floats) + one on-chip intermediate tile.
  EXPECT_EQ(fused.footprint_bytes, 2 * 1024 * 4 + 1024 * 4);
}

TEST(CostModel, UnknownShapeIsFlaggedNotInvented) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4});
  b.graph().value(x).shape = Shape({Dim::named("batch"), Dim::fixed(4)});
  b.output(b.op("Relu", {x}, {}, "relu"));
  Graph g = b.build();
  CostModel cm(g, test_profile());
  const Cost& c = cm.node(g.find_node("relu"));
  EXPECT_FALSE(c.known);
  EXPECT_NE(c.unknown_reason.find("batch"), std::string::npos) << c.unknown_reason;
  EXPECT_EQ(c.bytes(), 0);
  EXPECT_FALSE(cm.group(std::vector<NodeId>{g.find_node("relu")}).known);
}

TEST(CostModel, TimeIsMaxOfMemoryAndComputePlusLaunches) {
  GraphBuilder b;
  b.output(b.op("Relu", {b.input("x", {4})}, {}, "r"));
  Graph g = b.build();
  CostModel cm(g, test_profile());
  EXPECT_DOUBLE_EQ(cm.time(2e9, 1e9, 2), 2.0 + 2e-6);
  EXPECT_DOUBLE_EQ(cm.time(1e9, 3e9, 0), 3.0);
}

}  // namespace
}  // namespace fx
