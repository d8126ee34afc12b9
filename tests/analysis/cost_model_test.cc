// SPDX-License-Identifier: Apache-2.0
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
  // max(2224 B / 1e9, 13824 / 1e9) + 1 us: compute bound; plus its relayout (a 3x3 conv:
  // input and output, 1792 B, to NHWC and back) at the data-movement rate (1e9 here).
  EXPECT_NEAR(c.time_s, 13824e-9 + 1e-6 + 1792e-9, 1e-12);
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

TEST(CostModel, UnfusedWhereIsAScalarLoopTheFusedOneIsNot) {
  // The runtime's Where reads its operands through run-time strides one element at a
  // time: a load per operand and the select per element. Fused, the generated loop
  // vectorizes, so the group counts one op per element like the other members.
  GraphBuilder b;
  auto x = b.input("x", {2, 4, 8});
  auto m = b.input("m", {1, 4, 8}, DType::Bool);
  auto d = b.op("Div", {x, testing::scalar(b, "k", 2.f)}, {}, "div", Shape::of({2, 4, 8}));
  auto w =
      b.op("Where", {m, d, testing::scalar(b, "neg", -1e9f)}, {}, "where", Shape::of({2, 4, 8}));
  b.output(b.op("Softmax", {w}, {{"axis", int64_t{-1}}}, "softmax"));
  Graph g = b.build();
  CostModel cm(g, test_profile());
  EXPECT_DOUBLE_EQ(cm.node(g.find_node("div")).flops, 64);
  EXPECT_DOUBLE_EQ(cm.node(g.find_node("where")).flops, 4 * 64);
  Cost f = cm.group(
      std::vector<NodeId>{g.find_node("div"), g.find_node("where"), g.find_node("softmax")});
  EXPECT_DOUBLE_EQ(f.flops, 64 + 64 + 5 * 64);
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

// With a working-set curve, an elementwise kernel whose operands fit in cache streams
// faster than one that goes to memory; the fused kernel of a group is timed by the bytes
// it touches, on the same curve.
TEST(CostModel, BandwidthFollowsTheWorkingSet) {
  GraphBuilder b;
  b.output(b.op("Relu", {b.input("small", {1024})}, {}, "small_relu"));          // 8 KiB
  b.output(b.op("Relu", {b.input("big", {16 * 1024 * 1024})}, {}, "big_relu"));  // 128 MiB
  Graph g = b.build();
  DeviceProfile p = test_profile();
  p.launch_overhead_s = 0;
  p.peak_flops = 1e15;  // memory-bound
  const Cost flat_small = CostModel(g, p).node(g.find_node("small_relu"));
  p.bandwidth_curve.points = {{8.0 * 1024, 8e9}, {128.0 * 1024 * 1024, 1e9}};
  CostModel cm(g, p);
  const Cost& small = cm.node(g.find_node("small_relu"));
  const Cost& big = cm.node(g.find_node("big_relu"));
  EXPECT_NEAR(small.time_s, flat_small.time_s / 8, 1e-12);
  EXPECT_NEAR(big.time_s, double(big.bytes()) / p.bandwidth(KernelClass::Elementwise), 1e-9);
  EXPECT_GT(small.bytes() / small.time_s, 7 * (big.bytes() / big.time_s));
  KernelTerms t{KernelClass::Elementwise, double(small.bytes()), 0, 0};
  t.fused = true;
  EXPECT_NEAR(kernel_time(p, t), small.time_s, 1e-15);
  // A fused epilogue's bytes sit on the same curve as the elementwise loops it replaces.
  KernelTerms e{KernelClass::Conv, 0, 0, 1};  // launch overhead is 0 here
  e.fused = true;
  e.epilogue_bytes = double(small.bytes());
  EXPECT_NEAR(kernel_time(p, e), small.time_s, 1e-15);
}

TEST(CostModel, RelayoutBytesAreASpatialConvsActivations) {
  // The runtime's unfused spatial conv reorders its input to NHWC and its output back on
  // every call; a 1x1 conv, a depthwise conv and other ops run on NCHW as they are.
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 8, 8});
  auto c = testing::conv(b, x, 8, 8, 8, "conv");  // 3x3
  auto w1 = b.constant("w1", testing::zeros({16, 8, 1, 1}));
  auto pw = b.op("Conv", {c, w1}, {}, "pw", Shape::of({1, 16, 8, 8}));
  auto dw_w = b.constant("dw_w", testing::zeros({16, 1, 3, 3}));
  auto dw =
      b.op("Conv", {pw, dw_w}, {{"group", int64_t{16}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
           "dw", Shape::of({1, 16, 8, 8}));
  b.output(b.op("Relu", {dw}, {}, "relu"));
  Graph g = b.build();
  CostModel cm(g, test_profile());
  const Cost& conv = cm.node(g.find_node("conv"));
  EXPECT_EQ(conv.constant_bytes, 8 * 8 * 3 * 3 * 4);  // the weights
  EXPECT_EQ(conv.relayout_bytes, 2 * 8 * 8 * 8 * 4);  // input and output, not the weights
  EXPECT_EQ(terms_of(conv).relayout_bytes, double(conv.relayout_bytes));
  EXPECT_EQ(cm.node(g.find_node("pw")).relayout_bytes, 0);
  EXPECT_EQ(cm.node(g.find_node("pw")).constant_bytes, 16 * 8 * 4);
  EXPECT_EQ(cm.node(g.find_node("dw")).relayout_bytes, 0);
  EXPECT_EQ(cm.node(g.find_node("relu")).relayout_bytes, 0);
  EXPECT_EQ(cm.node(g.find_node("relu")).constant_bytes, 0);
  // Fused, the layout is the codegen's layout plan's: no relayout charged to the group.
  Cost f = cm.group(std::vector<NodeId>{g.find_node("conv"), g.find_node("pw")});
  EXPECT_EQ(f.relayout_bytes, 0);
  EXPECT_EQ(cm.group(std::vector<NodeId>{g.find_node("conv")}).relayout_bytes, conv.relayout_bytes);
  EXPECT_EQ(cm.unfused(std::vector<NodeId>{g.find_node("conv"), g.find_node("pw")}).relayout_bytes,
            conv.relayout_bytes);
  // Planes: only the depthwise conv, whose runtime kernel sets up each of its 16 channel
  // planes apart; the terms carry them and the weights.
  EXPECT_EQ(cm.node(g.find_node("dw")).planes, 16);
  EXPECT_EQ(terms_of(cm.node(g.find_node("dw"))).planes, 16.0);
  EXPECT_EQ(conv.planes, 0);
  EXPECT_EQ(cm.node(g.find_node("pw")).planes, 0);
  EXPECT_EQ(cm.node(g.find_node("relu")).planes, 0);
  EXPECT_EQ(terms_of(conv).constant_bytes, double(8 * 8 * 3 * 3 * 4));
  EXPECT_EQ(cm.group(std::vector<NodeId>{g.find_node("dw")}).planes, 16);
}

// The unfused spatial conv's relayout takes time: its input and output at the
// data-movement rate, on top of its class's time; the fused group pays none, so the
// difference of kernel times credits fusion with it (the conv + ReLU groups of a small
// CNN save mostly that, the ReLU being a fraction of a microsecond).
TEST(CostModel, UnfusedSpatialConvPaysItsRelayout) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 8, 8});
  auto c = testing::conv(b, x, 8, 8, 8, "conv");  // 3x3
  b.output(b.op("Relu", {c}, {}, "relu"));
  Graph g = b.build();
  DeviceProfile p = test_profile();
  p.kernel_classes[static_cast<std::size_t>(KernelClass::DataMovement)].bandwidth_bytes_per_s =
      p.memory_bandwidth_bytes_per_s / 4;  // a transpose is slower than a copy
  CostModel cm(g, p);
  const Cost& conv = cm.node(g.find_node("conv"));
  const double relayout_s = double(conv.relayout_bytes) / p.bandwidth(KernelClass::DataMovement);
  ASSERT_GT(relayout_s, 0);
  EXPECT_NEAR(
      conv.time_s,
      CostModel::time(p, double(conv.bytes()), conv.flops, 1, KernelClass::Conv) + relayout_s,
      1e-15);
  EXPECT_NEAR(kernel_time(p, terms_of(conv)), conv.time_s, 1e-15);
  // Fused: the group's kernel has no relayout.
  KernelTerms fused =
      terms_of(cm.group(std::vector<NodeId>{g.find_node("conv"), g.find_node("relu")}));
  EXPECT_TRUE(fused.fused);
  EXPECT_EQ(relayout_time(p, fused), 0);
  // Run with Winograd on both sides: the reorders are alike, none is charged.
  KernelTerms wino = terms_of(conv);
  wino.winograd = true;
  EXPECT_EQ(relayout_time(p, wino), 0);
  EXPECT_NEAR(kernel_time(p, wino), conv.time_s - relayout_s, 1e-15);
}

