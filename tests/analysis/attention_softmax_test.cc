// SPDX-License-Identifier: Apache-2.0
// The attention Softmax as exporters write it, at opt level 2 (the bench level).
//
// ViT-B/16 (torch.nn.MultiheadAttention): the 1/sqrt(d) scale is a Div on q *before*
// q k^T, so the Softmax sits between two MatMuls with nothing elementwise around it.
// It joins no group: MatMul takes only an elementwise epilogue, and a Softmax kernel
// of its own moves the same bytes in the same one launch as the runtime's Softmax, so
// the cost model estimates nothing saved (the honest figure, not a reason to make it a
// group). GPT-2/BERT exports scale the scores after the MatMul: scale + Softmax is one
// row kernel, and the estimate saves the scaled scores' write and read.

#include <gtest/gtest.h>

#include "analysis/cost_model.h"
#include "analysis/fusion_finder.h"
#include "test_graphs.h"

namespace fx {
namespace {

using testing::group_of;
using testing::scalar;

// [1, heads 4, tokens 17, head dim 8]: q k^T is [1, 4, 17, 17].
constexpr int64_t kHeads = 4, kTokens = 17, kDim = 8;
constexpr int64_t kScoreBytes = kHeads * kTokens * kTokens * 4;
const Shape kScores = Shape::of({1, kHeads, kTokens, kTokens}),
            kOut = Shape::of({1, kHeads, kTokens, kDim});

AnalysisResult level2(const Graph& g) {
  FusionOptions o;
  o.opt_level = 2;
  o.threshold = 0;
  return analyze_fusion(g, testing::test_profile(), o);
}

struct Attention {
  ValueId q, kt, v;
};

Attention attention_inputs(GraphBuilder& b) {
  return {b.input("q", {1, kHeads, kTokens, kDim}), b.input("kt", {1, kHeads, kDim, kTokens}),
          b.input("v", {1, kHeads, kTokens, kDim})};
}

// ViT: Div(q) -> MatMul -> Softmax -> MatMul.
Graph vit_attention() {
  GraphBuilder b;
  Attention a = attention_inputs(b);
  auto qs = b.op("Div", {a.q, scalar(b, "sqrt_d", 2.828427f)}, {}, "q_scale");
  auto s = b.op("MatMul", {qs, a.kt}, {}, "qk", kScores);
  auto p = b.op("Softmax", {s}, {{"axis", int64_t{-1}}}, "softmax");
  b.output(b.op("MatMul", {p, a.v}, {}, "pv", kOut));
  return b.build();
}

// GPT-2 / BERT: MatMul -> Div -> Softmax -> MatMul.
Graph scaled_scores_attention() {
  GraphBuilder b;
  Attention a = attention_inputs(b);
  auto s = b.op("MatMul", {a.q, a.kt}, {}, "qk", kScores);
  auto sc = b.op("Div", {s, scalar(b, "sqrt_d", 2.828427f)}, {}, "scale");
  auto p = b.op("Softmax", {sc}, {{"axis", int64_t{-1}}}, "softmax");
  b.output(b.op("MatMul", {p, a.v}, {}, "pv", kOut));
  return b.build();
}

TEST(AttentionSoftmax, VitSoftmaxBetweenTwoMatMulsJoinsNoGroup) {
  Graph g = vit_attention();
  AnalysisResult r = level2(g);
  EXPECT_EQ(group_of(r, "softmax"), nullptr);
  // Why, edge by edge: the MatMul before takes no reduction as its epilogue, the
  // MatMul after starts its own kernel.
  const NotFused* in = testing::not_fused(r, "qk", "softmax");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->reason, NotFusedReason::KindRule);
  EXPECT_NE(in->text.find("takes only an elementwise epilogue"), std::string::npos) << in->text;
  const NotFused* out = testing::not_fused(r, "softmax", "pv");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->reason, NotFusedReason::KindRule);
}

TEST(AttentionSoftmax, ALoneSoftmaxKernelIsEstimatedToSaveNothing) {
  // What a "Softmax row kernel" group of the ViT Softmax alone would be worth to the
  // cost model: the same bytes (scores read once, probabilities written once), one
  // launch either way, the same time.
  Graph g = vit_attention();
  CostModel cm(g, testing::test_profile());
  const NodeId sm = g.find_node("softmax");
  ASSERT_NE(sm, kNoNode);
  const std::vector<NodeId> alone{sm};
  const Cost fused = cm.group(alone), unfused = cm.unfused(alone);
  ASSERT_TRUE(fused.known) << fused.unknown_reason;
  EXPECT_EQ(fused.bytes(), 2 * kScoreBytes);
  EXPECT_EQ(fused.bytes(), unfused.bytes());
  EXPECT_EQ(fused.launches, unfused.launches);
  EXPECT_DOUBLE_EQ(fused.time_s, unfused.time_s);
}

TEST(AttentionSoftmax, ScaleAfterTheMatMulMakesAScaleSoftmaxRowKernel) {
  Graph g = scaled_scores_attention();
  AnalysisResult r = level2(g);
  const FusionGroup* sm = group_of(r, "softmax");
  ASSERT_NE(sm, nullptr);
  EXPECT_NE(std::find(sm->nodes.begin(), sm->nodes.end(), "scale"), sm->nodes.end()) << sm->pattern;
  // Whether the scale ends up with the Softmax or as the MatMul's epilogue, grouping
  // saves at least the scaled scores' write and read, and one launch.
  EXPECT_GE(sm->estimate.bytes_before - sm->estimate.bytes_after, 2 * kScoreBytes);
  EXPECT_GE(sm->estimate.launches_before - sm->estimate.launches_after, 1);
}

}  // namespace
}  // namespace fx
