// SPDX-License-Identifier: Apache-2.0
// The residuals behind the intervals (calibration/saving_uncertainty.h).

#include "calibration/saving_uncertainty.h"

#include <gtest/gtest.h>

namespace fx {
namespace {

DeviceProfile profile() {
  DeviceProfile p;
  p.name = "u-test";
  p.memory_bandwidth_bytes_per_s = 1e9;  // 1 byte per ns
  p.peak_flops = 1e9;
  p.launch_overhead_s = 0;
  p.onchip_capacity_bytes = 1 << 20;
  return p;
}

// Two elementwise kernels of `bytes` each fused into one of `bytes`: saves bytes / 1e3 us
// on profile(), out of 2 x that unfused.
GroupTermsSample group(double bytes, double error) {
  GroupTermsSample g;
  KernelTerms k;
  k.bytes = bytes;
  g.unfused = {k, k};
  g.fused = k;
  g.fused.fused = true;
  const double predicted_us = bytes / 1e3;
  g.measured_us = predicted_us * (1 + error);
  g.noise_us = 0.01 * predicted_us;
  return g;
}

TEST(SavingUncertainty, RobustRmsOfResidualsRelativeToTheUnfusedTime) {
  // Too few groups for the saving model's fit: each prediction is the difference of times,
  // whose residual / unfused time is error / 2.
  std::vector<GroupTermsSample> groups;
  const double errors[] = {0.1, -0.1, 0.2, -0.2, 0, 0.1, -0.1, 0};
  for (int i = 0; i < 8; ++i) groups.push_back(group(1e4 * (i + 1), errors[i]));
  auto u = saving_uncertainty(groups, profile());
  const auto& e = u[std::size_t(KernelClass::Elementwise)];
  EXPECT_EQ(e.groups, 8);
  EXPECT_NEAR(e.rel_rms, 1.4826 * 0.05, 1e-9);
  EXPECT_EQ(u[std::size_t(KernelClass::Conv)].groups, 0);
}

TEST(SavingUncertainty, ABiasCountsAndTooFewGroupsGiveNone) {
  std::vector<GroupTermsSample> groups;
  for (int i = 0; i < 5; ++i) groups.push_back(group(1e4 * (i + 1), -1.0));  // saves nothing
  auto u = saving_uncertainty(groups, profile());
  EXPECT_NEAR(u[std::size_t(KernelClass::Elementwise)].rel_rms, 0.5, 1e-9);
  groups.resize(2);
  EXPECT_EQ(saving_uncertainty(groups, profile())[std::size_t(KernelClass::Elementwise)].groups, 0);
}

}  // namespace
}  // namespace fx