TEST(CostModel, KernelClassesOfNodes) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 8, 8});
  auto c = testing::conv(b, x, 8, 8, 8, "conv");
  auto dw_w = b.constant("dw_w", testing::zeros({8, 1, 3, 3}));
  auto dw =
      b.op("Conv", {c, dw_w}, {{"group", int64_t{8}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
           "dw", Shape::of({1, 8, 8, 8}));
  auto r = b.op("Relu", {dw}, {}, "relu");
  auto t = b.op("Transpose", {r}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}, "tr",
                Shape::of({1, 8, 8, 8}));
  b.output(b.op("Softmax", {t}, {{"axis", int64_t{-1}}}, "sm"));
  b.output(
      b.op("MaxPool", {r},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
           "pool", Shape::of({1, 8, 4, 4})));
  Graph g = b.build();
  CostModel cm(g, test_profile());
  EXPECT_EQ(cm.node(g.find_node("conv")).kernel_class, KernelClass::Conv);
  EXPECT_EQ(cm.node(g.find_node("dw")).kernel_class, KernelClass::Depthwise);
  EXPECT_EQ(cm.node(g.find_node("pool")).kernel_class, KernelClass::Pooling);
  EXPECT_EQ(cm.node(g.find_node("relu")).kernel_class, KernelClass::Elementwise);
  EXPECT_EQ(cm.node(g.find_node("tr")).kernel_class, KernelClass::DataMovement);
  EXPECT_EQ(cm.node(g.find_node("sm")).kernel_class, KernelClass::Reduction);
}

