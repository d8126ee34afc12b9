// SPDX-License-Identifier: Apache-2.0
// Levels, legality and "why not" reasons of the finder on small graphs.
#include "analysis/fusion_finder.h"

#include <gtest/gtest.h>

#include "test_graphs.h"
#include "util/error.h"

namespace fx {
namespace {

using testing::group_of;
using testing::not_fused;

AnalysisResult at(const Graph& g, int level, double threshold = 0.30,
                  DeviceProfile p = testing::test_profile()) {
  FusionOptions o;
  o.opt_level = level;
  o.threshold = threshold;
  return analyze_fusion(g, p, o);
}

Graph chain() {  // x -> relu -> neg -> exp
  GraphBuilder b;
  auto x = b.input("x", {1024});
  b.output(b.op("Exp", {b.op("Neg", {b.op("Relu", {x}, {}, "relu")}, {}, "neg")}, {}, "exp"));
  return b.build();
}

TEST(FusionFinder, LevelZeroFusesNothingAndSaysSo) {
  Graph g = chain();
  AnalysisResult r = at(g, 0);
  EXPECT_TRUE(r.groups.empty());
  EXPECT_EQ(r.kernels_before, r.kernels_after);
  EXPECT_EQ(r.bytes_before, r.bytes_after);
  ASSERT_EQ(r.not_fused.size(), 2u);
  EXPECT_EQ(r.not_fused[0].reason, NotFusedReason::OptLevel);
}

TEST(FusionFinder, LevelTwoFusesElementwiseChain) {
  Graph g = chain();
  AnalysisResult r = at(g, 2);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].nodes, (std::vector<std::string>{"relu", "neg", "exp"}));
  EXPECT_EQ(r.groups[0].pattern, "auto_vertical");
  EXPECT_EQ(r.kernels_before, 3);
  EXPECT_EQ(r.kernels_after, 1);
  EXPECT_EQ(r.bytes_before, 6 * 4096);
  EXPECT_EQ(r.bytes_after, 2 * 4096);
  EXPECT_TRUE(r.not_fused.empty());
  EXPECT_EQ(r.device, "test-device");
  EXPECT_EQ(r.groups[0].estimate.profile, "test-device");
  EXPECT_EQ(r.groups[0].id, group_id_for({"exp", "neg", "relu"}));
}

// Fused kernels compute in float32 only: the same chain in float16 (or float64) forms no
// group, and the why-not says so, instead of a group that would be excluded when built.
TEST(FusionFinder, NonFloat32ChainFormsNoGroupAndSaysWhy) {
  for (DType d : {DType::Float16, DType::Float64}) {
    GraphBuilder b;
    auto x = b.input("x", {1024}, d);
    b.output(b.op("Exp", {b.op("Neg", {b.op("Relu", {x}, {}, "relu")}, {}, "neg")}, {}, "exp"));
    Graph g = b.build();
    AnalysisResult r = at(g, 2);
    EXPECT_TRUE(r.groups.empty()) << dtype_name(d);
    EXPECT_EQ(r.kernels_after, r.kernels_before);
    const NotFused* nf = not_fused(r, "relu", "neg");
    ASSERT_NE(nf, nullptr);
    EXPECT_EQ(nf->reason, NotFusedReason::DtypeMismatch);
    EXPECT_NE(nf->text.find("float32 only"), std::string::npos) << nf->text;
  }
}
TEST(FusionFinder, ThresholdDecides) {
  GraphBuilder b;
  auto x = b.input("x", {1024});
  b.output(b.op("Neg", {b.op("Relu", {x}, {}, "relu")}, {}, "neg"));
  Graph g = b.build();
  // Fusing removes 2 of 4 tensor transfers: a 50% traffic reduction.
  EXPECT_EQ(at(g, 2, 0.50).groups.size(), 1u);
  AnalysisResult r = at(g, 2, 0.51);
  EXPECT_TRUE(r.groups.empty());
  const NotFused* nf = not_fused(r, "relu", "neg");
  ASSERT_NE(nf, nullptr);
  EXPECT_EQ(nf->reason, NotFusedReason::BelowThreshold);
  EXPECT_NE(nf->text.find("50.0%"), std::string::npos) << nf->text;
}

