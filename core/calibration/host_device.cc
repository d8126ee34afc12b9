// SPDX-License-Identifier: Apache-2.0
#include "calibration/host_device.h"

#include <spdlog/spdlog.h>

#include "calibration/cpu_calibration.h"
#include "device/device_presets.h"
#include "profile/winograd_probe.h"
#include "util/error.h"

namespace fx {
namespace {

DeviceProfile measure_and_cache_cpu_host() {
  try {
    return calibrate_cpu_host(cpu_host_cache_path());
  } catch (const FileError& e) {
    // An unwritable cache must not stop the analysis: use the measurement uncached.
    spdlog::warn("{}", e.what());
    return measure_cpu_host();
  }
}

}  // namespace

DeviceProfile resolve_device(const std::string& name_or_path) {
  if (std::optional<DeviceProfile> p = find_device(name_or_path)) {
    if (p->name == "cpu-host") p->winograd = host_winograd_support();
    return *p;
  }
  DeviceProfile p = measure_and_cache_cpu_host();
  if (is_calibrated_label(name_or_path))
    spdlog::warn(
        "device '{}': no calibrated {} profile is cached any more; using the "
        "uncalibrated one (fxc calibrate --from RESULT.json fits it again)",
        name_or_path, p.name);
  return p;
}

DeviceProfile resolve_device(const std::string& name_or_path, const Graph& model) {
  DeviceProfile p = resolve_device(name_or_path);
  if (p.name != "cpu-host") return p;
  std::vector<WinogradShape> unknown;
  for (const WinogradShape& s : winograd_shapes(model))
    if (!p.winograd.answer(s)) unknown.push_back(s);
  if (unknown.empty()) return p;
  WinogradSupport asked = probe_winograd(unknown, p.winograd.threads);
  if (p.winograd.threads == 0) p.winograd.threads = asked.threads;
  for (WinogradAnswer& a : asked.shapes) p.winograd.shapes.push_back(a);
  return p;
}

}  // namespace fx
