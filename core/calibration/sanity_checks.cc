// SPDX-License-Identifier: Apache-2.0
#include "calibration/sanity_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/statistics.h"

namespace fx {
namespace {

std::string gbs(double v) {
  return fmt::format("{:.1f} GB/s", v / 1e9);
}
std::string gflops(double v) {
  return fmt::format("{:.1f} GFLOP/s", v / 1e9);
}

}  // namespace

std::vector<std::string> implausible_figures(const DeviceProfile& p, const MachineFacts& f,
                                             const std::vector<CopyPoint>& copy) {
  std::vector<std::string> out;
  const double bound = f.peak_flops_bound();
  if (bound > 0) {
    if (p.peak_flops > bound * 1.05)
      out.push_back(fmt::format(
          "peak {} is above what {} threads x {} float lanes x {} FMA units at {:.2f} GHz can "
          "do ({}): the timer or the machine facts are wrong",
          gflops(p.peak_flops), f.threads, f.simd_floats, f.fma_units, f.ghz, gflops(bound)));
    else if (p.peak_flops < bound * kMinPeakFraction)
      out.push_back(fmt::format(
          "peak {} is {:.1f}% of the {} the cores can do (below {:.0f}%): the cores were busy "
          "or the measurement failed",
          gflops(p.peak_flops), 100 * p.peak_flops / bound, gflops(bound), 100 * kMinPeakFraction));
    for (int i = 0; i < kKernelClassCount; ++i) {
      const double v = p.kernel_classes[std::size_t(i)].flops_per_s;
      if (v > bound * 1.05)
        out.push_back(fmt::format("class {}: {} is above the ISA's bound {}",
                                  kernel_class_name(KernelClass(i)), gflops(v), gflops(bound)));
    }
  }
  double fastest = 0, memory = 0;
  int64_t memory_bytes = 0;
  for (const CopyPoint& c : copy) {
    fastest = std::max(fastest, c.bytes_per_s);
    if (c.bytes >= memory_bytes) memory_bytes = c.bytes, memory = c.bytes_per_s;
  }
  if (fastest <= 0 || memory <= 0) return out;
  if (memory_bytes > f.caches.l3 && memory * kMaxCacheToMemoryRatio < fastest)
    out.push_back(fmt::format(
        "the copy beyond L3 ({}) is 1/{:.0f} of the in-cache copy ({}): memory was shared with "
        "another process",
        gbs(memory), fastest / memory, gbs(fastest)));
  auto check_bandwidth = [&](const std::string& what, double v) {
    if (v <= 0) return;
    if (v * kBandwidthSlack < memory)
      out.push_back(fmt::format("{} {} is below 1/{:.0f} of the copy beyond L3 measured now ({})",
                                what, gbs(v), kBandwidthSlack, gbs(memory)));
    else if (v > fastest * kBandwidthSlack)
      out.push_back(fmt::format("{} {} is above {:.0f}x the fastest copy measured now ({})", what,
                                gbs(v), kBandwidthSlack, gbs(fastest)));
  };
  check_bandwidth("memory bandwidth", p.memory_bandwidth_bytes_per_s);
  for (KernelClass c :
       {KernelClass::Elementwise, KernelClass::Reduction, KernelClass::DataMovement})
    check_bandwidth(std::string("class ") + kernel_class_name(c) + " bandwidth",
                    p.kernel_classes[std::size_t(c)].bandwidth_bytes_per_s);
  return out;
}

std::vector<std::string> busy_findings(const BusyProbe& before, const BusyProbe& after, int threads,
                                       double median_kernel_dispersion, const BusyLimits& l) {
  std::vector<std::string> out;
  const std::pair<const BusyProbe*, const char*> probes[] = {{&before, "before"},
                                                             {&after, "after"}};
  for (const auto& [probe, when] : probes) {
    const double d = relative_dispersion(probe->reference_s);
    if (d > l.max_dispersion)
      out.push_back(fmt::format(
          "the reference loop {} calibration varied by {:.0f}% between repeats (limit {:.0f}%)",
          when, 100 * d, 100 * l.max_dispersion));
  }
  const double b = median_or_nan(before.reference_s), a = median_or_nan(after.reference_s);
  if (b > 0 && a > 0 && std::fabs(a / b - 1) > l.max_drift)
    out.push_back(fmt::format(
        "the reference loop took {:.2f} ms before and {:.2f} ms after calibration (more than "
        "{:.0f}% apart): the load changed while it ran",
        b * 1e3, a * 1e3, 100 * l.max_drift));
  const double load = std::max(std::isnan(before.loadavg1) ? 0.0 : before.loadavg1,
                               std::isnan(after.loadavg1) ? 0.0 : after.loadavg1);
  if (threads > 0 && load > l.max_load_per_thread * threads)
    out.push_back(fmt::format("load average {:.1f} on {} hardware threads (limit {:.1f})", load,
                              threads, l.max_load_per_thread * threads));
  if (median_kernel_dispersion > l.max_kernel_dispersion)
    out.push_back(fmt::format(
        "the timed kernels varied by {:.0f}% (median over kernels; limit {:.0f}%) between runs",
        100 * median_kernel_dispersion, 100 * l.max_kernel_dispersion));
  return out;
}

}  // namespace fx
