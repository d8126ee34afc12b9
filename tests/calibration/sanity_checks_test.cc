// SPDX-License-Identifier: Apache-2.0
// What `fxc calibrate` refuses to save (calibration/sanity_checks.h): figures the machine
// cannot produce, and a machine too busy while it measured. Machine facts and probes are
// written out here, so that the checks are judged, not this machine.

#include "calibration/sanity_checks.h"

#include <gtest/gtest.h>

#include "calibration/grid_calibration.h"

namespace fx {
namespace {

// 8 threads x 16 lanes x 2 x 2 FMA at 2.5 GHz: 1280 GFLOP/s at most.
MachineFacts facts() {
  MachineFacts f;
  f.cpu_model = "test CPU";
  f.threads = 8;
  f.simd_floats = 16;
  f.fma_units = 2;
  f.ghz = 2.5;
  f.ghz_is_maximum = true;
  f.caches = {48 << 10, 1 << 20, 32 << 20};
  return f;
}

// In L1 200 GB/s ... beyond L3 40 GB/s.
std::vector<CopyPoint> copy() {
  return {{24 << 10, 200e9, 0.01},
          {512 << 10, 120e9, 0.01},
          {16 << 20, 60e9, 0.01},
          {64 << 20, 40e9, 0.02}};
}

DeviceProfile sane() {
  DeviceProfile p;
  p.name = "cpu-host";
  p.memory_bandwidth_bytes_per_s = 35e9;
  p.peak_flops = 600e9;
  p.launch_overhead_s = 2e-6;
  p.onchip_capacity_bytes = 1 << 20;
  return p;
}

TEST(SanityChecks, PeakBoundFromTheIsa) {
  EXPECT_DOUBLE_EQ(facts().peak_flops_bound(), 8 * 16 * 2 * 2 * 2.5e9);
  MachineFacts f = facts();
  f.ghz_is_maximum = false;  // a current clock: boost may go 30% beyond it
  EXPECT_DOUBLE_EQ(f.peak_flops_bound(), 1.3 * 8 * 16 * 2 * 2 * 2.5e9);
}

TEST(SanityChecks, ASaneProfilePasses) {
  EXPECT_TRUE(implausible_figures(sane(), facts(), copy()).empty());
}

TEST(SanityChecks, ATooSlowBandwidthIsFlagged) {
  DeviceProfile p = sane();
  p.memory_bandwidth_bytes_per_s = 4.1 * (1 << 30);  // the report's 4.1 GiB/s
  auto f = implausible_figures(p, facts(), copy());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].find("memory bandwidth"), std::string::npos);
  // A fitted class as slow is flagged too.
  DeviceProfile q = sane();
  q.kernel_classes[std::size_t(KernelClass::Elementwise)].bandwidth_bytes_per_s = 5e9;
  auto g = implausible_figures(q, facts(), copy());
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NE(g[0].find("elementwise"), std::string::npos);
}

TEST(SanityChecks, ABandwidthFasterThanAnyCopyIsFlagged) {
  DeviceProfile p = sane();
  p.kernel_classes[std::size_t(KernelClass::Reduction)].bandwidth_bytes_per_s = 2e12;
  EXPECT_EQ(implausible_figures(p, facts(), copy()).size(), 1u);
}

TEST(SanityChecks, PeakFarBelowOrAboveTheIsaIsFlagged) {
  DeviceProfile slow = sane();
  slow.peak_flops = 3.5e9;  // the report's 3.5 GFLOP/s
  auto f = implausible_figures(slow, facts(), copy());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].find("busy"), std::string::npos);
  DeviceProfile fast = sane();
  fast.peak_flops = 5e12;
  EXPECT_EQ(implausible_figures(fast, facts(), copy()).size(), 1u);
  DeviceProfile fitted = sane();
  fitted.kernel_classes[std::size_t(KernelClass::Conv)].flops_per_s = 3e12;
  EXPECT_EQ(implausible_figures(fitted, facts(), copy()).size(), 1u);
}

TEST(SanityChecks, AMemorySystemSharedWithAnotherProcessIsFlagged) {
  auto c = copy();
  c.back().bytes_per_s = 2e9;  // 1/100 of the in-cache copy
  DeviceProfile p = sane();
  p.memory_bandwidth_bytes_per_s = 2e9;
  auto f = implausible_figures(p, facts(), c);
  ASSERT_FALSE(f.empty());
  EXPECT_NE(f[0].find("another process"), std::string::npos);
}

BusyProbe quiet() {
  return {{1.00e-3, 1.01e-3, 0.99e-3, 1.00e-3, 1.02e-3, 0.98e-3, 1.00e-3}, 0.5};
}

TEST(SanityChecks, AQuietMachineIsNotBusy) {
  EXPECT_TRUE(busy_findings(quiet(), quiet(), 8, 0.03).empty());
  EXPECT_TRUE(busy_findings(quiet(), quiet(), 8, NAN).empty());
}

TEST(SanityChecks, ABusyMachineIsRefused) {
  BusyProbe jumpy = quiet();
  jumpy.reference_s = {1e-3, 2e-3, 1e-3, 3e-3, 1.1e-3, 2.5e-3, 1e-3};
  auto spread = busy_findings(jumpy, quiet(), 8, 0.03);  // same median, wide spread
  ASSERT_EQ(spread.size(), 1u);
  EXPECT_NE(spread[0].find("varied"), std::string::npos);
  BusyProbe slower = quiet();
  for (double& s : slower.reference_s) s *= 2;  // steady, but half the core was taken
  auto drift = busy_findings(quiet(), slower, 8, 0.03);
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_NE(drift[0].find("load changed"), std::string::npos);
  BusyProbe loaded = quiet();
  loaded.loadavg1 = 15;
  EXPECT_EQ(busy_findings(quiet(), loaded, 2, 0.03).size(), 1u);
  EXPECT_TRUE(busy_findings(quiet(), loaded, 16, 0.03).empty());
  EXPECT_EQ(busy_findings(quiet(), quiet(), 8, 0.4).size(), 1u);  // noisy kernels

  // A calibration with any finding is not saved without --force.
  GridCalibration c;
  EXPECT_TRUE(c.trustworthy());
  c.busy = busy_findings(quiet(), loaded, 2, 0.03);
  EXPECT_FALSE(c.trustworthy());
  EXPECT_EQ(c.findings().size(), 1u);
}

}  // namespace
}  // namespace fx
