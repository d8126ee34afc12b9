// SPDX-License-Identifier: Apache-2.0
// The residuals behind the intervals (calibration/saving_uncertainty.h).

#include "calibration/saving_uncertainty.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

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

TEST(SavingUncertainty, HalfWidthIsTheResidualQuantileThatHoldsItsCoverage) {
  // |r| = 0.01 .. 0.20 (20 groups): 90% of them are <= 0.18, the 18th smallest.
  std::vector<double> r;
  for (int i = 1; i <= 20; ++i) r.push_back((i % 2 ? 1 : -1) * 0.01 * i);
  const SavingUncertainty u = summarize_residuals(r);
  EXPECT_EQ(u.groups, 20);
  EXPECT_NEAR(u.rel_half_width, 0.18, 1e-12);
  EXPECT_DOUBLE_EQ(u.coverage, kIntervalCoverage);
  int held = 0;
  for (double x : r) held += std::fabs(x) <= u.rel_half_width;
  EXPECT_GE(held, int(std::ceil(kIntervalCoverage * 20)));
  EXPECT_EQ(summarize_residuals({0.1, 0.2}).groups, 0);
}

TEST(SavingUncertainty, LeavingOneModelOutSeesWhatAModelSharesWithItself) {
  // Two models, each of whose groups all save 40% more / less than the kernel times say.
  // Leaving one group out, the fit has seen the group's model; leaving its model out, it
  // has not: the residuals (and the interval) are wider.
  std::vector<GroupTermsSample> groups;
  std::vector<int> model;
  for (int i = 0; i < 30; ++i) {
    groups.push_back(group(1e4 * (1 + i % 7), i < 15 ? 0.4 : -0.4));
    model.push_back(i < 15 ? 0 : 1);
  }
  const auto by_group = saving_uncertainty(groups, profile());
  const auto by_model = saving_uncertainty(groups, model, profile());
  const auto c = std::size_t(KernelClass::Elementwise);
  EXPECT_EQ(by_model[c].groups, 30);
  EXPECT_GT(by_model[c].rel_half_width, by_group[c].rel_half_width);
  // One model only: leaving one group out, as without model ids.
  const auto one = saving_uncertainty(groups, std::vector<int>(30, 7), profile());
  EXPECT_DOUBLE_EQ(one[c].rel_half_width, by_group[c].rel_half_width);
  EXPECT_THROW(saving_uncertainty(groups, std::vector<int>(3, 0), profile()),
               std::invalid_argument);
}

}  // namespace
}  // namespace fx
