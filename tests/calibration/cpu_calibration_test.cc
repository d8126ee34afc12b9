// SPDX-License-Identifier: Apache-2.0
// The cpu-host profile's peak FLOP/s comes from oneDNN's matmul (the runtime's GEMM
// path). Speeds are never compared here: a unit test on a shared, loaded machine cannot
// tell a slow library from a busy core (the figure is checked in bench/ instead).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "calibration/cpu_calibration.h"
#include "calibration/machine_facts.h"
#include "calibration/step_overhead.h"
#include "util/error.h"

namespace fx {
namespace {

TEST(CpuCalibration, GemmFlopsArePositiveAndFinite) {
  const double measured = measure_gemm_flops(256, 0.05);
  EXPECT_GT(measured, 0);
  EXPECT_TRUE(std::isfinite(measured));
}

TEST(CpuCalibration, ProfileCarriesTheGemmFigure) {
  DeviceProfile p = measure_cpu_host(CalibrationOptions{0.4});
  EXPECT_GT(p.peak_flops, 0);
  EXPECT_GT(p.memory_bandwidth_bytes_per_s, 0);
  EXPECT_GT(p.launch_overhead_s, 0);
  EXPECT_FALSE(p.isa.empty());
  EXPECT_EQ(device_profile_from_json(to_json(p)).isa, p.isa);
  // The int8 matmul's rate against the float one, kept through the profile's JSON (the
  // cost model's int8 rate); absent in older profiles reads as 0 (not measured).
  EXPECT_GT(p.int8_speedup, 0);
  EXPECT_DOUBLE_EQ(device_profile_from_json(to_json(p)).int8_speedup, p.int8_speedup);
  auto j = to_json(p);
  j.erase("int8_speedup");
  EXPECT_EQ(device_profile_from_json(j).int8_speedup, 0);
  j["int8_speedup"] = -1;
  EXPECT_THROW(device_profile_from_json(j), Error);
}

// The launch overhead is one step of the executor: measured, finite, and a step of a
// 16-float Relu costs far less than a millisecond even on a loaded machine.
TEST(CpuCalibration, StepOverheadIsTheExecutorsPerStepCost) {
  const double s = measure_step_overhead(1, 0.05);
  ASSERT_TRUE(std::isfinite(s));
  EXPECT_GT(s, 0);
  EXPECT_LT(s, 1e-3);
}

// The runtime's elementwise loops on tensors in L2: a finite rate, and a step on 64 KiB
// tensors costs more than a step on 64 floats (the bytes take time beyond the dispatch).
TEST(CpuCalibration, ElementwiseRateIsMeasuredBeyondTheStep) {
  const double step = measure_step_overhead(1, 0.02);
  const double rate = measure_elementwise_rate(1, 128 * 1024, step, 0.02);
  ASSERT_TRUE(std::isfinite(rate));
  EXPECT_GT(rate, 1e8);  // bytes per second: 128 KiB in less than a millisecond
}

// The quick profile carries the copy curve across this machine's caches, so that the
// uncalibrated cost model times a kernel whose operands stay in L1 or L2 at the rate
// it gets there (not at the DRAM figure), and the curve survives the profile's JSON.
TEST(CpuCalibration, ProfileCarriesTheCacheCurve) {
  DeviceProfile p = measure_cpu_host(CalibrationOptions{0.4});
  ASSERT_FALSE(p.bandwidth_curve.empty());
  const CacheSizes c = host_machine_facts().caches;
  // Bytes touched (two buffers) from within L1 to beyond L3 (or the grid's largest).
  EXPECT_LE(p.bandwidth_curve.points.front().first, 2.0 * double(c.l1d));
  EXPECT_GE(p.bandwidth_curve.points.back().first,
            2.0 * double(std::min<int64_t>(c.l3, kMaxGridTensorBytes)));
  for (const auto& [bytes, rate] : p.bandwidth_curve.points) EXPECT_GT(rate, 0) << bytes;
  EXPECT_EQ(device_profile_from_json(to_json(p)).bandwidth_curve.points.size(),
            p.bandwidth_curve.points.size());
  // The elementwise class has the runtime's own rate, not memcpy's.
  EXPECT_GT(
      p.kernel_classes[static_cast<std::size_t>(KernelClass::Elementwise)].bandwidth_bytes_per_s,
      0);
}

TEST(CpuCalibration, Int8SpeedupIsPositiveAndFinite) {
  const double s = measure_int8_speedup(128, 0.02);
  EXPECT_GT(s, 0);
  EXPECT_TRUE(std::isfinite(s));
}

}  // namespace
}  // namespace fx
