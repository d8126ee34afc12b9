// SPDX-License-Identifier: Apache-2.0
#include "calibration/host_device.h"

#include <spdlog/spdlog.h>

#include "calibration/cpu_calibration.h"
#include "calibration/machine_facts.h"
#include "device/device_presets.h"
#include "profile/winograd_probe.h"
#include "util/error.h"
#include "util/version.h"

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

// A cached cpu-host profile measured on another CPU or by another fxc version is not this
// machine's (a home folder shared between machines, an upgrade): measured again.
bool cached_for_another_host(const DeviceProfile& p, const std::string& name_or_path) {
  if (p.name != "cpu-host" || without_calibrated_label(name_or_path) != "cpu-host") return false;
  if (!p.calibrated && p.bandwidth_curve.empty()) {
    // The quick measurement before it timed the runtime's step and the caches: its launch
    // overhead was a thread hand-off (10-20 us on a loaded machine, where a step costs
    // under 1 us) and every kernel went at the DRAM rate. Measured again (about a second).
    spdlog::info(
        "the cached cpu-host profile predates the per-step and cache measurements: "
        "measuring again");
    return true;
  }
  if (p.cpu_model.empty() && p.fxc_version.empty()) return false;  // quick measurement
  const std::string cpu = host_machine_facts().cpu_model;
  if (p.cpu_model == cpu && p.fxc_version == kVersion) return false;
  spdlog::warn(
      "the cached cpu-host profile was measured on '{}' by fxc {}, this is '{}' and fxc {}: "
      "measuring again (fxc calibrate measures the full grid)",
      p.cpu_model, p.fxc_version, cpu, kVersion);
  return true;
}

// Profiles cached before the int8 figure existed (or calibrated from them) lack it: it
// is measured once per process (a few tens of milliseconds) instead of their being
// measured again whole, which would drop their calibration.
double host_int8_speedup() {
  static const double measured = measure_int8_speedup(256, 0.1);
  return measured;
}

}  // namespace

DeviceProfile resolve_device(const std::string& name_or_path) {
  std::optional<DeviceProfile> cached = find_device(name_or_path);
  if (cached && cached_for_another_host(*cached, name_or_path)) cached.reset();
  if (std::optional<DeviceProfile> p = std::move(cached)) {
    if (p->name == "cpu-host") {
      p->winograd = host_winograd_support();
      if (!(p->int8_speedup > 0)) p->int8_speedup = host_int8_speedup();
    }
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
