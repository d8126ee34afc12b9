#pragma once
// What the cost model needs to know about a device, and where the numbers came from.
// Profiles are plain JSON files a user can write; three presets are built in:
//
//   cpu-host      measured on this machine by a short microbenchmark (cpu_calibration.h),
//                 cached under $XDG_CACHE_HOME/fusion-explorer (or ~/.cache/fusion-explorer)
//   nvidia-h100   vendor datasheet figures
//   ascend-910b   public figures, unverified
//
// JSON (every field but name optional on load):
//   { "schema_version": 1, "name": "nvidia-h100", "description": "...",
//     "source": "vendor datasheet", "memory_bandwidth_bytes_per_s": 3.0e12,
//     "peak_flops": 7.0e14, "launch_overhead_s": 5e-6, "onchip_capacity_bytes": 233472,
//     "l2_bytes": 52428800, "capacity_note": "shared memory per SM" }

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace fx {

struct DeviceProfile {
  std::string name;
  std::string description;
  // Where the numbers come from: "measured on this host 2026-11-23", "vendor datasheet",
  // "public figures, unverified". Printed beside every estimate.
  std::string source;
  double memory_bandwidth_bytes_per_s = 0;  // sustained DRAM/HBM copy bandwidth
  double peak_flops = 0;                    // dense FLOP/s of the type the model runs in
  double launch_overhead_s = 0;             // per kernel launch / task dispatch
  // The on-chip memory a fused kernel keeps its tile in (GPU shared memory per SM, CPU
  // L2 per core, Ascend UB per AI core). Fusions need footprint <= 0.8 x this.
  int64_t onchip_capacity_bytes = 0;
  int64_t l2_bytes = 0;       // last-level cache shared by cores (informative)
  std::string capacity_note;  // what onchip_capacity_bytes stands for on this device

  // Throws fx::Error when a number is missing, negative or zero where it must not be.
  void check() const;
};

nlohmann::json to_json(const DeviceProfile& p);
// Throws fx::Error naming the missing/invalid field.
DeviceProfile device_profile_from_json(const nlohmann::json& j);
// Throws fx::FileError naming the path.
DeviceProfile load_device_profile(const std::string& path);
void save_device_profile(const DeviceProfile& p, const std::string& path);

// Built-in presets that need no measurement.
DeviceProfile preset_nvidia_h100();
DeviceProfile preset_ascend_910b();
// "cpu-host", "nvidia-h100", "ascend-910b".
std::vector<std::string> device_preset_names();

// Resolves --device: a preset name, or a path to a JSON profile (contains '/' or ends in
// ".json"). "cpu-host" is read from the cache, measured (and cached) when absent.
// Throws fx::Error for an unknown name listing the presets.
DeviceProfile resolve_device(const std::string& name_or_path);

// $XDG_CACHE_HOME/fusion-explorer or ~/.cache/fusion-explorer (not created here).
std::string device_cache_dir();
std::string cpu_host_cache_path();

}  // namespace fx
