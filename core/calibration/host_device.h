#pragma once
// --device resolved on this host, for the CLI and the GUI: device/device_presets.h's
// find_device, and where that has no cpu-host profile cached, a measurement of this
// machine (cpu_calibration.h) written to the cache. A cpu-host profile read from the
// cache (or a file) has its Winograd answers asked of the runtime again
// (host_winograd_support: no timing), so that they follow FX_WINOGRAD and this build.

#include <string>

#include "device/device_profile.h"

namespace fx {

// Throws fx::Error for an unknown name listing the presets, fx::FileError for a profile
// file that cannot be read.
DeviceProfile resolve_device(const std::string& name_or_path);

}  // namespace fx
