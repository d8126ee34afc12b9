// SPDX-License-Identifier: Apache-2.0
// What a plan saves on the kernels it leaves alone (device_profile.h: lone_kernel_saving)
// in the analysis totals and in a plan's totals (plan_totals.h).

#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "analysis/analysis_json.h"
#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "analysis/lone_kernels.h"
#include "analysis/plan_totals.h"
#include "test_graphs.h"
#include "util/error.h"

namespace fx {
namespace {

// Two Relu -> Mul chains (groups) and one lone Sigmoid (no group).
Graph two_chains_and_a_lone_op() {
  GraphBuilder b;
  for (int i = 0; i < 2; ++i) {
    auto x = b.input("x" + std::to_string(i), {1, 4096});
    auto y = b.op("Relu", {x}, {}, "relu" + std::to_string(i));
    b.output(b.op("Mul", {y, testing::scalar(b, "s" + std::to_string(i), 2)}, {},
                  "mul" + std::to_string(i)));
  }
  b.output(b.op("Sigmoid", {b.input("z", {1, 4096})}, {}, "lone"));
  return b.build();
}

DeviceProfile with_share(double share) {
  DeviceProfile p = testing::test_profile();
  p.lone_kernel_saving.results = 5;
  p.lone_kernel_saving.share[std::size_t(KernelClass::Elementwise)] = share;
  return p;
}

double node_time(const AnalysisResult& r, const std::string& name) {
  auto it = r.node_lone_saving_s.find(name);
  return it == r.node_lone_saving_s.end() ? -1 : it->second;
}

TEST(LoneSaving, AnalysisCreditsTheKernelsOutsideEveryGroup) {
  const Graph g = two_chains_and_a_lone_op();
  FusionOptions o;
  o.opt_level = 2;
  const AnalysisResult none = analyze_fusion(g, testing::test_profile(), o);
  const AnalysisResult half = analyze_fusion(g, with_share(0.5), o);
  ASSERT_EQ(half.groups.size(), 2u);
  EXPECT_EQ(none.lone_saved_s, 0);
  EXPECT_TRUE(none.node_lone_saving_s.empty());
  const double lone = node_time(half, "lone");
  EXPECT_GT(lone, 0);
  EXPECT_DOUBLE_EQ(half.lone_saved_s, lone);
  EXPECT_NEAR(half.time_after_s, none.time_after_s - lone, 1e-15);
  EXPECT_NEAR(to_json(half)["est_lone_saved_us"].get<double>(), lone * 1e6, 1e-9);
}

TEST(LoneSaving, APlanCreditsTheNodesOutsideItsAcceptedGroupsOnlyWhenItFusesOne) {
  const Graph g = two_chains_and_a_lone_op();
  FusionOptions o;
  o.opt_level = 2;
  const AnalysisResult r = analyze_fusion(g, with_share(0.5), o);
  FusionPlan plan(r);
  EXPECT_DOUBLE_EQ(plan_totals(r, plan).time_after_s, r.time_before_s);  // nothing fused
  const FusionGroup& first = plan.groups()[0];
  ASSERT_TRUE(plan.accept(first.id));
  const FusionGroup& second = plan.groups()[1];
  const double others =
      node_time(r, "lone") + node_time(r, second.nodes[0]) + node_time(r, second.nodes[1]);
  EXPECT_NEAR(plan_totals(r, plan).time_after_s,
              r.time_before_s - first.estimate.time_saved_s() - others, 1e-15);
}

// The analysis and the plan as the GUI's session or a report reads them back: no node ids,
// only names. Before the savings were keyed by name, the reloaded analysis credited no
// lone saving and an unbound plan credited its own fused nodes.
TEST(LoneSaving, AnAnalysisAndAPlanReadBackFromJsonCreditTheSameNodes) {
  const Graph g = two_chains_and_a_lone_op();
  FusionOptions o;
  o.opt_level = 2;
  const AnalysisResult r = analyze_fusion(g, with_share(0.5), o);
  FusionPlan plan(r);
  ASSERT_TRUE(plan.accept(plan.groups()[0].id));
  const double expected = plan_totals(r, plan).time_after_s;
  ASSERT_LT(expected, r.time_before_s - plan.groups()[0].estimate.time_saved_s());

  const AnalysisResult back = analysis_result_from_json(nlohmann::json::parse(to_json(r).dump()));
  const FusionPlan plan_back = FusionPlan::from_json(nlohmann::json::parse(plan.to_json().dump()));
  ASSERT_TRUE(plan_back.groups()[0].node_ids.empty());  // not bound to the Graph
  EXPECT_EQ(back.node_lone_saving_s.size(), r.node_lone_saving_s.size());
  EXPECT_NEAR(node_time(back, "lone"), node_time(r, "lone"), 1e-15);
  EXPECT_NEAR(back.lone_saved_s, r.lone_saved_s, 1e-15);
  EXPECT_NEAR(plan_totals(back, plan_back).time_after_s, expected, 1e-12);
  EXPECT_NEAR(plan_totals(r, plan_back).time_after_s, expected, 1e-12);
  ASSERT_EQ(back.groups.size(), r.groups.size());
  EXPECT_NEAR(back.groups[0].estimate.time_saved_s(), r.groups[0].estimate.time_saved_s(), 1e-15);
}

// x -> 3x3 conv a -> Relu -> 3x3 conv b -> Relu -> 1x1 conv c -> GlobalAveragePool, every
// node alone (opt level 0: no groups), and a ViT-like patch conv read by a Reshape.
Graph conv_chain_and_a_patch_conv() {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 16, 16});
  const Shape s4 = Shape::of({1, 8, 16, 16});
  auto a = b.op("Relu", {testing::conv(b, x, 8, 8, 16, "a")}, {}, "a_relu", s4);
  auto c = b.op("Relu", {testing::conv(b, a, 8, 8, 16, "b")}, {}, "b_relu", s4);
  auto w = b.constant("c_w", TensorData::from_floats({8, 8, 1, 1}, std::vector<float>(64, 0.1f)));
  auto pw = b.op("Conv", {c, w}, {}, "c", s4);
  b.output(b.op("GlobalAveragePool", {pw}, {}, "gap", Shape::of({1, 8, 1, 1})));
  auto y = b.input("y", {1, 3, 16, 16});
  auto pw2 =
      b.constant("p_w", TensorData::from_floats({8, 3, 4, 4}, std::vector<float>(384, 0.1f)));
  auto patch = b.op("Conv", {y, pw2}, {{"strides", std::vector<int64_t>{4, 4}}}, "patch",
                    Shape::of({1, 8, 4, 4}));
  b.output(b.op("Reshape", {patch, b.constant("shape", TensorData::from_int64s({3}, {1, 8, 16}))},
                {}, "flat", Shape::of({1, 8, 16})));
  return b.build();
}

