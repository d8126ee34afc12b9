// SPDX-License-Identifier: Apache-2.0
// What a plan saves on the kernels it leaves alone (device_profile.h: lone_kernel_saving)
// in the analysis totals and in a plan's totals (plan_totals.h).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/analysis_json.h"
#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
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

TEST(LoneSaving, AMalformedAnalysisDocumentIsAnErrorNotACrash) {
  EXPECT_THROW(analysis_result_from_json(nlohmann::json::array()), Error);
  EXPECT_THROW(analysis_result_from_json(nlohmann::json::parse(R"({"groups": [{"id": 3}]})")),
               Error);
}

}  // namespace
}  // namespace fx
