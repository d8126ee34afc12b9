// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whether a calibration can be believed, before it is saved:
//
// implausible_figures: each figure of the profile against what the machine allows.
//   - peak FLOP/s and every class's FLOP/s <= the ISA's bound (machine_facts.h:
//     threads x SIMD lanes x 2 x FMA units x clock); the GEMM's peak >= kMinPeakFraction
//     of it (far below: the cores were taken, or the measurement is wrong: a report once
//     showed 3.5 GFLOP/s on a machine that does 100x that)
//   - memory bandwidth within [copy beyond L3 / kBandwidthSlack, fastest copy x
//     kBandwidthSlack] of the copy curve measured in the same calibration; the memory-
//     bound classes' bandwidths (elementwise, reduction, data movement) likewise
//   - the copy beyond L3 >= the fastest (in-cache) copy / kMaxCacheToMemoryRatio: a
//     memory system slower than that is another process streaming at the same time
//
// busy_findings: whether the machine was quiet while it was measured.
//   - the reference loop's dispersion before or after > max_dispersion
//   - its median after differs from before by more than max_drift
//   - /proc/loadavg's 1-minute load > max_load_per_thread x hardware threads
//   - the median dispersion of the timed kernels > max_kernel_dispersion
//
// Each finding is one sentence with the numbers. `fxc calibrate` refuses to save a
// calibration with findings unless --force, and then records them in the profile.

#include <string>
#include <vector>

#include "calibration/machine_facts.h"
#include "device/device_profile.h"

namespace fx {

inline constexpr double kMinPeakFraction = 0.05;
inline constexpr double kBandwidthSlack = 3.0;
inline constexpr double kMaxCacheToMemoryRatio = 40.0;

std::vector<std::string> implausible_figures(const DeviceProfile& p, const MachineFacts& facts,
                                             const std::vector<CopyPoint>& copy);

struct BusyLimits {
  double max_dispersion = 0.10;
  double max_drift = 0.25;
  double max_load_per_thread = 1.5;
  double max_kernel_dispersion = 0.15;
};

// median_kernel_dispersion: NaN when unknown (not judged).
std::vector<std::string> busy_findings(const BusyProbe& before, const BusyProbe& after, int threads,
                                       double median_kernel_dispersion,
                                       const BusyLimits& limits = {});

}  // namespace fx