TEST(CostModel, TimeUsesTheRatesOfTheKernelsClass) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  b.output(b.op("Relu", {testing::conv(b, x, 3, 4, 8, "conv")}, {}, "relu"));
  Graph g = b.build();
  DeviceProfile p = test_profile();
  p.kernel_classes[static_cast<std::size_t>(KernelClass::Conv)] = {2e9, 4e9};
  p.kernel_classes[static_cast<std::size_t>(KernelClass::Elementwise)] = {0.5e9, 1e9};
  CostModel cm(g, p);
  // Conv: max(2224 B / 2e9, 13824 / 4e9) + 1 us + its 1792 B relayout at the
  // data-movement rate (the profile's 1e9); Relu: 2 x 1 KiB / 0.5e9 + 1 us.
  EXPECT_NEAR(cm.node(g.find_node("conv")).time_s, 13824 / 4e9 + 1e-6 + 1792 / 1e9, 1e-12);
  EXPECT_NEAR(cm.node(g.find_node("relu")).time_s, 2048 / 0.5e9 + 1e-6, 1e-12);
  EXPECT_DOUBLE_EQ(cm.time(4e9, 0, 1, KernelClass::Conv), 2.0 + 1e-6);
}

TEST(CostModel, AnchorGroupIsTheAnchorsKernelWithItsEpilogueBytes) {
  // Conv + BatchNormalization + Relu: the fused kernel is a conv with the Conv's FLOPs
  // only (BN folded, Relu applied on the tile), moving x, W, BN's parameters and y.
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto c = testing::conv(b, x, 3, 4, 8, "conv");
  auto s = b.constant("s", testing::zeros({4}));
  auto bn = b.op("BatchNormalization", {c, s, s, s, s}, {}, "bn");
  b.output(b.op("Relu", {bn}, {}, "relu"));
  Graph g = b.build();
  DeviceProfile p = test_profile();
  p.kernel_classes[static_cast<std::size_t>(KernelClass::Conv)] = {2e9, 4e9};
  CostModel cm(g, p);
  std::vector<NodeId> m{g.find_node("conv"), g.find_node("bn"), g.find_node("relu")};
  Cost f = cm.group(m);
  EXPECT_EQ(f.kernel_class, KernelClass::Conv);
  EXPECT_DOUBLE_EQ(f.flops, cm.node(g.find_node("conv")).flops);
  EXPECT_EQ(f.bytes_read, 3 * 8 * 8 * 4 + 4 * 3 * 3 * 3 * 4 + 4 * 4);  // x, W, s once
  EXPECT_EQ(f.bytes_written, 4 * 8 * 8 * 4);
  // The Conv's own kernel, then the epilogue moves what the Conv does not read: BN's
  // parameters (16 B) and the output (1 KiB), at the elementwise bandwidth (1 GB/s).
  EXPECT_EQ(f.epilogue_bytes, 16 + 4 * 8 * 8 * 4);
  EXPECT_NEAR(f.time_s, 13824 / 4e9 + 1e-6 + (16 + 1024) / 1e9, 1e-12);
  KernelTerms t = terms_of(f);
  EXPECT_EQ(t.bytes, double(cm.node(g.find_node("conv")).bytes()));
  EXPECT_NEAR(kernel_time(p, t), f.time_s, 1e-15);
  // An elementwise chain stays elementwise with its FLOPs summed.
  Cost e = cm.group(std::vector<NodeId>{g.find_node("bn"), g.find_node("relu")});
  EXPECT_EQ(e.kernel_class, KernelClass::Elementwise);
  EXPECT_DOUBLE_EQ(e.flops, cm.node(g.find_node("bn")).flops + cm.node(g.find_node("relu")).flops);
  EXPECT_TRUE(f.fused);
  EXPECT_TRUE(e.fused);
  EXPECT_FALSE(cm.group(std::vector<NodeId>{g.find_node("conv")}).fused);
}

