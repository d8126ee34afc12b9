#pragma once
// Measures the cpu-host device profile with three short microbenchmarks (well under a
// second in total):
//   bandwidth   copying a buffer much larger than the last-level cache (memcpy), best of
//               several passes, counting read + write bytes
//   FLOP/s      a register-blocked single-precision GEMM on L1-resident blocks, all cores
//   launch      round trip of an empty task handed to a worker thread and waited for
// The on-chip capacity is the per-core L2 size from sysfs (256 KiB when unreadable).

#include "analysis/device_profile.h"

namespace fx {

struct CalibrationOptions {
  double time_budget_s = 0.8;  // upper bound on the whole measurement
};

DeviceProfile measure_cpu_host(const CalibrationOptions& options = {});

// Measures and writes the cache file (cpu_host_cache_path() or `path`); returns the profile.
DeviceProfile calibrate_cpu_host(const std::string& path = {});

}  // namespace fx
