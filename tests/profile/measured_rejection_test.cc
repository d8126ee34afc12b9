// SPDX-License-Identifier: Apache-2.0
#include "profile/measured_rejection.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fx {
namespace {

BeforeAfterGroup measured(const std::string& id, const std::string& status, double saved_us) {
  BeforeAfterGroup g;
  g.id = id;
  g.pattern = "auto_vertical";
  g.status = status;
  g.measured_saved_us = saved_us;
  g.nodes = {id + "_a", id + "_b"};
  return g;
}

TEST(MeasuredRejection, OnlyFusedGroupsMeasuredSlowerAreRejected) {
  const auto r = measured_rejections(
      {measured("fg-faster", "fused", 12.0), measured("fg-slower", "fused", -7.5),
       measured("fg-excluded", "excluded", NAN), measured("fg-fallback", "fallback", -3.0),
       measured("fg-unknown", "fused", NAN)});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, "fg-slower");
  EXPECT_DOUBLE_EQ(r[0].slower_us, 7.5);
  EXPECT_EQ(r[0].line().rfind("rejected after measurement: fg-slower +7.5 \u00b5s", 0), 0u)
      << r[0].line();
}

TEST(MeasuredRejection, TheCorrectedPlanRejectsThemWithTheMeasurementAsReason) {
  AnalysisResult a;
  a.device = "test-device";
  for (const char* id : {"fg-faster", "fg-slower"}) {
    FusionGroup g;
    g.id = id;
    g.nodes = {std::string(id) + "_a", std::string(id) + "_b"};
    g.ops = {"Relu", "Neg"};
    g.status = GroupStatus::Accepted;
    a.groups.push_back(g);
  }
  FusionPlan p(a, "m.onnx");
  const auto r = measured_rejections({measured("fg-faster", "fused", 3.0),
                                      measured("fg-slower", "fused", -2.0),
                                      measured("fg-not-in-plan", "fused", -1.0)});
  EXPECT_EQ(reject_measured_slower(p, r), 1);
  EXPECT_EQ(p.find("fg-slower")->status, GroupStatus::Rejected);
  EXPECT_NE(p.find("fg-slower")->reason.find("+2.0"), std::string::npos);
  EXPECT_EQ(p.find("fg-faster")->status, GroupStatus::Accepted);
  ASSERT_TRUE(p.undo());  // one user-visible step per rejection, undoable in the GUI
  EXPECT_EQ(p.find("fg-slower")->status, GroupStatus::Accepted);
}

}  // namespace
}  // namespace fx
