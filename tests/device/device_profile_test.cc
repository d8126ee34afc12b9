// SPDX-License-Identifier: Apache-2.0
#include "device/device_profile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "device/device_presets.h"
#include "util/error.h"

namespace fx {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("fx_device_" + name + std::to_string(::getpid()));
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
  EXPECT_DOUBLE_EQ(q.bandwidth(KernelClass::Pooling), 3.0e12);  // unset stays unset
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

// A fused class's fixed cost per kernel reads back; profiles written before it (no
// "fixed_s") read as none, and a negative one is an error naming the rates.
TEST(DeviceProfile, FusedFixedCostRoundTripsAndDefaultsToNone) {
  DeviceProfile p = preset_nvidia_h100();
  const auto ew = std::size_t(KernelClass::Elementwise);
  p.fused_classes[ew] = {0.9, 0, 2e-6};
  nlohmann::json j = to_json(p);
  EXPECT_DOUBLE_EQ(device_profile_from_json(j).fused_fixed_s(KernelClass::Elementwise), 2e-6);
  EXPECT_DOUBLE_EQ(device_profile_from_json(j).fused_scale(KernelClass::Elementwise), 0.9);
  j["fused_kernel_classes"]["elementwise"].erase("fixed_s");
  EXPECT_DOUBLE_EQ(device_profile_from_json(j).fused_fixed_s(KernelClass::Elementwise), 0);
  EXPECT_DOUBLE_EQ(device_profile_from_json(j).fused_scale(KernelClass::Elementwise), 0.9);
  j["fused_kernel_classes"]["elementwise"]["fixed_s"] = -1e-6;
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
  EXPECT_EQ(find_device("nvidia-h100")->name, "nvidia-h100");
  EXPECT_EQ(find_device("ascend-910b")->name, "ascend-910b");
  fs::path dir = temp_dir("resolve");
  DeviceProfile mine = preset_nvidia_h100();
  mine.name = "my-gpu";
  save_device_profile(mine, (dir / "my.json").string());
  EXPECT_EQ(find_device((dir / "my.json").string())->name, "my-gpu");
  try {
    find_device("tpu-v9");
    FAIL() << "unknown device accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvidia-h100"), std::string::npos) << e.what();
  }
  EXPECT_THROW(find_device((dir / "absent.json").string()), FileError);
  fs::remove_all(dir);
}

