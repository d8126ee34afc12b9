// SPDX-License-Identifier: Apache-2.0
#pragma once
// What calibration checks its figures against (sanity_checks.h), read from the machine
// or measured in a few hundred milliseconds:
//   facts        CPU model, hardware threads, SIMD width and FMA units of the ISA, clock,
//                cache sizes (/proc/cpuinfo, sysfs, cpuid)
//   copy curve   a STREAM-like copy (memcpy, read + write bytes) at working sets from
//                half of L1 to twice L3, median of repeats: what the memory system does
//   busy probe   a fixed scalar loop timed a few times, and /proc/loadavg: whether the
//                machine was quiet enough while calibration ran

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/calibration_grid.h"
#include "device/device_profile.h"

namespace fx {

struct MachineFacts {
  std::string cpu_model;        // /proc/cpuinfo "model name" ("" when unreadable)
  int threads = 1;              // hardware threads the runtime uses
  int simd_floats = 4;          // float32 lanes of the widest vector unit (16 with AVX-512)
  int fma_units = 2;            // FMA pipes per core assumed (2 on every current x86 core)
  double ghz = 0;               // clock: cpufreq's maximum, else /proc/cpuinfo's MHz
  bool ghz_is_maximum = false;  // false: /proc/cpuinfo's current MHz (boost may exceed it)
  CacheSizes caches;

  // What no float32 kernel can exceed: threads x lanes x 2 (FMA) x FMA units x clock,
  // with 30% headroom when the clock is not the maximum one.
  double peak_flops_bound() const {
    return double(threads) * simd_floats * 2.0 * fma_units * ghz * 1e9 *
           (ghz_is_maximum ? 1.0 : 1.3);
  }
};

MachineFacts host_machine_facts();

struct CopyPoint {
  int64_t bytes = 0;        // one buffer
  double bytes_per_s = 0;   // median over the repeats (read + written bytes)
  double dispersion = NAN;  // their relative_dispersion
};
// Buffer sizes of the copy curve: half, once and twice each cache level (4 KiB to
// kMaxGridTensorBytes).
std::vector<int64_t> copy_curve_sizes(const CacheSizes& caches);
// copy_curve_sizes(caches), `repeats` copies each.
std::vector<CopyPoint> measure_copy_curve(const CacheSizes& caches, int repeats = 7);
// The device profile's working-set curve: bytes touched by a copy (its two buffers) and
// its rate, at each point measured (fewer than two: none).
BandwidthCurve bandwidth_curve_of(const std::vector<CopyPoint>& copy);

struct BusyProbe {
  std::vector<double> reference_s;  // the reference loop's time, each repeat
  double loadavg1 = NAN;            // /proc/loadavg's 1-minute figure (NaN: unreadable)
};
BusyProbe probe_busy(int repeats = 9);

}  // namespace fx
