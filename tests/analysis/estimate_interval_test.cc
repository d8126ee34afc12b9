// SPDX-License-Identifier: Apache-2.0
// Each estimate's interval comes from the calibration residuals of its fused class, and a
// group whose interval includes zero is uncertain and stays out of the default plan
// (analysis/estimate_interval.h).

#include "analysis/estimate_interval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/analysis_json.h"
#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "test_graphs.h"

namespace fx {
namespace {

GroupEstimate estimate(double before_us, double after_us) {
  GroupEstimate e;
  e.time_before_s = before_us * 1e-6;
  e.time_after_s = after_us * 1e-6;
  e.bytes_before = 1000;
  e.bytes_after = 400;
  return e;
}

DeviceProfile with_residual(KernelClass c, double rel_rms) {
  DeviceProfile p = testing::test_profile();
  p.saving_uncertainty[std::size_t(c)] = {10, rel_rms};
  return p;
}

TEST(EstimateInterval, HalfWidthIsTwoResidualsOfTheUnfusedTime) {
  const DeviceProfile p = with_residual(KernelClass::Conv, 0.10);
  GroupEstimate e = estimate(100, 70);  // saves 30 us; 2 x 10% of 100 us = 20 us
  set_interval(e, p, KernelClass::Conv);
  ASSERT_TRUE(e.interval_known());
  EXPECT_NEAR(e.saved_low_s * 1e6, 10, 1e-9);
  EXPECT_NEAR(e.saved_high_s * 1e6, 50, 1e-9);
  EXPECT_NEAR(e.interval_half_s() * 1e6, 20, 1e-9);
  EXPECT_EQ(e.fused_class, "conv");
  EXPECT_FALSE(e.uncertain());

  GroupEstimate small = estimate(100, 85);  // saves 15 us: [-5, 35]
  set_interval(small, p, KernelClass::Conv);
  EXPECT_TRUE(small.uncertain());
  GroupEstimate loses = estimate(100, 130);  // loses 30 us: [-50, -10], surely a loss
  set_interval(loses, p, KernelClass::Conv);
  EXPECT_FALSE(loses.uncertain());
}

TEST(EstimateInterval, NoResidualsForTheClassMeansNoInterval) {
  const DeviceProfile p = with_residual(KernelClass::Conv, 0.10);
  GroupEstimate e = estimate(100, 99);
  set_interval(e, p, KernelClass::MatMul);
  EXPECT_FALSE(e.interval_known());
  EXPECT_FALSE(e.uncertain());
  GroupEstimate unknown = estimate(100, 99);
  unknown.known = false;
  set_interval(unknown, p, KernelClass::Conv);
  EXPECT_FALSE(unknown.interval_known());
}

TEST(EstimateInterval, UncertainGroupsAreNotInTheDefaultPlan) {
  FusionGroup g;
  g.estimate = estimate(100, 85);
  EXPECT_TRUE(default_plan_accepts(g, 0.3));  // no interval: judged as before
  set_interval(g.estimate, with_residual(KernelClass::Elementwise, 0.10), KernelClass::Elementwise);
  EXPECT_FALSE(default_plan_accepts(g, 0.3));
  g.estimate = estimate(100, 50);
  set_interval(g.estimate, with_residual(KernelClass::Elementwise, 0.10), KernelClass::Elementwise);
  EXPECT_TRUE(default_plan_accepts(g, 0.3));
  EXPECT_FALSE(default_plan_accepts(g, 0.7));  // the traffic rule still holds
}

// Relu -> Mul -> Add chains: elementwise groups the analysis forms on any profile.
Graph chains() {
  GraphBuilder b;
  for (int i = 0; i < 3; ++i) {
    auto x = b.input("x" + std::to_string(i), {1, 4096});
    auto y = b.op("Relu", {x}, {}, "relu" + std::to_string(i));
    y = b.op("Mul", {y, testing::scalar(b, "s" + std::to_string(i), 2)}, {},
             "mul" + std::to_string(i));
    b.output(b.op("Add", {y, testing::scalar(b, "t" + std::to_string(i), 1)}, {},
                  "add" + std::to_string(i)));
  }
  return b.build();
}

TEST(EstimateInterval, AnalysisCarriesIntervalsAndTheDefaultPlanDropsUncertainGroups) {
  const Graph g = chains();
  FusionOptions o;
  o.opt_level = 2;
  AnalysisResult sure = analyze_fusion(g, with_residual(KernelClass::Elementwise, 0.01), o);
  ASSERT_EQ(sure.groups.size(), 3u);
  for (const auto& gr : sure.groups) {
    EXPECT_TRUE(gr.estimate.interval_known());
    EXPECT_FALSE(gr.estimate.uncertain());
  }
  FusionPlan sure_plan(sure);
  EXPECT_EQ(sure_plan.accept_all_above(0.3), 3);

  // Residuals as large as the unfused time: no saving is told from zero.
  AnalysisResult unsure = analyze_fusion(g, with_residual(KernelClass::Elementwise, 1.0), o);
  ASSERT_EQ(unsure.groups.size(), 3u);
  for (const auto& gr : unsure.groups) EXPECT_TRUE(gr.estimate.uncertain());
  FusionPlan unsure_plan(unsure);
  EXPECT_EQ(unsure_plan.accept_all_above(0.3), 0);
  const auto j = to_json(unsure);
  EXPECT_TRUE(j["groups"][0]["uncertain"].get<bool>());
  EXPECT_TRUE(j["groups"][0]["est_time_saved_interval_us"].is_array());
  // The plan file keeps the interval.
  const FusionPlan back = FusionPlan::from_json(unsure_plan.to_json());
  EXPECT_TRUE(back.groups()[0].estimate.uncertain());
}

TEST(EstimateInterval, SaysWhichClassesAndOpsCalibrationNeverMeasured) {
  const Graph g = chains();
  DeviceProfile p = with_residual(KernelClass::Conv, 0.1);
  p.measured_ops = {"Add", "Conv", "Relu"};
  AnalysisResult r = analyze_fusion(g, p, {});
  EXPECT_EQ(r.unmeasured_classes, std::vector<std::string>{"elementwise"});
  EXPECT_EQ(r.unmeasured_ops, std::vector<std::string>{"Mul"});
  // A profile that records nothing of what it measured says nothing.
  AnalysisResult plain = analyze_fusion(g, testing::test_profile(), {});
  EXPECT_TRUE(plain.unmeasured_classes.empty());
  EXPECT_TRUE(plain.unmeasured_ops.empty());
  EXPECT_EQ(to_json(r)["unmeasured_ops"][0], "Mul");
}

TEST(EstimateInterval, DatasheetProfilesSaySo) {
  DeviceProfile p = testing::test_profile();
  p.source = "vendor datasheet";
  EXPECT_TRUE(analyze_fusion(chains(), p, {}).datasheet);
  p.calibrated = true;
  EXPECT_FALSE(analyze_fusion(chains(), p, {}).datasheet);
}

}  // namespace
}  // namespace fx
