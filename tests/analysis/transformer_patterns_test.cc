// SPDX-License-Identifier: Apache-2.0
// Seed patterns of transformer blocks at opt level 1: LayerNorm (decomposed and as an op),
// residual Add + LayerNorm, LayerNorm + MatMul, GELU (erf and tanh), scale + mask + Softmax.
#include <gtest/gtest.h>

#include "analysis/fusion_finder.h"
#include "test_graphs.h"

namespace fx {
namespace {

using testing::group_of;
using testing::scalar;
using testing::sorted;

AnalysisResult level1(const Graph& g) {
  FusionOptions o;
  o.opt_level = 1;
  return analyze_fusion(g, testing::test_profile(), o);
}

// The nine ops exporters write for LayerNorm over `axis` of [1, 8, 16]; returns the output.
ValueId decomposed_layer_norm(GraphBuilder& b, ValueId x, int64_t axis = -1) {
  Shape reduced = axis == -1 ? Shape::of({1, 8, 1}) : Shape::of({1, 1, 16});
  std::vector<int64_t> axes{axis};
  auto m = b.op("ReduceMean", {x}, {{"axes", axes}}, "ln_mean", reduced);
  auto d = b.op("Sub", {x, m}, {}, "ln_sub");
  auto p = b.op("Pow", {d, scalar(b, "two", 2.f)}, {}, "ln_pow");
  auto v = b.op("ReduceMean", {p}, {{"axes", axes}}, "ln_var", reduced);
  auto e = b.op("Add", {v, scalar(b, "eps", 1e-5f)}, {}, "ln_eps");
  auto s = b.op("Sqrt", {e}, {}, "ln_sqrt");
  auto n = b.op("Div", {d, s}, {}, "ln_div");
  auto g = b.op("Mul", {n, b.constant("gamma", testing::zeros({16}))}, {}, "ln_gamma");
  return b.op("Add", {g, b.constant("beta", testing::zeros({16}))}, {}, "ln_beta");
}

const std::vector<std::string> kLayerNormNodes = {
    "ln_mean", "ln_sub", "ln_pow", "ln_var", "ln_eps", "ln_sqrt", "ln_div", "ln_gamma", "ln_beta"};

TEST(TransformerPatterns, DecomposedLayerNormIsOneOp) {
  GraphBuilder b;
  b.output(decomposed_layer_norm(b, b.input("x", {1, 8, 16})));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "layer_norm");
  EXPECT_EQ(sorted(r.groups[0].nodes), sorted(kLayerNormNodes));
  EXPECT_EQ(r.kernels_after, 1);
}

TEST(TransformerPatterns, LayerNormJoinsFollowingMatMulOverLastAxis) {
  GraphBuilder b;
  auto n = decomposed_layer_norm(b, b.input("x", {1, 8, 16}));
  b.output(b.op("MatMul", {n, b.constant("w", testing::zeros({16, 16}))}, {}, "fc"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].nodes.size(), 10u);
  EXPECT_EQ(r.groups[0].nodes.back(), "fc");
}

TEST(TransformerPatterns, LayerNormOverAnotherAxisDoesNotJoinMatMul) {
  GraphBuilder b;
  auto n = decomposed_layer_norm(b, b.input("x", {1, 8, 16}), 1);
  b.output(b.op("MatMul", {n, b.constant("w", testing::zeros({16, 16}))}, {}, "fc"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(group_of(r, "fc"), nullptr);
  EXPECT_EQ(r.groups[0].nodes.size(), 9u);
}

TEST(TransformerPatterns, ResidualAddJoinsLayerNormalizationOp) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 16});
  auto y = b.input("y", {1, 8, 16});
  auto sum = b.op("Add", {x, y}, {}, "residual");
  b.output(b.op(
      "LayerNormalization",
      {sum, b.constant("gamma", testing::zeros({16})), b.constant("beta", testing::zeros({16}))},
      {{"axis", int64_t{-1}}}, "ln"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "add_layer_norm");
  EXPECT_EQ(sorted(r.groups[0].nodes), sorted({"residual", "ln"}));
}

TEST(TransformerPatterns, ResidualSumUsedLaterStaysApartAtLevel1) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 16});
  auto sum = b.op("Add", {x, b.input("y", {1, 8, 16})}, {}, "residual");
  auto n = b.op(
      "LayerNormalization",
      {sum, b.constant("gamma", testing::zeros({16})), b.constant("beta", testing::zeros({16}))},
      {{"axis", int64_t{-1}}}, "ln");
  b.output(b.op("Add", {n, sum}, {}, "next_residual"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  EXPECT_EQ(group_of(r, "residual"), nullptr);
}

ValueId erf_gelu(GraphBuilder& b, ValueId x, float sqrt2 = 1.4142135f) {
  auto d = b.op("Div", {x, scalar(b, "sqrt2", sqrt2)}, {}, "div");
  auto e = b.op("Erf", {d}, {}, "erf");
  auto p = b.op("Add", {e, scalar(b, "one", 1.f)}, {}, "plus1");
  auto t = b.op("Mul", {x, p}, {}, "mul");
  return b.op("Mul", {t, scalar(b, "half", 0.5f)}, {}, "half");
}

TEST(TransformerPatterns, ErfGelu) {
  GraphBuilder b;
  auto x = b.op("Relu", {b.input("in", {8, 64})}, {}, "producer");
  b.output(erf_gelu(b, x));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "gelu_erf");
  EXPECT_EQ(sorted(r.groups[0].nodes), sorted({"div", "erf", "plus1", "mul", "half"}));
}

