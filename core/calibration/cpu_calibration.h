// SPDX-License-Identifier: Apache-2.0
#pragma once
// Measures the cpu-host device profile with short microbenchmarks (about a second in
// total):
//   bandwidth   copying a buffer much larger than the last-level cache (memcpy), best of
//               several passes, counting read + write bytes
//   curve       the same copy at working sets across the caches (machine_facts.h's copy
//               curve): the profile's bandwidth_curve, so that kernels whose operands
//               stay in cache are timed at the rate they get there
//   FLOP/s      a 1024^3 single-precision GEMM through oneDNN's matmul (the runtime's
//               path: what the fastest kernels here reach), all cores, best run
//   launch      one step of the runtime's executor (step_overhead.h); the round trip of
//               an empty task handed to a worker thread only where that fails
//   elementwise the runtime's elementwise kernels on tensors in L2 (step_overhead.h):
//               the elementwise class's rate, on the curve (its loops reach a fraction
//               of what memcpy does)
// The on-chip capacity is the per-core L2 size from sysfs (256 KiB when unreadable).
// The instruction set is the one oneDNN's kernels use here.
// Which convolutions the runtime runs with Winograd is asked of the runtime for a set of
// common shapes (host_winograd_support; no timing).

#include <cstdint>

#include <string>
#include <vector>

#include "device/device_profile.h"

namespace fx {

struct CalibrationOptions {
  double time_budget_s = 0.8;  // upper bound on the whole measurement
};

// Best FLOP/s of an n x n x n float32 GEMM through oneDNN's matmul, runs repeated
// for up to budget_s (at least 3).
double measure_gemm_flops(int64_t n, double budget_s);
// How many times faster an n x n x n int8 matmul (u8 x s8 -> s32) runs than a float32
// one through oneDNN, the two measured alternately within budget_s; 0 when either
// cannot be measured. What the ISA's integer dot products (VNNI, AMX) give this machine,
// as the runtime uses them: without VNNI its exact int8 path makes two products.
double measure_int8_speedup(int64_t n, double budget_s);

// 3x3 "same" convolutions of one image, 64 to 512 channels in and out, maps of 7 to 224:
// the shapes of ResNets, VGGs and their kin the cpu-host profile records answers for.
std::vector<WinogradShape> common_winograd_shapes();
// The runtime's Winograd answers for common_winograd_shapes() on `threads` parts (0: all
// hardware threads, as the executor).
WinogradSupport host_winograd_support(int threads = 0);

DeviceProfile measure_cpu_host(const CalibrationOptions& options = {});

// Measures and writes the cache file (cpu_host_cache_path() or `path`); returns the profile.
DeviceProfile calibrate_cpu_host(const std::string& path = {});

}  // namespace fx
