#include "analysis/device_profile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analysis/cpu_calibration.h"
#include "util/error.h"

namespace fx {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("fx_analysis_" + name + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
}

TEST(DeviceProfile, JsonRoundTrip) {
  DeviceProfile p = preset_nvidia_h100();
  DeviceProfile q = device_profile_from_json(to_json(p));
  EXPECT_EQ(q.name, p.name);
  EXPECT_EQ(q.source, "vendor datasheet");
  EXPECT_DOUBLE_EQ(q.memory_bandwidth_bytes_per_s, 3.0e12);
  EXPECT_DOUBLE_EQ(q.peak_flops, 700e12);
  EXPECT_DOUBLE_EQ(q.launch_overhead_s, 5e-6);
  EXPECT_EQ(q.onchip_capacity_bytes, 228 * 1024);
  EXPECT_EQ(q.l2_bytes, 50LL * 1024 * 1024);
}

TEST(DeviceProfile, KernelClassRatesRoundTripAndDefault) {
  DeviceProfile p = preset_nvidia_h100();
  // Without class rates, every class uses the profile's bandwidth and peak.
  EXPECT_DOUBLE_EQ(p.bandwidth(KernelClass::Depthwise), 3.0e12);
  EXPECT_DOUBLE_EQ(p.flops(KernelClass::Elementwise), 700e12);
  EXPECT_EQ(p.label(), "nvidia-h100");
  p.kernel_classes[static_cast<std::size_t>(KernelClass::Depthwise)] = {1e12, 2e13};
  p.calibrated = true;
  p.calibration = "fitted to test kernels";
  DeviceProfile q = device_profile_from_json(to_json(p));
  EXPECT_DOUBLE_EQ(q.bandwidth(KernelClass::Depthwise), 1e12);
  EXPECT_DOUBLE_EQ(q.flops(KernelClass::Depthwise), 2e13);
  EXPECT_DOUBLE_EQ(q.bandwidth(KernelClass::Conv), 3.0e12);
  EXPECT_TRUE(q.calibrated);
  EXPECT_EQ(q.calibration, "fitted to test kernels");
  EXPECT_EQ(q.label(), "nvidia-h100 (calibrated)");
  for (int c = 0; c < kKernelClassCount; ++c)
    EXPECT_EQ(kernel_class_from_name(kernel_class_name(static_cast<KernelClass>(c))),
              static_cast<KernelClass>(c));
  nlohmann::json j = to_json(p);
  j["kernel_classes"]["warp_drive"] = {{"bandwidth_bytes_per_s", 1}};
  EXPECT_THROW(device_profile_from_json(j), Error);
  j = to_json(p);
  j["kernel_classes"]["conv"] = {{"bandwidth_bytes_per_s", -5}};
  EXPECT_THROW(device_profile_from_json(j), Error);
}

TEST(DeviceProfile, AscendIsMarkedUnverified) {
  EXPECT_EQ(preset_ascend_910b().source, "public figures, unverified");
}

TEST(DeviceProfile, MissingOrInvalidFieldIsAnError) {
  nlohmann::json j = to_json(preset_nvidia_h100());
  j.erase("peak_flops");
  EXPECT_THROW(device_profile_from_json(j), Error);
  j = to_json(preset_nvidia_h100());
  j["memory_bandwidth_bytes_per_s"] = -1;
  EXPECT_THROW(device_profile_from_json(j), Error);
}

TEST(DeviceProfile, ShippedJsonFilesMatchPresets) {
  for (const auto& [file, preset] : {std::pair{"nvidia-h100.json", preset_nvidia_h100()},
                                     std::pair{"ascend-910b.json", preset_ascend_910b()}}) {
    DeviceProfile p = load_device_profile(std::string(FX_RESOURCES_DIR) + "/devices/" + file);
    EXPECT_EQ(p.name, preset.name);
    EXPECT_EQ(p.source, preset.source);
    EXPECT_DOUBLE_EQ(p.memory_bandwidth_bytes_per_s, preset.memory_bandwidth_bytes_per_s);
    EXPECT_DOUBLE_EQ(p.peak_flops, preset.peak_flops);
    EXPECT_EQ(p.onchip_capacity_bytes, preset.onchip_capacity_bytes);
  }
}

TEST(DeviceProfile, ResolveNamesFilesAndUnknowns) {
  EXPECT_EQ(resolve_device("nvidia-h100").name, "nvidia-h100");
  EXPECT_EQ(resolve_device("ascend-910b").name, "ascend-910b");
  fs::path dir = temp_dir("resolve");
  DeviceProfile mine = preset_nvidia_h100();
  mine.name = "my-gpu";
  save_device_profile(mine, (dir / "my.json").string());
  EXPECT_EQ(resolve_device((dir / "my.json").string()).name, "my-gpu");
  try {
    resolve_device("tpu-v9");
    FAIL() << "unknown device accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvidia-h100"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolve_device((dir / "absent.json").string()), FileError);
  fs::remove_all(dir);
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

TEST(DeviceProfile, CpuHostIsMeasuredAndCached) {
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

// A plan made on a calibrated profile records its label, "cpu-host (calibrated)";
// fxc report and profile --plan resolve the plan's device by that label. It names the
// cached calibrated profile; when the cache holds none any more, the measured one.
TEST(DeviceProfile, CalibratedLabelResolvesToTheCachedProfile) {
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