// A plan made on another profile (fxc analyze --plan): exactly its groups are estimated,
// those the search would not propose (below the threshold, or two members of a longer
// chain) as well, and none it would.
TEST(FusionFinder, FixedGroupsAreEstimatedAsThePlanSaysWithoutSearching) {
  Graph g = chain();
  FusionOptions o;
  o.threshold = 0.9;  // the search fuses nothing at this threshold
  EXPECT_TRUE(analyze_fusion(g, testing::test_profile(), o).groups.empty());
  o.fixed_groups = std::vector<FixedGroup>{{{"neg", "exp"}, "auto_vertical"},
                                           {{"relu", "missing"}, "auto_vertical"}};
  AnalysisResult r = analyze_fusion(g, testing::test_profile(), o);
  ASSERT_EQ(r.groups.size(), 1u);  // a group naming a node the graph lacks is left out
  EXPECT_EQ(r.groups[0].nodes, (std::vector<std::string>{"neg", "exp"}));
  EXPECT_EQ(r.groups[0].pattern, "auto_vertical");
  EXPECT_EQ(r.kernels_after, r.kernels_before - 1);
  EXPECT_EQ(r.bytes_after, r.bytes_before - 2 * 4096);
  EXPECT_GT(r.groups[0].estimate.time_saved_s(), 0);
  // The search at the default threshold would fuse all three; the plan keeps two.
  o.threshold = 0.3;
  EXPECT_EQ(analyze_fusion(g, testing::test_profile(), o).groups[0].nodes.size(), 2u);
  // An empty plan estimates no group.
  o.fixed_groups = std::vector<FixedGroup>{};
  EXPECT_TRUE(analyze_fusion(g, testing::test_profile(), o).groups.empty());
}

TEST(FusionFinder, CyclePairIsRejectedWithReason) {
  // a feeds c directly and through an opaque op b: {a, c} would need b before and after.
  GraphBuilder b;
  auto x = b.input("x", {1024});
  auto a = b.op("Relu", {x}, {}, "a");
  auto m = b.op("MyOp", {a}, {}, "b");
  b.graph().node(b.graph().find_node("b")).domain = "com.example";
  b.output(b.op("Add", {a, m}, {}, "c"));
  Graph g = b.build();
  AnalysisResult r = at(g, 2);
  EXPECT_TRUE(r.groups.empty());
  ASSERT_NE(not_fused(r, "a", "c"), nullptr);
  EXPECT_EQ(not_fused(r, "a", "c")->reason, NotFusedReason::WouldCreateCycle);
  ASSERT_NE(not_fused(r, "a", "b"), nullptr);
  EXPECT_EQ(not_fused(r, "a", "b")->reason, NotFusedReason::OpaqueOp);
  EXPECT_NE(explain_pair(r, "a", "c").find("would_create_cycle"), std::string::npos);
  EXPECT_NE(explain_pair(r, "c", "a").find("cycle"), std::string::npos);
}

TEST(FusionFinder, OverCapacityIsRejected) {
  DeviceProfile tiny = testing::test_profile();
  tiny.onchip_capacity_bytes = 4096;  // a 2-operand 1024-float tile alone is 8 KiB
  AnalysisResult r = at(chain(), 2, 0.30, tiny);
  EXPECT_TRUE(r.groups.empty());
  ASSERT_NE(not_fused(r, "relu", "neg"), nullptr);
  EXPECT_EQ(not_fused(r, "relu", "neg")->reason, NotFusedReason::OverCapacity);
}

TEST(FusionFinder, DtypeMismatchIsRejected) {
  GraphBuilder b;
  auto x = b.input("x", {1024}, DType::Float16);
  auto h = b.op("Relu", {x}, {}, "half");
  b.output(b.op("Add", {h, b.input("y", {1024})}, {}, "add", {}, DType::Float32));
  Graph g = b.build();
  AnalysisResult r = at(g, 2, 0.0);
  ASSERT_NE(not_fused(r, "half", "add"), nullptr);
  EXPECT_EQ(not_fused(r, "half", "add")->reason, NotFusedReason::DtypeMismatch);
}

TEST(FusionFinder, ControlFlowAndUnknownShapesAreReasons) {
  GraphBuilder b;
  auto x = b.input("x", {1024});
  auto r1 = b.op("Relu", {x}, {}, "relu");
  b.output(b.op("If", {r1}, {}, "if"));
  auto s = b.input("s", {1});
  b.graph().value(s).shape = Shape({Dim::named("n")});
  b.output(b.op("Neg", {b.op("Relu", {s}, {}, "sym")}, {}, "symneg"));
  Graph g = b.build();
  AnalysisResult r = at(g, 2);
  ASSERT_NE(not_fused(r, "relu", "if"), nullptr);
  EXPECT_EQ(not_fused(r, "relu", "if")->reason, NotFusedReason::ControlFlow);
  ASSERT_NE(not_fused(r, "sym", "symneg"), nullptr);
  EXPECT_EQ(not_fused(r, "sym", "symneg")->reason, NotFusedReason::UnknownShape);
  EXPECT_EQ(r.unknown_cost_nodes, 2);
}

TEST(FusionFinder, NoReduceToReduce) {
  GraphBuilder b;
  auto x = b.input("x", {64, 64});
  std::vector<int64_t> ax{1};
  auto s = b.op("ReduceSum", {x}, {{"axes", ax}}, "sum", Shape::of({64, 1}));
  auto r = b.op("Relu", {s}, {}, "relu");
  b.output(b.op("ReduceMax", {r}, {{"axes", std::vector<int64_t>{0}}}, "max", Shape::of({1, 1})));
  Graph g = b.build();
  AnalysisResult res = at(g, 2, 0.0);
  EXPECT_NE(group_of(res, "sum"), group_of(res, "max"));
  bool kind_rule = false;
  for (const auto& nf : res.not_fused) kind_rule |= nf.reason == NotFusedReason::KindRule;
  EXPECT_TRUE(kind_rule);
}

