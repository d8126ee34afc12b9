// SPDX-License-Identifier: Apache-2.0
// Seed patterns around convolutions and linear layers, at opt level 1.
#include <gtest/gtest.h>

#include "analysis/fusion_finder.h"
#include "test_graphs.h"

namespace fx {
namespace {

using testing::group_of;
using testing::sorted;

AnalysisResult level1(const Graph& g) {
  FusionOptions o;
  o.opt_level = 1;
  return analyze_fusion(g, testing::test_profile(), o);
}

TEST(ConvPatterns, ConvBnReluFolds) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 16, 16});
  auto y = testing::batch_norm(b, testing::conv(b, x, 4, 4, 16, "conv"), 4, "bn");
  b.output(b.op("Relu", {y}, {}, "relu"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "conv_bn_act");
  EXPECT_EQ(r.groups[0].nodes, (std::vector<std::string>{"conv", "bn", "relu"}));
  EXPECT_EQ(r.groups[0].estimate.launches_saved(), 2);
  EXPECT_EQ(r.kernels_before, 3);
  EXPECT_EQ(r.kernels_after, 1);
  // Two 4 KiB intermediates not written and not read back.
  EXPECT_EQ(r.groups[0].estimate.bytes_saved(), 4 * 4096);
  EXPECT_EQ(r.bytes_before - r.bytes_after, 4 * 4096);
}

class ConvBnActivation : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvBnActivation, ActivationJoinsTheFold) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 16, 16});
  auto y = testing::batch_norm(b, testing::conv(b, x, 4, 4, 16, "conv"), 4, "bn");
  b.output(b.op(GetParam(), {y}, {}, "act"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].nodes.size(), 3u) << GetParam();
}
INSTANTIATE_TEST_SUITE_P(Activations, ConvBnActivation,
                         ::testing::Values("LeakyRelu", "Clip", "HardSwish", "HardSigmoid",
                                           "Sigmoid"));

TEST(ConvPatterns, ConvBnSiluFromSigmoidTimesInput) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 16, 16});
  auto y = testing::batch_norm(b, testing::conv(b, x, 4, 4, 16, "conv"), 4, "bn");
  auto s = b.op("Sigmoid", {y}, {}, "sig");
  b.output(b.op("Mul", {y, s}, {}, "mul"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(sorted(r.groups[0].nodes), sorted({"conv", "bn", "sig", "mul"}));
}

TEST(ConvPatterns, BnWithOutsideConsumerIsNotFoldedAtLevel1) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 16, 16});
  auto c = testing::conv(b, x, 4, 4, 16, "conv");
  b.output(b.op("Relu", {testing::batch_norm(b, c, 4, "bn")}, {}, "relu"));
  b.output(b.op("Sigmoid", {c}, {}, "other"));  // the conv output is used elsewhere too
  Graph g = b.build();
  AnalysisResult r = level1(g);
  EXPECT_EQ(group_of(r, "bn"), nullptr);
  const NotFused* nf = testing::not_fused(r, "conv", "bn");
  ASSERT_NE(nf, nullptr);
  EXPECT_EQ(nf->reason, NotFusedReason::OutsideConsumer);
  EXPECT_NE(nf->text.find("other"), std::string::npos) << nf->text;
  // Level 2 materializes the shared value and fuses anyway (multi-output).
  FusionOptions o2;
  o2.opt_level = 2;
  AnalysisResult r2 = analyze_fusion(g, testing::test_profile(), o2);
  ASSERT_NE(group_of(r2, "bn"), nullptr);
  EXPECT_EQ(group_of(r2, "bn"), group_of(r2, "conv"));
}

TEST(ConvPatterns, ConvBiasAddLeakyRelu) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 16, 16});
  auto c = testing::conv(b, x, 4, 4, 16, "conv");
  auto a = b.op("Add", {c, b.constant("bias", testing::zeros({1, 4, 1, 1}))}, {}, "bias_add");
  b.output(b.op("LeakyRelu", {a}, {{"alpha", 0.1f}}, "lrelu"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "conv_bias_act");
  EXPECT_EQ(r.groups[0].nodes, (std::vector<std::string>{"conv", "bias_add", "lrelu"}));
}

