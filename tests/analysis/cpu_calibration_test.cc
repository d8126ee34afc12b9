// The cpu-host profile's peak FLOP/s comes from oneDNN's matmul (the runtime's GEMM
// path): positive, and of the order of a oneDNN GEMM timed directly here through a
// different entry point (dnnl_sgemm). No absolute speed is asserted: the machine
// may be loaded; both figures are the best of several runs.

#include <gtest/gtest.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "analysis/cpu_calibration.h"

namespace fx {
namespace {

double direct_sgemm_flops(int64_t n) {
  std::vector<float> a(static_cast<std::size_t>(n * n), 0.5f), b(a.size(), 0.25f), c(a.size());
  double best = 0;
  for (int i = 0; i < 6; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n),
              dnnl_success);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0 && s > 0) best = std::max(best, 2.0 * double(n) * n * n / s);  // run 0: warm-up
  }
  EXPECT_FLOAT_EQ(c[0], 0.5f * 0.25f * float(n));  // it really multiplied
  return best;
}

TEST(CpuCalibration, GemmFlopsComeFromOneDnn) {
  const int64_t n = 512;
  // Alternated, best of each: a burst of load from elsewhere hits both alike.
  double measured = 0, direct = 0;
  for (int round = 0; round < 3; ++round) {
    measured = std::max(measured, measure_gemm_flops(n, 0.1));
    direct = std::max(direct, direct_sgemm_flops(n));
  }
  ASSERT_GT(measured, 0);
  ASSERT_GT(direct, 0);
  // Same library, same sizes: within a factor that only a very uneven load exceeds.
  EXPECT_GT(measured, direct / 4) << measured << " vs " << direct;
  EXPECT_LT(measured, direct * 4) << measured << " vs " << direct;
}

TEST(CpuCalibration, ProfileCarriesTheGemmFigure) {
  DeviceProfile p = measure_cpu_host(CalibrationOptions{0.4});
  EXPECT_GT(p.peak_flops, 0);
  EXPECT_GT(p.memory_bandwidth_bytes_per_s, 0);
  EXPECT_GT(p.launch_overhead_s, 0);
}

}  // namespace
}  // namespace fx
