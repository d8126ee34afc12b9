// SPDX-License-Identifier: Apache-2.0
// `fxc profile --device cuda[:N]` and `fxc calibrate --device cuda` on a machine without
// a GPU: a clear error, exit 2, never a CPU run passed off as a GPU one. Skipped where a
// GPU is present (tests/cuda_runtime's *Device* tests run there).

#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli_runner.h"

namespace fx::cuda {
namespace {

const std::string kModel = std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx";

bool gpu_present() {
  std::error_code ec;
  return std::filesystem::exists("/dev/nvidia0", ec);
}

// Built with the CUDA executor: cudaGetDeviceCount's words; without: the build's.
void expect_no_cuda(const fx::testing::CliResult& r) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const bool no_device = r.err.find("no CUDA device: cudaGetDeviceCount says") != std::string::npos;
  const bool no_build = r.err.find("built without the CUDA executor") != std::string::npos;
  EXPECT_TRUE(no_device || no_build) << r.err;
  EXPECT_EQ(r.out.find("Median"), std::string::npos) << "something was profiled: " << r.out;
}

TEST(CliCudaDevice, ProfileWithoutAGpuSaysWhy) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present";
  expect_no_cuda(fx::testing::run_fxc({"profile", kModel, "--device", "cuda", "--runs", "1"}));
  expect_no_cuda(
      fx::testing::run_fxc({"profile", kModel, "--device", "cuda:1", "--opt-level", "1"}));
}

TEST(CliCudaDevice, CalibrateWithoutAGpuSaysWhy) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present";
  expect_no_cuda(fx::testing::run_fxc({"calibrate", "--device", "cuda"}));
}

TEST(CliCudaDevice, ABadDeviceIsRefused) {
  const auto r = fx::testing::run_fxc({"profile", kModel, "--device", "cuda:x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--device must be cpu, cuda or cuda:N"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fx::cuda
