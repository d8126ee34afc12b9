// SPDX-License-Identifier: Apache-2.0
// The cpu-host profile's peak FLOP/s comes from oneDNN's matmul (the runtime's GEMM
// path). Speeds are never compared here: a unit test on a shared, loaded machine cannot
// tell a slow library from a busy core (the figure is checked in bench/ instead).

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "calibration/cpu_calibration.h"
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

TEST(CpuCalibration, Int8SpeedupIsPositiveAndFinite) {
  const double s = measure_int8_speedup(128, 0.02);
  EXPECT_GT(s, 0);
  EXPECT_TRUE(std::isfinite(s));
}

}  // namespace
}  // namespace fx