TEST(TransformerPatterns, ErfWithWrongConstantIsNotGelu) {
  GraphBuilder b;
  b.output(erf_gelu(b, b.input("x", {8, 64}), 2.0f));
  Graph g = b.build();
  EXPECT_TRUE(level1(g).groups.empty());
}

TEST(TransformerPatterns, TanhGelu) {
  GraphBuilder b;
  auto x = b.input("x", {8, 64});
  auto cube = b.op("Pow", {x, scalar(b, "three", 3.f)}, {}, "pow");
  auto k = b.op("Mul", {cube, scalar(b, "k", 0.044715f)}, {}, "k");
  auto inner = b.op("Add", {x, k}, {}, "inner");
  auto s = b.op("Mul", {inner, scalar(b, "c", 0.7978846f)}, {}, "scale");
  auto t = b.op("Tanh", {s}, {}, "tanh");
  auto p = b.op("Add", {t, scalar(b, "one", 1.f)}, {}, "plus1");
  auto h = b.op("Mul", {x, scalar(b, "half", 0.5f)}, {}, "halfx");
  b.output(b.op("Mul", {h, p}, {}, "out"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "gelu_tanh");
  EXPECT_EQ(r.groups[0].nodes.size(), 8u);
}

TEST(TransformerPatterns, ScaleMaskSoftmax) {
  GraphBuilder b;
  auto s = b.input("scores", {1, 4, 8, 8});
  auto sc = b.op("Mul", {s, scalar(b, "scale", 0.125f)}, {}, "scale");
  auto m = b.op("Add", {sc, b.input("mask", {1, 1, 8, 8})}, {}, "mask");
  b.output(b.op("Softmax", {m}, {{"axis", int64_t{-1}}}, "softmax"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "scale_mask_softmax");
  EXPECT_EQ(r.groups[0].nodes, (std::vector<std::string>{"scale", "mask", "softmax"}));
}

// GPT-2's causal attention: a bool mask selects the scaled scores or a constant fill.
TEST(TransformerPatterns, ScaleWhereMaskSoftmax) {
  GraphBuilder b;
  auto s = b.input("scores", {1, 4, 8, 8});
  auto sc = b.op("Div", {s, scalar(b, "scale", 8.f)}, {}, "scale");
  auto mask = b.input("mask", {8, 8}, DType::Bool);
  auto w = b.op("Where", {mask, sc, scalar(b, "fill", -1e4f)}, {}, "where", Shape::of({1, 4, 8, 8}),
                DType::Float32);
  b.output(b.op("Softmax", {w}, {{"axis", int64_t{-1}}}, "softmax"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "scale_mask_softmax");
  EXPECT_EQ(r.groups[0].nodes, (std::vector<std::string>{"scale", "where", "softmax"}));
}

TEST(TransformerPatterns, WhereBetweenTwoTensorsIsNoMask) {
  GraphBuilder b;
  auto mask = b.input("mask", {8, 8}, DType::Bool);
  auto w = b.op("Where", {mask, b.input("a", {8, 8}), b.input("b", {8, 8})}, {}, "where",
                Shape::of({8, 8}), DType::Float32);
  b.output(b.op("Softmax", {w}, {{"axis", int64_t{-1}}}, "softmax"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  EXPECT_TRUE(r.groups.empty());
}

TEST(TransformerPatterns, LoneSoftmaxIsNoPattern) {
  GraphBuilder b;
  b.output(b.op("Softmax", {b.op("Relu", {b.input("s", {4, 8})}, {}, "relu")}, {}, "softmax"));
  Graph g = b.build();
  AnalysisResult r = level1(g);
  EXPECT_TRUE(r.groups.empty());
  const NotFused* nf = testing::not_fused(r, "relu", "softmax");
  ASSERT_NE(nf, nullptr);
  EXPECT_EQ(nf->reason, NotFusedReason::OptLevel);
}

}  // namespace
}  // namespace fx
