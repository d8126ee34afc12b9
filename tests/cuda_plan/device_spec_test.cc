// SPDX-License-Identifier: Apache-2.0
// --device parsing, the GPU calibration's profile and its name, and a measured GPU
// profile replacing the datasheet preset of that name.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "cuda_plan/device_spec.h"
#include "cuda_plan/gpu_calibration_fit.h"
#include "device/device_presets.h"
#include "util/error.h"

namespace fx::cuda {
namespace {

TEST(DeviceSpec, ParsesCpuCudaAndOrdinals) {
  EXPECT_FALSE(parse_device_spec("cpu").cuda);
  EXPECT_TRUE(parse_device_spec("cuda").cuda);
  EXPECT_EQ(parse_device_spec("cuda").index, 0);
  EXPECT_EQ(parse_device_spec("cuda:3").index, 3);
  EXPECT_EQ(parse_device_spec("cuda:3").str(), "cuda:3");
  for (const char* bad : {"gpu", "cuda:", "cuda:x", "cuda:-1", "CUDA"}) {
    try {
      parse_device_spec(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cpu, cuda or cuda:N"), std::string::npos);
    }
  }
}

GpuMeasurements h100ish() {
  GpuMeasurements m;
  m.device_name = "NVIDIA H100 80GB HBM3";
  m.driver = "driver 12080, runtime 13000";
  m.sm_count = 132;
  m.shared_memory_per_sm = 233472;
  m.l2_bytes = 50 << 20;
  m.copy_bytes_per_s = 3.0e12;
  m.elementwise_bytes_per_s = 2.9e12;
  m.reduction_bytes_per_s = 2.5e12;
  m.transpose_bytes_per_s = 2.0e12;
  m.launch_overhead_s = 3e-6;
  m.matmul_flops_per_s = 50e12;
  m.conv_flops_per_s = 40e12;
  m.depthwise_bytes_per_s = 2.2e12;
  return m;
}

TEST(GpuCalibrationFit, MeasurementsBecomeTheProfilesRates) {
  const DeviceProfile p = gpu_profile_from_measurements(h100ish(), "nvidia-h100", "2026-11-27");
  EXPECT_EQ(p.name, "nvidia-h100");
  EXPECT_DOUBLE_EQ(p.memory_bandwidth_bytes_per_s, 3.0e12);
  EXPECT_DOUBLE_EQ(p.launch_overhead_s, 3e-6);
  EXPECT_DOUBLE_EQ(p.flops(KernelClass::MatMul), 50e12);
  EXPECT_DOUBLE_EQ(p.flops(KernelClass::Conv), 40e12);
  EXPECT_DOUBLE_EQ(p.bandwidth(KernelClass::Reduction), 2.5e12);
  EXPECT_DOUBLE_EQ(p.bandwidth(KernelClass::DataMovement), 2.0e12);
  EXPECT_EQ(p.onchip_capacity_bytes, 233472);
  EXPECT_FALSE(p.datasheet());
  EXPECT_NE(p.source.find("measured on NVIDIA H100"), std::string::npos);
  GpuMeasurements none = h100ish();
  none.launch_overhead_s = 0;
  EXPECT_THROW(gpu_profile_from_measurements(none, "x", "today"), Error);
}

TEST(GpuCalibrationFit, ProfileNames) {
  EXPECT_EQ(gpu_profile_name("NVIDIA H100 80GB HBM3"), "nvidia-h100");
  EXPECT_EQ(gpu_profile_name("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(gpu_profile_name("NVIDIA H100L-X"), "cuda-nvidia-h100l-x");
  EXPECT_EQ(gpu_profile_name("Tesla V100-SXM2-16GB"), "cuda-tesla-v100-sxm2-16gb");
}

TEST(GpuCalibrationFit, AMeasuredProfileReplacesThePresetOfItsName) {
  const auto dir = std::filesystem::temp_directory_path() / "fx_gpu_profile_cache";
  std::filesystem::create_directories(dir / "fusion-explorer");
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  EXPECT_TRUE(find_device("nvidia-h100")->datasheet());
  const DeviceProfile p = gpu_profile_from_measurements(h100ish(), "nvidia-h100", "2026-11-27");
  save_device_profile(p, device_cache_dir() + "/nvidia-h100.json");
  const auto found = find_device("nvidia-h100");
  EXPECT_FALSE(found->datasheet());
  EXPECT_DOUBLE_EQ(found->memory_bandwidth_bytes_per_s, 3.0e12);
  save_device_profile(gpu_profile_from_measurements(h100ish(), "nvidia-h200", "2026-11-27"),
                      device_cache_dir() + "/nvidia-h200.json");
  EXPECT_EQ(find_device("nvidia-h200")->name, "nvidia-h200");
  if (old)
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fx::cuda