DeviceProfile with_kinds(double us_per_mb, double other) {
  DeviceProfile p = with_share(0.5);
  p.lone_kernel_saving.share[std::size_t(KernelClass::Conv)] = 0.3;
  p.lone_kernel_saving.spatial_conv_s_per_byte = us_per_mb * 1e-12;
  p.lone_kernel_saving.other_conv_share = other;
  return p;
}

TEST(LoneSaving, ConvsInAnNhwcChainSaveByKindEvenWithoutGroups) {
  const Graph g = conv_chain_and_a_patch_conv();
  FusionOptions o;
  o.opt_level = 0;
  const DeviceProfile p = with_kinds(100, 0.2);
  const AnalysisResult r = analyze_fusion(g, p, o);
  ASSERT_TRUE(r.groups.empty());
  const CostModel cost(g, p);
  auto id = [&](const std::string& name) {
    for (std::size_t i = 0; i < g.node_count(); ++i)
      if (g.node(NodeId(i)).name == name) return NodeId(i);
    ADD_FAILURE() << name;
    return NodeId(0);
  };
  const Cost& a = cost.node(id("a"));
  ASSERT_GT(a.relayout_bytes, 0);
  EXPECT_NEAR(node_time(r, "a"), 100e-12 * double(a.relayout_bytes), 1e-15);
  EXPECT_NEAR(node_time(r, "c"), 0.2 * cost.node(id("c")).time_s, 1e-15);
  // The patch conv runs as before; the Relus and the pool only beside fused groups.
  EXPECT_EQ(node_time(r, "patch"), -1);
  const double convs = node_time(r, "a") + node_time(r, "b") + node_time(r, "c");
  EXPECT_NEAR(r.lone_saved_s, convs, 1e-15);
  EXPECT_NEAR(r.lone_saved_by_kind_s.at("spatial_conv"), node_time(r, "a") + node_time(r, "b"),
              1e-15);
  EXPECT_NEAR(r.time_after_s, r.time_before_s - convs, 1e-12);
  // A profile without the kinds: the conv class's share, and only beside fused groups.
  const AnalysisResult old = analyze_fusion(g, with_share(0.5), o);
  EXPECT_EQ(old.lone_saved_s, 0);
  const AnalysisResult back = analysis_result_from_json(nlohmann::json::parse(to_json(r).dump()));
  EXPECT_NEAR(back.lone_saved_by_kind_s.at("other_conv"), node_time(r, "c"), 1e-15);
}