TEST(FusionFinder, AnchorTakesOnlyElementwiseEpilogue) {
  GraphBuilder b;
  auto x = b.input("x", {8, 16});
  auto m = b.op("MatMul", {x, b.constant("w", testing::zeros({16, 16}))}, {}, "mm");
  auto t = b.op("Transpose", {m}, {{"perm", std::vector<int64_t>{1, 0}}}, "tr", Shape::of({16, 8}));
  b.output(t);
  Graph g = b.build();
  AnalysisResult r = at(g, 2, 0.0);
  EXPECT_TRUE(r.groups.empty());
  ASSERT_NE(not_fused(r, "mm", "tr"), nullptr);
  EXPECT_EQ(not_fused(r, "mm", "tr")->reason, NotFusedReason::KindRule);
}

TEST(FusionFinder, LevelThreeFusesQkvSiblings) {
  GraphBuilder b;
  auto a = b.op("Relu", {b.input("x", {1, 8, 16})}, {}, "ln");
  for (const char* n : {"q", "k", "v"})
    b.output(
        b.op("MatMul", {a, b.constant(std::string(n) + "_w", testing::zeros({16, 16}))}, {}, n));
  Graph g = b.build();
  EXPECT_EQ(group_of(at(g, 2, 0.0), "q"), nullptr);
  AnalysisResult r = at(g, 3, 0.0);
  const FusionGroup* qkv = group_of(r, "q");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(testing::sorted(qkv->nodes), testing::sorted({"q", "k", "v"}));
  EXPECT_EQ(qkv->pattern, "horizontal");
  EXPECT_EQ(qkv->estimate.bytes_saved(), 2 * 8 * 16 * 4);  // the shared input read once
}

TEST(FusionFinder, InvalidLevelThrows) {
  FusionOptions o;
  o.opt_level = 7;
  EXPECT_THROW(analyze_fusion(chain(), testing::test_profile(), o), Error);
}

TEST(FusionFinder, ExplainPairForFusedAndUnrelatedNodes) {
  AnalysisResult r = at(chain(), 2);
  EXPECT_NE(explain_pair(r, "relu", "exp").find("fused together"), std::string::npos);
  EXPECT_NE(explain_pair(r, "relu", "nope").find("not adjacent"), std::string::npos);
}

TEST(FusionFinder, GroupIdsAreStableAndOrderFree) {
  EXPECT_EQ(group_id_for({"a", "b"}), group_id_for({"b", "a"}));
  EXPECT_NE(group_id_for({"a", "b"}), group_id_for({"a", "c"}));
  EXPECT_EQ(group_id_for({"a"}).rfind("fg-", 0), 0u);
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

TEST(FusionFinder, MalformedNodesDoNotCrash) {
  // Wrong arities (a one-input Div, an input-less Softmax, an Erf with two outputs) are
  // the importer's problem to report; the analysis must still run.
  GraphBuilder b;
  auto x = b.input("x", {64});
  auto d = b.op("Div", {x}, {}, "div1");
  auto e = b.op_multi("Erf", {d}, 2, {}, "erf2");
  b.output(b.op("Add", {e[0]}, {}, "add1"));
  b.output(b.op("Softmax", {}, {}, "lonely"));
  b.output(b.op("ReduceMean", {}, {}, "rm0"));
  b.output(b.op("LayerNormalization", {}, {}, "ln0"));
  b.output(b.op("Tanh", {b.op("Add", {x}, {}, "add0")}, {}, "tanh"));
  Graph g = b.build();
  for (int level = 0; level <= 3; ++level) {
    FusionOptions o;
    o.opt_level = level;
    EXPECT_NO_THROW(analyze_fusion(g, testing::test_profile(), o)) << level;
  }
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

TEST(FusionFinder, WideFanOutStaysLinear) {
  // One value read by 20,000 siblings: pairwise or quadratic scans would take minutes.
  GraphBuilder b;
  auto x = b.op("Relu", {b.input("x", {64})}, {}, "src");
  for (int i = 0; i < 20000; ++i) b.output(b.op("Neg", {x}, {}, "n" + std::to_string(i)));
  Graph g = b.build();
  FusionOptions o;
  o.opt_level = 3;
  o.threshold = 0.0;
  AnalysisResult r = analyze_fusion(g, testing::test_profile(), o);
  EXPECT_LT(r.analysis_ms, 20000);
  ASSERT_FALSE(r.groups.empty());
  for (const auto& gr : r.groups) EXPECT_LE(gr.nodes.size(), 64u);
  EXPECT_LT(r.kernels_after, r.kernels_before / 10);  // siblings packed 64 at a time
}

}  // namespace
}  // namespace fx