TEST(ConvPatterns, ConvWhoseOutputIsAGraphOutputKeepsItsActivationApart) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 16, 16});
  auto c = testing::conv(b, x, 4, 4, 16, "conv");
  b.output(c);
  b.output(b.op("Relu", {c}, {}, "relu"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  EXPECT_TRUE(r.groups.empty());
}

TEST(ConvPatterns, MatMulAddRelu) {
  GraphBuilder b;
  auto x = b.input("x", {8, 16});
  auto m = b.op("MatMul", {x, b.constant("w", testing::zeros({16, 16}))}, {}, "mm");
  auto a = b.op("Add", {m, b.constant("bias", testing::zeros({16}))}, {}, "add");
  b.output(b.op("Relu", {a}, {}, "relu"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "matmul_add_act");
  EXPECT_EQ(r.groups[0].nodes.size(), 3u);
}

TEST(ConvPatterns, MatMulAddGeluDecomposed) {
  GraphBuilder b;
  auto x = b.input("x", {8, 16});
  auto m = b.op("MatMul", {x, b.constant("w", testing::zeros({16, 16}))}, {}, "mm");
  auto a = b.op("Add", {m, b.constant("bias", testing::zeros({16}))}, {}, "add");
  auto d = b.op("Div", {a, testing::scalar(b, "sqrt2", 1.4142135f)}, {}, "div");
  auto e = b.op("Erf", {d}, {}, "erf");
  auto p = b.op("Add", {e, testing::scalar(b, "one", 1.f)}, {}, "plus1");
  auto t = b.op("Mul", {a, p}, {}, "mul");
  b.output(b.op("Mul", {t, testing::scalar(b, "half", 0.5f)}, {}, "half"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].nodes.size(), 7u);
  EXPECT_EQ(r.groups[0].pattern, "matmul_add_act");
}

TEST(ConvPatterns, CustomActivationAfterAnchorIsItsEpilogue) {
  // Mish written out: x * tanh(softplus(x)); no fixed pattern names it.
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 16, 16});
  auto c = testing::conv(b, x, 4, 4, 16, "conv");
  auto sp = b.op("Softplus", {c}, {}, "softplus");
  auto th = b.op("Tanh", {sp}, {}, "tanh");
  b.output(b.op("Mul", {c, th}, {}, "mul"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "anchor_epilogue");
  EXPECT_EQ(sorted(r.groups[0].nodes), sorted({"conv", "softplus", "tanh", "mul"}));
}

TEST(ConvPatterns, DisabledPatternIsSkipped) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 16, 16});
  auto y = testing::batch_norm(b, testing::conv(b, x, 4, 4, 16, "conv"), 4, "bn");
  b.output(y);
  Graph g = b.build();
  FusionOptions o;
  o.opt_level = 1;
  o.disabled_patterns = {"conv_bn_act"};
  // BN is a per-channel affine: the generic anchor epilogue still takes it.
  AnalysisResult r = analyze_fusion(g, testing::test_profile(), o);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "anchor_epilogue");
  o.disabled_patterns.push_back("anchor_epilogue");
  EXPECT_TRUE(analyze_fusion(g, testing::test_profile(), o).groups.empty());
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

TEST(ConvPatterns, SwishWithBetaAndDecomposedHardSwish) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 16, 16});
  auto c1 = testing::conv(b, x, 4, 4, 16, "conv1");
  auto bx = b.op("Mul", {c1, testing::scalar(b, "beta", 1.702f)}, {}, "beta_x");
  auto s = b.op("Sigmoid", {bx}, {}, "sig");
  auto sw = b.op("Mul", {c1, s}, {}, "swish");
  auto c2 = testing::conv(b, sw, 4, 4, 16, "conv2");
  auto hs = b.op("HardSigmoid", {c2}, {}, "hsig");
  b.output(b.op("Mul", {c2, hs}, {}, "hswish"));
  Graph g = b.build();
  FusionOptions o;
  o.opt_level = 1;
  AnalysisResult r = analyze_fusion(g, testing::test_profile(), o);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].pattern, "conv_bias_act");
  EXPECT_EQ(sorted(r.groups[0].nodes), sorted({"conv1", "beta_x", "sig", "swish"}));
  EXPECT_EQ(sorted(r.groups[1].nodes), sorted({"conv2", "hsig", "hswish"}));
}

}  // namespace
}  // namespace fx
