// SPDX-License-Identifier: Apache-2.0
#include "device/device_presets.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "util/error.h"

namespace fx {

namespace {
constexpr std::string_view kCalibrated = " (calibrated)";
}  // namespace

DeviceProfile preset_nvidia_h100() {
  DeviceProfile p;
  p.name = "nvidia-h100";
  p.description = "NVIDIA H100 SXM5 80 GB: HBM3, dense FP16 tensor cores";
  p.source = "vendor datasheet";
  p.memory_bandwidth_bytes_per_s = 3.0e12;
  p.peak_flops = 700e12;
  p.launch_overhead_s = 5e-6;
  p.onchip_capacity_bytes = 228 * 1024;
  p.l2_bytes = 50LL * 1024 * 1024;
  p.capacity_note = "shared memory per SM";
  return p;
}

DeviceProfile preset_ascend_910b() {
  DeviceProfile p;
  p.name = "ascend-910b";
  p.description = "Huawei Ascend 910B: HBM2e, FP16 cube units";
  p.source = "public figures, unverified";
  p.memory_bandwidth_bytes_per_s = 1.6e12;
  p.peak_flops = 320e12;
  p.launch_overhead_s = 10e-6;
  p.onchip_capacity_bytes = 192 * 1024;
  p.l2_bytes = 192LL * 1024 * 1024;
  p.capacity_note = "Unified Buffer (UB) per AI core";
  return p;
}

std::vector<std::string> device_preset_names() {
  return {"cpu-host", "nvidia-h100", "ascend-910b"};
}

std::string device_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/fusion-explorer";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/fusion-explorer";
  return (std::filesystem::temp_directory_path() / "fusion-explorer").string();
}

std::string cpu_host_cache_path() {
  return device_cache_dir() + "/cpu-host.json";
}

bool is_calibrated_label(const std::string& s) {
  return s.size() > kCalibrated.size() && s.ends_with(kCalibrated);
}

std::string without_calibrated_label(const std::string& s) {
  return is_calibrated_label(s) ? s.substr(0, s.size() - kCalibrated.size()) : s;
}

std::optional<DeviceProfile> find_device(const std::string& s) {
  // Plans and results name their profile by label ("cpu-host (calibrated)", see
  // DeviceProfile::label): that is the profile of that name as cached now.
  if (is_calibrated_label(s)) {
    std::optional<DeviceProfile> p = find_device(without_calibrated_label(s));
    if (p && !p->calibrated)
      spdlog::warn(
          "device '{}': no calibrated {} profile is cached any more; using the "
          "uncalibrated one (fxc calibrate --from RESULT.json fits it again)",
          s, p->name);
    return p;
  }
  bool is_path = s.find('/') != std::string::npos ||
                 (s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0);
  if (is_path) return load_device_profile(s);
  // A GPU profile measured by `fxc calibrate --device cuda` replaces the datasheet one.
  if (std::string gpu = device_cache_dir() + "/" + s + ".json";
      s != "cpu-host" && std::filesystem::exists(gpu)) {
    try {
      return load_device_profile(gpu);
    } catch (const Error& e) {
      spdlog::warn("ignoring the measured {} profile: {}", s, e.what());
    }
  }
  if (s == "nvidia-h100") return preset_nvidia_h100();
  if (s == "ascend-910b") return preset_ascend_910b();
  if (s == "cpu-host") {
    std::string path = cpu_host_cache_path();
    if (!std::filesystem::exists(path)) return std::nullopt;
    try {
      return load_device_profile(path);
    } catch (const Error& e) {
      spdlog::warn("ignoring cached cpu-host profile: {}; measuring again", e.what());
      return std::nullopt;
    }
  }
  std::string names;
  for (const auto& n : device_preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw Error("unknown device '" + s + "' (presets: " + names + ", or a path to a .json profile)");
}

}  // namespace fx