TEST(CostModel, FusedGroupsUseTheFusedRatesOfTheirClass) {
  // Conv + Relu fused: scale x the conv class's time + the epilogue at the conv class's
  // fused epilogue bandwidth; Relu + Softmax: a row kernel, the reduction class scaled.
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto r = b.op("Relu", {testing::conv(b, x, 3, 4, 8, "conv")}, {}, "relu");
  auto r2 = b.op("Relu", {r}, {}, "relu2");
  b.output(b.op("Softmax", {r2}, {{"axis", int64_t{-1}}}, "sm"));
  Graph g = b.build();
  DeviceProfile p = test_profile();
  p.kernel_classes[static_cast<std::size_t>(KernelClass::Conv)] = {2e9, 4e9};
  p.kernel_classes[static_cast<std::size_t>(KernelClass::Reduction)] = {0.25e9, 1e9};
  p.fused_classes[static_cast<std::size_t>(KernelClass::Conv)] = {0.5, 0.25e9};
  p.fused_classes[static_cast<std::size_t>(KernelClass::Reduction)] = {0.2, 0};
  CostModel cm(g, p);
  Cost f = cm.group(std::vector<NodeId>{g.find_node("conv"), g.find_node("relu")});
  ASSERT_TRUE(f.fused);
  // Relu's output leaves the group (relu2 reads it): the epilogue writes 1 KiB.
  EXPECT_EQ(f.epilogue_bytes, 4 * 8 * 8 * 4);
  EXPECT_NEAR(f.time_s, 1e-6 + 0.5 * (13824 / 4e9) + 1024 / 0.25e9, 1e-12);
  EXPECT_NEAR(kernel_time(p, terms_of(f)), f.time_s, 1e-15);
  Cost row = cm.group(std::vector<NodeId>{g.find_node("relu2"), g.find_node("sm")});
  EXPECT_EQ(row.kernel_class, KernelClass::Reduction);
  ASSERT_TRUE(row.fused);
  const double bytes = double(row.bytes()), flops = row.flops;
  EXPECT_NEAR(row.time_s, 1e-6 + 0.2 * std::max(bytes / 0.25e9, flops / 1e9), 1e-12);
  // The same profile without fused rates: scale 1, epilogue at the elementwise bandwidth.
  DeviceProfile plain = p;
  plain.fused_classes = {};
  CostModel cp(g, plain);
  EXPECT_NEAR(cp.group(std::vector<NodeId>{g.find_node("conv"), g.find_node("relu")}).time_s,
              1e-6 + 13824 / 4e9 + 1024 / plain.bandwidth(KernelClass::Elementwise), 1e-12);
}

}  // namespace
}  // namespace fx
