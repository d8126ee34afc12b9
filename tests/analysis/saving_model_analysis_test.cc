// SPDX-License-Identifier: Apache-2.0
// Analysis on a profile that carries a calibrated saving model (DeviceProfile::
// saving_model): a group whose fused kernel is of a fitted class gets the saving model's
// prediction, the others the difference of kernel times, and each estimate says which.
// The finder's "saves time" rule uses the same prediction.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/analysis_json.h"
#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "test_graphs.h"

namespace fx {
namespace {

using testing::group_of;

// conv -> bn -> relu (a conv-class fused kernel) and, apart, y -> relu -> neg -> exp (an
// elementwise loop).
Graph two_groups() {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 16, 16});
  auto c = testing::conv(b, x, 8, 8, 16, "conv");
  b.output(b.op("Relu", {testing::batch_norm(b, c, 8, "bn")}, {}, "crelu"));
  auto y = b.input("y", {1024});
  b.output(b.op("Exp", {b.op("Neg", {b.op("Relu", {y}, {}, "relu")}, {}, "neg")}, {}, "exp"));
  return b.build();
}

// The test profile with the conv class fitted to (members, traffic, launches, relayout,
// compute, fused cost) = (0, 2, 1, 0, 0, 0): a saving of 2 x the intermediates' bytes at
// the elementwise bandwidth + 1 x the launches avoided, easy to check by hand.
DeviceProfile with_saving_model(std::array<double, kSavingTerms> conv_coefficients = {0, 2, 1, 0, 0,
                                                                                      0}) {
  DeviceProfile p = testing::test_profile();
  p.saving_model.groups = 30;
  p.saving_model.fitted_to = "unit test";
  auto& conv = p.saving_model.classes[static_cast<std::size_t>(KernelClass::Conv)];
  conv.groups = 24;
  conv.fitted = true;
  conv.coefficients = conv_coefficients;
  auto& ew = p.saving_model.classes[static_cast<std::size_t>(KernelClass::Elementwise)];
  ew.groups = 6;
  ew.why = "too few groups";
  return p;
}

AnalysisResult analyze(const Graph& g, const DeviceProfile& p) {
  FusionOptions o;
  o.opt_level = 2;
  return analyze_fusion(g, p, o);
}

TEST(SavingModelAnalysis, FittedClassIsPredictedByTheSavingModelOthersByTheDifference) {
  const Graph g = two_groups();
  const AnalysisResult plain = analyze(g, testing::test_profile());
  const AnalysisResult r = analyze(g, with_saving_model());
  ASSERT_EQ(r.groups.size(), 2u);
  const FusionGroup* conv = group_of(r, "conv");
  const FusionGroup* ew = group_of(r, "relu");
  ASSERT_TRUE(conv && ew);
  EXPECT_EQ(conv->nodes, (std::vector<std::string>{"conv", "bn", "crelu"}));

  // The conv group: the saving model's prediction, from the group's own terms.
  const GroupEstimate& c = conv->estimate;
  ASSERT_TRUE(c.saving_from_model());
  const double expected = 2 * double(c.bytes_saved()) / 1e9 + c.launches_saved() * 1e-6;
  EXPECT_GT(c.bytes_saved(), 0);
  EXPECT_EQ(c.launches_saved(), 2);
  EXPECT_NEAR(c.time_saved_s(), expected, 1e-12);
  EXPECT_EQ(c.saving_label(), "saving model (class conv, fitted to 24 groups; unit test)");
  // Bytes, launches and the kernel times are those of the plain analysis.
  const GroupEstimate& pc = group_of(plain, "conv")->estimate;
  EXPECT_EQ(c.bytes_saved(), pc.bytes_saved());
  EXPECT_EQ(c.launches_saved(), pc.launches_saved());
  EXPECT_DOUBLE_EQ(c.time_before_s, pc.time_before_s);
  EXPECT_DOUBLE_EQ(c.time_after_s, pc.time_after_s);
  EXPECT_GT(std::abs(c.time_saved_s() - pc.time_saved_s()), 1e-9);  // a different number

  // The elementwise group: its class has no fit, the difference of kernel times, saying why.
  const GroupEstimate& e = ew->estimate;
  EXPECT_FALSE(e.saving_from_model());
  EXPECT_DOUBLE_EQ(e.time_saved_s(), e.time_before_s - e.time_after_s);
  EXPECT_DOUBLE_EQ(e.time_saved_s(), group_of(plain, "relu")->estimate.time_saved_s());
  EXPECT_EQ(e.saving_label(),
            "difference of kernel times (saving model not fitted for class elementwise: too "
            "few groups)");
  // Without a saving model in the profile, every estimate is the difference.
  EXPECT_EQ(group_of(plain, "conv")->estimate.saving_label(), "difference of kernel times");

  // The totals add the predictions used.
  EXPECT_NEAR(r.time_before_s - r.time_after_s, c.time_saved_s() + e.time_saved_s(), 1e-12);
  // What `fxc analyze --json` prints says which model produced each number.
  const nlohmann::json j = to_json(r);
  for (const auto& gj : j["groups"]) {
    const GroupEstimate& ge = gj["nodes"][0] == "conv" ? c : e;
    EXPECT_NEAR(gj["est_time_saved_us"].get<double>(), ge.time_saved_s() * 1e6, 1e-9);
    EXPECT_EQ(gj["est_time_saved_by"], ge.saving_label());
  }
}

TEST(SavingModelAnalysis, PlansKeepThePredictionAndItsSource) {
  const AnalysisResult r = analyze(two_groups(), with_saving_model());
  const FusionPlan plan = FusionPlan::from_json(FusionPlan(r, "m.onnx").to_json());
  const FusionGroup* conv = plan.find(group_of(r, "conv")->id);
  const FusionGroup* ew = plan.find(group_of(r, "relu")->id);
  ASSERT_TRUE(conv && ew);
  EXPECT_DOUBLE_EQ(conv->estimate.time_saved_s(), group_of(r, "conv")->estimate.time_saved_s());
  EXPECT_EQ(conv->estimate.saving_label(), group_of(r, "conv")->estimate.saving_label());
  EXPECT_FALSE(ew->estimate.saving_from_model());
  EXPECT_EQ(ew->estimate.saving_label(), group_of(r, "relu")->estimate.saving_label());
  // A plan written before the saving model: the difference, said so.
  nlohmann::json old = FusionPlan(r, "m.onnx").to_json();
  for (auto& gj : old["groups"])
    gj["estimate"].erase("model_saved_s"), gj["estimate"].erase("saving_source");
  const FusionPlan p2 = FusionPlan::from_json(old);
  const GroupEstimate& oc = p2.find(conv->id)->estimate;
  EXPECT_FALSE(oc.saving_from_model());
  EXPECT_EQ(oc.saving_label(), "difference of kernel times");
}

TEST(SavingModelAnalysis, FinderRejectsAGroupTheSavingModelSaysSavesNothing) {
  // Coefficients charging the fused conv far more than it saves: the seed pattern's
  // "saves time" check uses this prediction and leaves conv, bn and relu apart.
  const Graph g = two_groups();
  DeviceProfile p = with_saving_model({0, 0, 0, 0, -1, 0});
  const AnalysisResult r = analyze(g, p);
  EXPECT_EQ(group_of(r, "conv"), nullptr);
  EXPECT_NE(group_of(r, "relu"), nullptr);  // the elementwise class is not affected
  bool said = false;
  for (const auto& nf : r.not_fused)
    if (nf.producer == "conv")
      said = said || nf.text.find("predicted by the saving model (class conv") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace fx
