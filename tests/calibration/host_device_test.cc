// SPDX-License-Identifier: Apache-2.0
// --device resolved on this host (calibration/host_device.h): a cpu-host profile is
// measured when none is cached, then read from the cache.

#include "calibration/host_device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "device/device_presets.h"
#include "util/error.h"

namespace fx {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("fx_calibration_" + name + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
}

// Points XDG_CACHE_HOME at a private folder for one test and puts back what was there
// (ctest sets one for the whole suite).
class ScopedCacheHome {
 public:
  explicit ScopedCacheHome(const fs::path& dir) {
    if (const char* v = std::getenv("XDG_CACHE_HOME")) old_ = v;
    ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  }
  ~ScopedCacheHome() {
    if (old_)
      ::setenv("XDG_CACHE_HOME", old_->c_str(), 1);
    else
      ::unsetenv("XDG_CACHE_HOME");
  }

 private:
  std::optional<std::string> old_;
};

TEST(HostDevice, CpuHostIsMeasuredAndCached) {
  fs::path dir = temp_dir("cache");
  ScopedCacheHome home(dir);
  EXPECT_EQ(device_cache_dir(), (dir / "fusion-explorer").string());
  DeviceProfile p = resolve_device("cpu-host");  // measures, then caches
  EXPECT_EQ(p.name, "cpu-host");
  EXPECT_EQ(p.source.rfind("measured on this host", 0), 0u) << p.source;
  EXPECT_GT(p.memory_bandwidth_bytes_per_s, 1e8);
  EXPECT_GT(p.peak_flops, 1e8);
  EXPECT_GT(p.launch_overhead_s, 0);
  EXPECT_LT(p.launch_overhead_s, 1e-2);
  EXPECT_GT(p.onchip_capacity_bytes, 0);
  ASSERT_TRUE(fs::exists(cpu_host_cache_path()));
  // The second resolve reads the cache: the same numbers, not a new measurement.
  DeviceProfile again = resolve_device("cpu-host");
  EXPECT_DOUBLE_EQ(again.peak_flops, p.peak_flops);
  fs::remove_all(dir);
}

// A quick profile cached before the per-step and cache measurements (no working-set
// curve, uncalibrated) carries a thread hand-off as its launch overhead: it is measured
// again, not used. A calibrated one without a curve is the user's fit and is kept.
TEST(HostDevice, QuickProfileWithoutTheCacheCurveIsMeasuredAgain) {
  fs::path dir = temp_dir("stale");
  ScopedCacheHome home(dir);
  DeviceProfile old = resolve_device("cpu-host");
  ASSERT_FALSE(old.bandwidth_curve.empty());
  old.bandwidth_curve = {};
  old.launch_overhead_s = 0.25;  // a marker no measurement gives
  save_device_profile(old, cpu_host_cache_path());
  DeviceProfile p = resolve_device("cpu-host");
  EXPECT_NE(p.launch_overhead_s, 0.25);
  EXPECT_FALSE(p.bandwidth_curve.empty());
  old.calibrated = true;
  save_device_profile(old, cpu_host_cache_path());
  EXPECT_DOUBLE_EQ(resolve_device("cpu-host").launch_overhead_s, 0.25);
  fs::remove_all(dir);
}

// A plan made on a calibrated profile records its label, "cpu-host (calibrated)";
// fxc report and profile --plan resolve the plan's device by that label. It names the
// cached calibrated profile; when the cache holds none any more, the measured one.
TEST(HostDevice, CalibratedLabelResolvesToTheCachedProfile) {
  fs::path dir = temp_dir("label");
  ScopedCacheHome home(dir);
  DeviceProfile fitted = resolve_device("cpu-host");
  fitted.calibrated = true;
  fitted.peak_flops = 1.25e11;
  save_device_profile(fitted, cpu_host_cache_path());
  DeviceProfile p = resolve_device(fitted.label());
  EXPECT_TRUE(p.calibrated);
  EXPECT_EQ(p.label(), "cpu-host (calibrated)");
  EXPECT_DOUBLE_EQ(p.peak_flops, 1.25e11);
  fs::remove(cpu_host_cache_path());
  DeviceProfile measured = resolve_device("cpu-host (calibrated)");
  EXPECT_FALSE(measured.calibrated);
  EXPECT_EQ(measured.name, "cpu-host");
  EXPECT_THROW(resolve_device("tpu-v9 (calibrated)"), Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fx
