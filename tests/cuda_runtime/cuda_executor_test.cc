// SPDX-License-Identifier: Apache-2.0
// The CUDA executor on a GPU: unfused and fused plans give the CPU runtime's outputs, and
// timed runs give one time per launch. Every test here needs a device and skips by name
// ("no CUDA device") without one; only the no-device message is checked everywhere.

#include "cuda_runtime/cuda_executor.h"

#include <gtest/gtest.h>

#include "../cuda_plan/cuda_plan_test_util.h"
#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "cuda_runtime/cuda_device.h"
#include "cuda_runtime/cuda_profile.h"
#include "device/device_presets.h"
#include "onnx/model_loader.h"
#include "profile/equivalence.h"
#include "profile/profiler.h"
#include "util/error.h"

namespace fx::cuda {
namespace {

#define REQUIRE_CUDA_DEVICE()                                       \
  std::string why_;                                                 \
  const auto devices_ = list_cuda_devices(&why_);                   \
  if (devices_.empty()) GTEST_SKIP() << "no CUDA device: " << why_; \
  const CudaDeviceInfo& dev = devices_[0]

ProfileResult cpu_run(const Graph& g) {
  ProfileOptions o;
  o.runs = 1;
  o.warmup = 0;
  return Profiler(o).profile(g);
}

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> n;
  for (ValueId v : g.outputs()) n.push_back(g.value(v).name);
  return n;
}

void expect_matches_cpu(const Graph& g, const std::vector<const FusionGroup*>& groups,
                        const CudaDeviceInfo& dev) {
  const ProfileResult cpu = cpu_run(g);
  CudaExecutor e(g, build_launch_plan(g, groups), dev, "executor-test");
  const auto out = e.run(cpu.inputs);
  Tolerance tol;
  tol.rtol = 1e-4;
  tol.atol = 1e-5;
  const TensorDiff d = compare_outputs(cpu.outputs, out, names(g), tol);
  EXPECT_TRUE(d.match) << d.where << " max abs " << d.max_abs_error;
}

TEST(CudaDevice, NoDeviceSaysWhatCudaGetDeviceCountSaid) {
  std::string why;
  if (!list_cuda_devices(&why).empty()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_NE(why.find("cudaGetDeviceCount says"), std::string::npos) << why;
  try {
    require_cuda_device(0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device: cudaGetDeviceCount says"),
              std::string::npos)
        << e.what();
  }
}

TEST(GpuExecutor, CnnUnfusedAndFusedMatchTheCpuOnDevice) {
  REQUIRE_CUDA_DEVICE();
  const Graph g = testing::residual_cnn();
  expect_matches_cpu(g, {}, dev);
  const FusionGroup a = testing::group_of(g, "fg-a", {"conv1", "relu1"}, "conv_bias_act");
  const FusionGroup b = testing::group_of(g, "fg-b", {"conv2", "add", "relu2"}, "conv_add_act");
  expect_matches_cpu(g, {&a, &b}, dev);
}

TEST(GpuExecutor, MatmulEpiloguesCopiesAndRowKernelsMatchTheCpuOnDevice) {
  REQUIRE_CUDA_DEVICE();
  const Graph g = testing::mlp_block();
  expect_matches_cpu(g, {}, dev);
  const FusionGroup mlp = testing::group_of(g, "fg-mlp", {"mm1", "add1", "relu"}, "matmul_add_act");
  const FusionGroup tail = testing::group_of(g, "fg-tail", {"mm2", "add2", "scale"}, "auto");
  expect_matches_cpu(g, {&mlp, &tail}, dev);
}

TEST(GpuExecutor, TimedRunsGiveATimePerLaunchOnDevice) {
  REQUIRE_CUDA_DEVICE();
  const Graph g = testing::residual_cnn();
  const ProfileResult cpu = cpu_run(g);
  CudaExecutor e(g, build_launch_plan(g, {}), dev, "executor-test");
  const GpuRunTimes t = e.timed_run(cpu.inputs);
  ASSERT_EQ(t.duration_us.size(), e.plan().launches.size());
  for (std::size_t i = 0; i < t.duration_us.size(); ++i) {
    if (e.plan().launches[i].kind == LaunchKind::View) continue;
    EXPECT_GT(t.duration_us[i], 0) << e.plan().launches[i].name;
    if (i > 0) {
      EXPECT_GE(t.start_us[i], t.start_us[i - 1]);
    }
  }
  EXPECT_GT(t.wall_ms, 0);
}

TEST(GpuExecutor, SampleModelsBeforeAfterMatchTheCpuOnDevice) {
  REQUIRE_CUDA_DEVICE();
  for (const auto& [file, dims] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"tiny_cnn.onnx", {}}, {"tiny_transformer.onnx", {"batch=2", "seq=16"}}}) {
    const auto m = load_onnx(std::string(FX_RESOURCES_DIR) + "/models/" + file,
                             command_load_options(dims, {}, false));
    FusionOptions fo;
    fo.opt_level = 2;
    FusionPlan plan(analyze_fusion(m.graph, preset_nvidia_h100(), fo));
    plan.accept_all_above(fo.threshold);
    CudaProfileOptions o;
    o.device = dev.index;
    o.runs = 3;
    o.warmup = 1;
    o.stem = "executor-test";
    const BeforeAfterResult r = cuda_before_after(m.graph, plan.accepted(), o);
    EXPECT_TRUE(r.outputs.match) << file << ": " << r.outputs.where << " " << r.codegen_note;
    EXPECT_LT(r.after.kernels.size(), r.before.kernels.size()) << file;
  }
}

TEST(GpuExecutor, BeforeAfterOnDeviceMatchesAndMeasuresGroups) {
  REQUIRE_CUDA_DEVICE();
  const Graph g = testing::residual_cnn();
  const FusionGroup a = testing::group_of(g, "fg-a", {"conv1", "relu1"}, "conv_bias_act");
  CudaProfileOptions o;
  o.device = dev.index;
  o.runs = 5;
  o.warmup = 1;
  o.stem = "executor-test";
  const BeforeAfterResult r = cuda_before_after(g, {&a}, o);
  EXPECT_TRUE(r.outputs.match) << r.outputs.where;
  EXPECT_EQ(r.after.kernels.size() + 1, r.before.kernels.size());
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].status, "fused");
  EXPECT_FALSE(std::isnan(r.groups[0].measured_saved_us));
  EXPECT_GT(r.speedup, 0);
}

}  // namespace
}  // namespace fx::cuda
