// SPDX-License-Identifier: Apache-2.0
#pragma once
// The built-in device profiles, the cache of the calibrated cpu-host profile, and --device
// resolved to a profile without measuring anything: a host that has none cached is the
// caller's to measure (calibration/host_device.h does, for the CLI and the GUI).

#include <optional>
#include <string>
#include <vector>

#include "device/device_profile.h"

namespace fx {

// Built-in presets that need no measurement.
DeviceProfile preset_nvidia_h100();
DeviceProfile preset_ascend_910b();
// "cpu-host", "nvidia-h100", "ascend-910b".
std::vector<std::string> device_preset_names();

// $XDG_CACHE_HOME/fusion-explorer or ~/.cache/fusion-explorer (not created here).
std::string device_cache_dir();
std::string cpu_host_cache_path();

// Whether `name` is a label of a calibrated profile ("cpu-host (calibrated)", see
// DeviceProfile::label), and the name without that suffix.
bool is_calibrated_label(const std::string& name);
std::string without_calibrated_label(const std::string& name);

// Resolves --device: a preset name, or a path to a JSON profile (contains '/' or ends in
// ".json"), or "cpu-host" from the cache. A GPU profile measured by `fxc calibrate
// --device cuda` (device_cache_dir()/NAME.json) is found by its name and replaces the
// preset of that name. A label "NAME (calibrated)" is the profile of
// that name as cached now (a warning when it is no longer calibrated). nullopt: "cpu-host"
// with no readable cache (the caller measures it). Throws fx::Error for an unknown name
// listing the presets, fx::FileError for a profile file that cannot be read.
std::optional<DeviceProfile> find_device(const std::string& name_or_path);

}  // namespace fx
