// SPDX-License-Identifier: Apache-2.0
#include "analysis/default_rule.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/fusion_plan.h"

namespace fx {
namespace {

GroupEstimate estimate(double before_us, double after_us) {
  GroupEstimate e;
  e.bytes_before = 4000;
  e.bytes_after = 1000;  // 75% traffic reduction: above any threshold used here
  e.launches_before = 2;
  e.launches_after = 1;
  e.time_before_s = before_us * 1e-6;
  e.time_after_s = after_us * 1e-6;
  return e;
}

FusionGroup group(const std::string& id, GroupEstimate e) {
  FusionGroup g;
  g.id = id;
  g.pattern = "test";
  g.nodes = {id + "_a", id + "_b"};
  g.ops = {"Relu", "Neg"};
  g.estimate = std::move(e);
  return g;
}

TEST(DefaultRule, ClearlyPositiveSavingIsAccepted) {
  const GroupEstimate e = estimate(100, 60);
  EXPECT_TRUE(default_accepts(e));
  EXPECT_EQ(default_rejection(e), "");
  const SavingInterval s = estimate_interval(e);
  EXPECT_NEAR(s.low_s, 30e-6, 1e-12);  // 40 us saved, +- 10% of the larger time (100 us)
  EXPECT_NEAR(s.high_s, 50e-6, 1e-12);
}

TEST(DefaultRule, SavingWithinTheMarginIsNotAccepted) {
  // Positive, but smaller than what the estimate can resolve: the rule does not fuse.
  const GroupEstimate e = estimate(100, 95);
  EXPECT_GT(e.time_saved_s(), 0);
  EXPECT_FALSE(default_accepts(e));
  EXPECT_NE(default_rejection(e).find("not clearly positive"), std::string::npos);
}

TEST(DefaultRule, LossAndUnknownAreNotAccepted) {
  EXPECT_FALSE(default_accepts(estimate(50, 80)));
  GroupEstimate u = estimate(100, 10);
  u.known = false;
  EXPECT_FALSE(default_accepts(u));
  EXPECT_NE(default_rejection(u).find("cannot tell"), std::string::npos);
}

TEST(DefaultRule, SavingModelPredictionIsJudgedWithTheSameMargin) {
  GroupEstimate e = estimate(100, 90);  // the kernel times alone: not clear
  e.model_saved_s = 40e-6;              // the calibrated saving model: clearly positive
  EXPECT_TRUE(default_accepts(e));
  e.model_saved_s = -5e-6;
  EXPECT_FALSE(default_accepts(e));
}

TEST(DefaultRule, AnIntervalCanBeFedDirectly) {
  EXPECT_TRUE(default_accepts(SavingInterval{1e-6, 3e-6, "measured"}));
  EXPECT_FALSE(default_accepts(SavingInterval{-1e-6, 3e-6, "measured"}));
  EXPECT_FALSE(default_accepts(SavingInterval{NAN, 3e-6, "unknown"}));
}

TEST(DefaultRule, DefaultPlanLeavesUnclearGroupsCandidates) {
  AnalysisResult r;
  r.device = "test-device";
  r.groups.push_back(group("fg-clear", estimate(100, 50)));
  r.groups.push_back(group("fg-unclear", estimate(100, 97)));
  r.groups.push_back(group("fg-loss", estimate(100, 130)));
  FusionPlan p(r, "m.onnx");
  EXPECT_EQ(p.candidates_left_above(0.0), 2);
  EXPECT_EQ(p.accept_all_above(0.0), 1);
  EXPECT_EQ(p.candidates_left_above(0.0), 2);  // the two the rule left out
  EXPECT_EQ(p.candidates_left_above(0.99), 0);
  EXPECT_EQ(p.find("fg-clear")->status, GroupStatus::Accepted);
  EXPECT_EQ(p.find("fg-unclear")->status, GroupStatus::Candidate);
  EXPECT_EQ(p.find("fg-loss")->status, GroupStatus::Candidate);
  // The user may still accept what the default left out.
  EXPECT_TRUE(p.accept("fg-unclear", "measured faster here"));
  EXPECT_EQ(p.candidates_left_above(0.0), 1);
}

}  // namespace
}  // namespace fx
