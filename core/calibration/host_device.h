// SPDX-License-Identifier: Apache-2.0
#pragma once
// --device resolved on this host, for the CLI and the GUI: device/device_presets.h's
// find_device, and where that has no cpu-host profile cached, a measurement of this
// machine (cpu_calibration.h) written to the cache. A cpu-host profile read from the
// cache (or a file) has its Winograd answers asked of the runtime again
// (host_winograd_support: no timing), so that they follow FX_WINOGRAD and this build.
// Given the model, the runtime is also asked about that model's own convolution shapes
// (profile/winograd_probe.h), so that the cost model's Winograd answers are the runtime's
// for every convolution it will estimate, not only the common shapes calibration records.

#include <string>

#include "device/device_profile.h"
#include "ir/graph.h"

namespace fx {

// Throws fx::Error for an unknown name listing the presets, fx::FileError for a profile
// file that cannot be read.
DeviceProfile resolve_device(const std::string& name_or_path);
// The same, with the runtime's Winograd answers for `model`'s convolutions added to a
// cpu-host profile (other devices are returned as resolved).
DeviceProfile resolve_device(const std::string& name_or_path, const Graph& model);

}  // namespace fx
