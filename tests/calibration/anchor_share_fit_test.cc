// SPDX-License-Identifier: Apache-2.0
// The share of an anchored group's unfused time that fusing saves, and its interval
// (calibration/anchor_share_fit.h), as analysis uses them (estimate_interval.h).

#include "calibration/anchor_share_fit.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/cost_model.h"
#include "analysis/estimate_interval.h"
#include "device/device_presets.h"

namespace fx {
namespace {

KernelTerms terms(KernelClass c, double bytes, double flops) {
  KernelTerms t;
  t.kernel_class = c;
  t.bytes = bytes;
  t.flops = flops;
  t.launches = 1;
  return t;
}

// A conv + Relu group whose measured saving is `share` of its predicted unfused time.
GroupTermsSample conv_group(const DeviceProfile& p, double scale, double share) {
  GroupTermsSample g;
  g.unfused = {terms(KernelClass::Conv, 1e6 * scale, 1e8 * scale),
               terms(KernelClass::Elementwise, 2e5 * scale, 0)};
  g.fused = terms(KernelClass::Conv, 1e6 * scale, 1e8 * scale);
  g.fused.fused = true;
  double unfused = 0;
  for (const auto& t : g.unfused) unfused += kernel_time(p, t) * 1e6;
  g.measured_us = share * unfused;
  return g;
}

TEST(AnchorShareFit, TheShareIsTheMedianAndTheHalfWidthComesFromOtherModels) {
  const DeviceProfile p = preset_nvidia_h100();
  std::vector<GroupTermsSample> groups;
  std::vector<int> model;
  // Four models, each with four groups; model m saves 0.10 + 0.02 m of its groups' time.
  for (int m = 0; m < 4; ++m)
    for (int i = 0; i < 4; ++i) {
      groups.push_back(conv_group(p, 1 + i, 0.10 + 0.02 * m));
      model.push_back(m);
    }
  // Elementwise chains have no anchor: no share.
  GroupTermsSample chain = conv_group(p, 1, 0.5);
  chain.fused.kernel_class = KernelClass::Elementwise;
  for (int m = 0; m < 4; ++m) groups.push_back(chain), model.push_back(m);

  const AnchorGroupSaving a = fit_anchor_group_saving(groups, model, p, 0.9);
  EXPECT_EQ(a.models, 4);
  ASSERT_TRUE(a.has(KernelClass::Conv));
  EXPECT_FALSE(a.has(KernelClass::Elementwise));
  EXPECT_EQ(a.groups[std::size_t(KernelClass::Conv)], 16);
  EXPECT_NEAR(a.share[std::size_t(KernelClass::Conv)], 0.13, 1e-9);  // median of .10 .. .16
  // Model 0 predicted by models 1-3 (median .14): off by .04; model 3 by 0-2 (.12): .04.
  EXPECT_NEAR(a.rel_half_width[std::size_t(KernelClass::Conv)], 0.04, 1e-9);

  // Too few models: not measured.
  const std::vector<GroupTermsSample> two(groups.begin(), groups.begin() + 8);
  const AnchorGroupSaving b =
      fit_anchor_group_saving(two, std::vector<int>(model.begin(), model.begin() + 8), p);
  EXPECT_FALSE(b.has(KernelClass::Conv));
}

TEST(AnchorShareFit, AnalysisPredictsTheShareOfTheUnfusedTimeWithItsInterval) {
  DeviceProfile p = preset_nvidia_h100();
  p.anchor_group_saving.models = 5;
  p.anchor_group_saving.coverage = 0.9;
  const auto c = std::size_t(KernelClass::Conv);
  p.anchor_group_saving.share[c] = 0.2;
  p.anchor_group_saving.groups[c] = 40;
  p.anchor_group_saving.rel_half_width[c] = 0.05;
  GroupEstimate e;
  e.time_before_s = 1e-3;
  e.time_after_s = 0.99e-3;
  set_anchor_share(e, p, KernelClass::Conv);
  EXPECT_NEAR(e.time_saved_s(), 2e-4, 1e-15);
  EXPECT_NEAR(e.saved_low_s, 1.5e-4, 1e-15);
  EXPECT_NEAR(e.saved_high_s, 2.5e-4, 1e-15);
  EXPECT_NE(e.saving_label().find("share of unfused time"), std::string::npos);

  GroupEstimate chain;
  chain.time_before_s = 1e-3;
  chain.time_after_s = 0.5e-3;
  set_anchor_share(chain, p, KernelClass::Elementwise);
  EXPECT_DOUBLE_EQ(chain.time_saved_s(), 0.5e-3);  // no share: the difference of times

  // Written and read back with the profile.
  const DeviceProfile q = device_profile_from_json(to_json(p));
  EXPECT_DOUBLE_EQ(q.anchor_group_saving.share[c], 0.2);
  EXPECT_EQ(q.anchor_group_saving.groups[c], 40);
  EXPECT_DOUBLE_EQ(q.anchor_group_saving.rel_half_width[c], 0.05);
  EXPECT_FALSE(q.anchor_group_saving.has(KernelClass::MatMul));
}

}  // namespace
}  // namespace fx
