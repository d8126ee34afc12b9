// SPDX-License-Identifier: Apache-2.0
// GPU run times into the CPU profiler's result: one kernel row per launch that runs,
// medians over runs, bytes and FLOPs from the plan, the JSON and Chrome trace writers.

#include "cuda_plan/gpu_timing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cuda_plan_test_util.h"
#include "profile/chrome_trace.h"
#include "profile/profile_json.h"
#include "util/error.h"

namespace fx::cuda {
namespace {

std::vector<GpuRunTimes> fake_runs(const LaunchPlan& p, int runs) {
  std::vector<GpuRunTimes> out;
  for (int r = 0; r < runs; ++r) {
    GpuRunTimes t;
    double at = 0;
    for (std::size_t i = 0; i < p.launches.size(); ++i) {
      const double d = p.launches[i].kind == LaunchKind::View ? 0 : 10.0 * (i + 1) + r;
      t.start_us.push_back(at);
      t.duration_us.push_back(d);
      at += d + 1;
    }
    t.wall_ms = at / 1e3;
    out.push_back(t);
  }
  return out;
}

TEST(GpuTiming, OneKernelRowPerLaunchWithMediansBytesAndFlops) {
  const Graph g = testing::residual_cnn();
  const FusionGroup a = testing::group_of(g, "fg-a", {"conv1", "relu1"}, "conv_bias_act");
  const LaunchPlan p = build_launch_plan(g, {&a});
  const DeviceMemoryPlan m = DeviceMemoryPlan::build(g, p);
  const ProfileResult r = gpu_profile_result(g, p, m, fake_runs(p, 3), "cuda:0 test", 2);
  EXPECT_EQ(static_cast<int>(r.kernels.size()), p.kernel_count());
  EXPECT_EQ(r.runs, 3);
  EXPECT_EQ(r.warmup, 2);
  EXPECT_EQ(r.timeline.run_count(), 3);
  EXPECT_EQ(r.peak_activation_bytes, m.arena_bytes);
  EXPECT_EQ(r.run_ms.size(), 3u);
  EXPECT_DOUBLE_EQ(r.median_ms, r.run_ms[1]);
  bool saw_group = false;
  for (const auto& k : r.kernels) {
    const int i = p.launch_of(g.find_node(k.nodes.at(0)));
    ASSERT_GE(i, 0);
    const Launch& l = p.launches[static_cast<std::size_t>(i)];
    EXPECT_DOUBLE_EQ(k.median_us, 10.0 * (i + 1) + 1) << k.name;  // runs add 0, 1, 2
    EXPECT_EQ(k.bytes_read, launch_bytes_read(g, l));
    if (k.name == "fg-a") {
      saw_group = true;
      EXPECT_EQ(k.group_id, 0);
      EXPECT_EQ(k.nodes, (std::vector<std::string>{"conv1", "relu1"}));
      EXPECT_EQ(k.flops, 2 * 2 * 8 * 16 * 16 * 8 * 9);
      EXPECT_EQ(k.bytes_written, 2 * 8 * 16 * 16 * 4);
    }
  }
  EXPECT_TRUE(saw_group);
  const auto j = profile_result_json(r);
  EXPECT_EQ(j.at("kernels").size(), r.kernels.size());
  const std::string trace =
      (std::filesystem::temp_directory_path() / "fx_gpu_timing_trace.json").string();
  write_chrome_trace(trace, r.representative_timeline());
  std::ifstream f(trace);
  std::string text((std::istreambuf_iterator<char>(f)), {});
  EXPECT_NE(text.find("fg-a"), std::string::npos);
  EXPECT_NE(text.find("cublaslt"), std::string::npos);
  std::filesystem::remove(trace);
}

TEST(GpuTiming, RunsThatDoNotMatchThePlanAreAnError) {
  const Graph g = testing::mlp_block();
  const LaunchPlan p = build_launch_plan(g, {});
  const DeviceMemoryPlan m = DeviceMemoryPlan::build(g, p);
  auto runs = fake_runs(p, 2);
  runs[1].duration_us.pop_back();
  EXPECT_THROW(gpu_profile_result(g, p, m, runs, "cuda:0", 0), Error);
  EXPECT_THROW(gpu_profile_result(g, p, m, {}, "cuda:0", 0), Error);
}

}  // namespace
}  // namespace fx::cuda