// This layer never measures: a cpu-host with no cached profile is the caller's to
// measure (calibration/host_device.h).
TEST(DeviceProfile, UncachedCpuHostIsNotMeasuredHere) {
  fs::path dir = temp_dir("uncached");
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  EXPECT_FALSE(find_device("cpu-host").has_value());
  EXPECT_FALSE(find_device("cpu-host (calibrated)").has_value());
  DeviceProfile cached = preset_nvidia_h100();
  cached.name = "cpu-host";
  cached.calibrated = true;
  save_device_profile(cached, cpu_host_cache_path());
  ASSERT_TRUE(find_device("cpu-host (calibrated)").has_value());
  EXPECT_TRUE(find_device("cpu-host (calibrated)")->calibrated);
  if (saved)
    ::setenv("XDG_CACHE_HOME", saved->c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
  fs::remove_all(dir);
}

TEST(DeviceProfile, WinogradAnswersRoundTrip) {
  DeviceProfile p = preset_nvidia_h100();
  EXPECT_FALSE(to_json(p).contains("winograd"));  // a GPU records none
  const WinogradShape a{64, 64, 56, 56, 56, 56, 1, 1, 1, 1}, b{512, 512, 7, 7, 7, 7, 1, 1, 1, 1};
  p.winograd.threads = 4;
  p.winograd.shapes = {{a, true}, {b, false}};
  DeviceProfile q = device_profile_from_json(to_json(p));
  EXPECT_EQ(q.winograd.threads, 4);
  ASSERT_EQ(q.winograd.shapes.size(), 2u);
  EXPECT_TRUE(q.winograd.runs(a));
  EXPECT_FALSE(q.winograd.runs(b));
  EXPECT_EQ(q.winograd.answer(b), std::optional<bool>(false));
  WinogradShape unknown = a;
  unknown.ic = 96;
  EXPECT_FALSE(q.winograd.runs(unknown));  // not asked about: direct
  EXPECT_FALSE(q.winograd.answer(unknown).has_value());
  nlohmann::json j = to_json(p);
  j["winograd"]["shapes"][0] = {1, 2, 3};
  EXPECT_THROW(device_profile_from_json(j), Error);
}

TEST(DeviceProfile, CalibrationResidualsAndProvenanceRoundTrip) {
  DeviceProfile p = preset_nvidia_h100();
  EXPECT_TRUE(p.datasheet());
  EXPECT_FALSE(p.has_uncertainty());
  EXPECT_FALSE(to_json(p).contains("saving_uncertainty"));
  p.saving_uncertainty[std::size_t(KernelClass::Conv)] = {14, 0.08};
  p.measured_ops = {"Add", "Conv"};
  p.calibration_flags = {"load average 15.0 on 2 hardware threads (limit 3.0)"};
  p.cpu_model = "AMD EPYC";
  p.fxc_version = "1.2.3";
  const DeviceProfile q = device_profile_from_json(to_json(p));
  EXPECT_EQ(q.uncertainty(KernelClass::Conv).groups, 14);
  EXPECT_DOUBLE_EQ(q.uncertainty(KernelClass::Conv).rel_rms, 0.08);
  EXPECT_EQ(q.uncertainty(KernelClass::MatMul).groups, 0);
  EXPECT_EQ(q.measured_ops, p.measured_ops);
  EXPECT_EQ(q.calibration_flags, p.calibration_flags);
  EXPECT_EQ(q.cpu_model, "AMD EPYC");
  EXPECT_EQ(q.fxc_version, "1.2.3");
  EXPECT_FALSE(q.datasheet());  // measured on a CPU
  auto j = to_json(p);
  j["saving_uncertainty"]["conv"]["rel_rms"] = -1;
  EXPECT_THROW(device_profile_from_json(j), Error);
}

// The interval's half width and the coverage it claims, and the lone kernels' shares,
// survive the file; absent, they are 0; out of range, the profile is refused.
TEST(DeviceProfile, HalfWidthCoverageAndLoneSharesRoundTrip) {
  DeviceProfile p = preset_nvidia_h100();
  EXPECT_FALSE(to_json(p).contains("lone_kernel_saving"));
  EXPECT_EQ(device_profile_from_json(to_json(p)).lone_saving_share(KernelClass::Conv), 0);
  p.saving_uncertainty[std::size_t(KernelClass::Conv)] = {14, 0.08, 0.15, 0.9};
  p.lone_kernel_saving.results = 40;
  p.lone_kernel_saving.share[std::size_t(KernelClass::Conv)] = 0.09;
  p.lone_kernel_saving.share[std::size_t(KernelClass::Depthwise)] = 0.6;
  const DeviceProfile q = device_profile_from_json(to_json(p));
  EXPECT_DOUBLE_EQ(q.uncertainty(KernelClass::Conv).rel_half_width, 0.15);
  EXPECT_DOUBLE_EQ(q.uncertainty(KernelClass::Conv).coverage, 0.9);
  EXPECT_EQ(q.lone_kernel_saving.results, 40);
  EXPECT_DOUBLE_EQ(q.lone_saving_share(KernelClass::Conv), 0.09);
  EXPECT_DOUBLE_EQ(q.lone_saving_share(KernelClass::Depthwise), 0.6);
  EXPECT_DOUBLE_EQ(q.lone_saving_share(KernelClass::MatMul), 0);
  auto j = to_json(p);
  j["lone_kernel_saving"]["classes"]["conv"] = 1.5;
  EXPECT_THROW(device_profile_from_json(j), Error);
  j = to_json(p);
  j["lone_kernel_saving"]["classes"]["warp"] = 0.1;
  EXPECT_THROW(device_profile_from_json(j), Error);
  j = to_json(p);
  j["saving_uncertainty"]["conv"]["coverage"] = 1.0;
  EXPECT_THROW(device_profile_from_json(j), Error);
}

// The working-set curve: log-log interpolation between its points, flat beyond its ends,
// 1 at the largest point (a class's bandwidth is its rate beyond the caches), each class
// following it to its own degree; absent, one bandwidth whatever the bytes.
TEST(DeviceProfile, BandwidthFollowsTheWorkingSetCurve) {
  DeviceProfile p = preset_nvidia_h100();
  const KernelClass ew = KernelClass::Elementwise, mm = KernelClass::MatMul;
  EXPECT_DOUBLE_EQ(p.bandwidth(ew, 1e3), p.bandwidth(ew));
  p.bandwidth_curve.points = {{1e4, 400e9}, {1e6, 100e9}, {1e8, 25e9}};
  p.bandwidth_curve.follow[static_cast<std::size_t>(mm)] = 0.5;
  const double bw = p.bandwidth(ew);
  EXPECT_DOUBLE_EQ(p.bandwidth(ew, 1e8), bw);
  EXPECT_DOUBLE_EQ(p.bandwidth(ew, 1e9), bw);                         // beyond: the last point
  EXPECT_NEAR(p.bandwidth(ew, 1e6), 4 * bw, 1e-9 * bw);               // a point
  EXPECT_NEAR(p.bandwidth(ew, 1e5), 8 * bw, 1e-9 * bw);               // halfway in log: sqrt(16*4)
  EXPECT_NEAR(p.bandwidth(ew, 10), 16 * bw, 1e-9 * bw);               // below: the first point
  EXPECT_NEAR(p.bandwidth(mm, 1e6), 2 * p.bandwidth(mm), 1e-9 * bw);  // follow 0.5
  DeviceProfile q = device_profile_from_json(to_json(p));
  EXPECT_EQ(q.bandwidth_curve.points, p.bandwidth_curve.points);
  EXPECT_EQ(q.bandwidth_curve.follow, p.bandwidth_curve.follow);
}

TEST(DeviceProfile, BadBandwidthCurveIsAnError) {
  DeviceProfile p = preset_nvidia_h100();
  p.bandwidth_curve.points = {{1e6, 100e9}, {1e4, 400e9}};  // not ascending
  EXPECT_THROW(device_profile_from_json(to_json(p)), Error);
  p.bandwidth_curve.points = {{1e4, 400e9}, {1e6, 100e9}};
  nlohmann::json j = to_json(p);
  j["bandwidth_curve"]["points"][1] = {1e6};
  EXPECT_THROW(device_profile_from_json(j), Error);
  j = to_json(p);
  j["bandwidth_curve"]["follow"]["conv"] = -1;
  EXPECT_THROW(device_profile_from_json(j), Error);
}

// Profiles written before the pooling class measured pooling inside depthwise: pooling
// reads back with depthwise's figures, and a profile written now keeps its own.
TEST(DeviceProfile, AProfileWithoutThePoolingClassGivesPoolingItsDepthwiseFigures) {
  DeviceProfile p = preset_nvidia_h100();
  const auto dw = std::size_t(KernelClass::Depthwise), pool = std::size_t(KernelClass::Pooling);
  p.kernel_classes[dw] = {1e12, 2e13};
  p.fused_classes[dw].scale = 0.7;
  p.lone_kernel_saving.results = 3;
  p.lone_kernel_saving.share[dw] = 0.4;
  p.kernel_classes[pool] = {5e11, 1e13};
  nlohmann::json j = to_json(p);
  const DeviceProfile now = device_profile_from_json(j);
  EXPECT_DOUBLE_EQ(now.bandwidth(KernelClass::Pooling), 5e11);
  EXPECT_DOUBLE_EQ(now.fused_scale(KernelClass::Pooling), 1.0);
  EXPECT_DOUBLE_EQ(now.lone_saving_share(KernelClass::Pooling), 0);

  j["kernel_classes"].erase("pooling");
  j["lone_kernel_saving"]["classes"].erase("pooling");
  const DeviceProfile old = device_profile_from_json(j);
  EXPECT_DOUBLE_EQ(old.bandwidth(KernelClass::Pooling), 1e12);
  EXPECT_DOUBLE_EQ(old.flops(KernelClass::Pooling), 2e13);
  EXPECT_DOUBLE_EQ(old.fused_scale(KernelClass::Pooling), 0.7);
  EXPECT_DOUBLE_EQ(old.lone_saving_share(KernelClass::Pooling), 0.4);
}

}  // namespace
}  // namespace fx
