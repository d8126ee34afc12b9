// SPDX-License-Identifier: Apache-2.0
// Launch and memory plans of the committed sample models, as `fxc profile --device cuda
// --opt-level 2` makes them: every node gets a GPU kernel, the fused plan launches fewer
// kernels, and its memory plan keeps the arena below the sum of the intermediates.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "cuda_plan/cuda_source.h"
#include "cuda_plan/device_memory_plan.h"
#include "cuda_plan/launch_plan.h"
#include "device/device_presets.h"
#include "onnx/model_loader.h"

namespace fx::cuda {
namespace {

struct Plans {
  LaunchPlan unfused, fused;
  FusionPlan plan;
};

Plans plans_of(const Graph& g) {
  FusionOptions fo;
  fo.opt_level = 2;
  Plans p;
  p.plan = FusionPlan(analyze_fusion(g, preset_nvidia_h100(), fo));
  p.plan.accept_all_above(fo.threshold);
  p.unfused = build_launch_plan(g, {});
  p.fused = build_launch_plan(g, p.plan.accepted());
  return p;
}

void expect_sound(const Graph& g, const Plans& p) {
  EXPECT_FALSE(p.plan.accepted().empty());
  EXPECT_LT(p.fused.kernel_count(), p.unfused.kernel_count());
  ASSERT_EQ(p.fused.groups.size(), p.plan.accepted().size());
  for (const auto& gp : p.fused.groups) {
    EXPECT_TRUE(gp.status == "fused" || gp.status == "fallback") << gp.id;
    if (gp.status == "fallback") {
      EXPECT_FALSE(gp.reason.empty()) << gp.id;
    } else {
      EXPECT_GE(gp.launches, 1) << gp.id;
    }
  }
  // Every node that computes something is in exactly one launch of each plan.
  for (NodeId n = 0; n < static_cast<NodeId>(g.node_count()); ++n) {
    int in_unfused = 0, in_fused = 0;
    for (const auto& l : p.unfused.launches)
      in_unfused += static_cast<int>(std::count(l.nodes.begin(), l.nodes.end(), n));
    for (const auto& l : p.fused.launches)
      in_fused += static_cast<int>(std::count(l.nodes.begin(), l.nodes.end(), n));
    EXPECT_EQ(in_unfused, in_fused) << g.node(n).name;
    EXPECT_LE(in_fused, 1) << g.node(n).name;
  }
  for (const LaunchPlan* lp : {&p.unfused, &p.fused}) {
    const DeviceMemoryPlan m = DeviceMemoryPlan::build(g, *lp);
    EXPECT_GT(m.arena_bytes, 0);
    EXPECT_LE(m.arena_bytes, m.unshared_bytes + m.slot_count * DeviceMemoryPlan::kAlignment);
    EXPECT_FALSE(launch_plan_cuda_source(*lp).empty());
  }
}

TEST(ModelPlans, TinyCnn) {
  // BN kept (the canonical form folds it by default) so the plan has a BatchNorm launch.
  const auto m = load_onnx(std::string(FX_RESOURCES_DIR) + "/models/tiny_cnn.onnx",
                           command_load_options({}, {"conv-bn-folding"}, false));
  const Plans p = plans_of(m.graph);
  expect_sound(m.graph, p);
  EXPECT_GT(p.unfused.count(LaunchKind::Conv), 0);
  EXPECT_EQ(p.unfused.count(LaunchKind::Matmul), 1);     // the Gemm head
  EXPECT_GT(p.unfused.count(LaunchKind::BatchNorm), 0);  // kept, not folded
}

TEST(ModelPlans, TinyTransformer) {
  const auto m = load_onnx(std::string(FX_RESOURCES_DIR) + "/models/tiny_transformer.onnx",
                           command_load_options({"batch=2", "seq=16"}, {}, false));
  const Plans p = plans_of(m.graph);
  expect_sound(m.graph, p);
  EXPECT_GT(p.unfused.count(LaunchKind::Matmul), 0);
  EXPECT_GT(p.unfused.count(LaunchKind::Gather), 0);  // the embeddings
}

// The GPU step's models (bench/gpu/export_gpu_models.py exports them at batch 8; the
// CPU benchmark's bench/cache/NAME.onnx at batch 1 have the same graphs): every node has
// a GPU kernel. Skipped where they are not exported.
TEST(ModelPlans, BenchModelsWhenExported) {
  const std::string cache = std::string(FX_TEST_SOURCE_DIR) + "/../bench/cache/";
  int found = 0;
  for (const std::string name : {"resnet50", "vit_b_16", "gpt2_small"}) {
    const std::string path = cache + name + ".onnx";
    if (!std::filesystem::exists(path)) continue;
    ++found;
    SCOPED_TRACE(name);
    const std::vector<std::string> dims = name == "gpt2_small"
                                              ? std::vector<std::string>{"batch=1", "seq=128"}
                                              : std::vector<std::string>{};
    const auto m = load_onnx(path, command_load_options(dims, {}, false));
    expect_sound(m.graph, plans_of(m.graph));
  }
  if (found == 0) GTEST_SKIP() << "no model exported in " << cache;
}

}  // namespace
}  // namespace fx::cuda