// A depthwise conv between two convs (an NHWC chain) and one between two Transposes
// (ConvNeXt's, between the permutes of its LayerNorm): only the first runs differently in
// the fused program, so only it takes the depthwise class's share.
TEST(LoneSaving, ADepthwiseConvOutsideEveryChainRunsUnchanged) {
  GraphBuilder b;
  const Shape s4 = Shape::of({1, 8, 16, 16});
  auto dw = [&](ValueId x, const std::string& name) {
    auto w = b.constant(name + "_w",
                        TensorData::from_floats({8, 1, 3, 3}, std::vector<float>(72, 0.1f)));
    return b.op("Conv", {x, w}, {{"group", int64_t{8}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                name, s4);
  };
  auto x = b.input("x", {1, 8, 16, 16});
  auto c = testing::conv(b, dw(testing::conv(b, x, 8, 8, 16, "a"), "dw_chain"), 8, 8, 16, "b");
  b.output(b.op("GlobalAveragePool", {c}, {}, "gap", Shape::of({1, 8, 1, 1})));
  auto y = b.input("y", {1, 16, 16, 8});
  auto perm = [&](ValueId v, std::vector<int64_t> p, Shape s, const std::string& name) {
    return b.op("Transpose", {v}, {{"perm", p}}, name, s);
  };
  auto t = perm(y, {0, 3, 1, 2}, s4, "to_nchw");
  b.output(perm(dw(t, "dw_alone"), {0, 2, 3, 1}, Shape::of({1, 16, 16, 8}), "to_nhwc"));
  const Graph g = b.build();
  DeviceProfile p = with_kinds(100, 0.2);
  p.lone_kernel_saving.share[std::size_t(KernelClass::Depthwise)] = 0.6;
  const CostModel cost(g, p);
  const std::vector<LoneKind> kinds = lone_kinds(g, cost, std::vector<char>(g.node_count(), 0));
  ASSERT_EQ(cost.node(g.find_node("dw_chain")).kernel_class, KernelClass::Depthwise);
  EXPECT_EQ(kinds[std::size_t(g.find_node("dw_chain"))], LoneKind::ClassShare);
  EXPECT_EQ(kinds[std::size_t(g.find_node("dw_alone"))], LoneKind::Unchanged);
  const Cost& chained = cost.node(g.find_node("dw_chain"));
  EXPECT_NEAR(lone_saving_s(p, LoneKind::ClassShare, chained), 0.6 * chained.time_s, 1e-15);
  EXPECT_EQ(lone_saving_s(p, LoneKind::Unchanged, cost.node(g.find_node("dw_alone"))), 0);
}

TEST(LoneSaving, ProfileKindsRoundTripAndOldProfilesLoadWithoutThem) {
  const DeviceProfile p = with_kinds(90, 0.1);
  nlohmann::json j = to_json(p);
  EXPECT_NEAR(j["lone_kernel_saving"]["kinds"]["spatial_conv_us_per_mb"].get<double>(), 90, 1e-9);
  const DeviceProfile back = device_profile_from_json(j);
  EXPECT_NEAR(back.lone_kernel_saving.spatial_conv_s_per_byte, 90e-12, 1e-21);
  EXPECT_NEAR(back.lone_kernel_saving.other_conv_share, 0.1, 1e-12);
  EXPECT_TRUE(std::isnan(back.lone_kernel_saving.merged_share));
  j["lone_kernel_saving"].erase("kinds");
  const DeviceProfile old = device_profile_from_json(j);
  EXPECT_FALSE(old.lone_kernel_saving.has_conv_kinds());
  EXPECT_NEAR(old.lone_kernel_saving.share[std::size_t(KernelClass::Conv)], 0.3, 1e-12);
  j["lone_kernel_saving"]["kinds"] = {{"other_conv", 1.5}};
  EXPECT_THROW(device_profile_from_json(j), Error);
}

TEST(LoneSaving, AMalformedAnalysisDocumentIsAnErrorNotACrash) {
  EXPECT_THROW(analysis_result_from_json(nlohmann::json::array()), Error);
  EXPECT_THROW(analysis_result_from_json(nlohmann::json::parse(R"({"groups": [{"id": 3}]})")),
               Error);
}

}  // namespace
}  // namespace fx
