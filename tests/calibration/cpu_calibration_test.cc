// SPDX-License-Identifier: Apache-2.0
// The cpu-host profile's peak FLOP/s comes from oneDNN's matmul (the runtime's GEMM
// path). Speeds are never compared here: a unit test on a shared, loaded machine cannot
// tell a slow library from a busy core (the figure is checked in bench/ instead).

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "calibration/cpu_calibration.h"

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
}

}  // namespace
}  // namespace fx
