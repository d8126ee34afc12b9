// SPDX-License-Identifier: Apache-2.0
// Real exports from bench/export_models.py (bench/cache/, not in git): skipped when absent.
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/fusion_finder.h"
#include "device/device_presets.h"
#include "onnx/model_loader.h"
#include "test_graphs.h"

namespace fx {
namespace {

std::string bench_model(const char* name) {
  return std::string(FX_RESOURCES_DIR) + "/../bench/cache/" + name;
}

TEST(BenchModels, ResNet18EveryConvBnIsFoundAtLevel1) {
  std::string path = bench_model("resnet18.onnx");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not exported";
  LoadedModel m = load_onnx(path);
  const Graph& g = m.graph;
  FusionOptions o;
  o.opt_level = 1;
  AnalysisResult r = analyze_fusion(g, preset_nvidia_h100(), o);
  int conv_bn = 0;
  for (const auto& n : g.nodes()) {
    if (n.op_type != "BatchNormalization") continue;
    NodeId p = g.value(n.inputs[0]).producer;
    if (p == kNoNode || g.node(p).op_type != "Conv") continue;
    ++conv_bn;
    const FusionGroup* gr = testing::group_of(r, n.name);
    ASSERT_NE(gr, nullptr) << n.name << " not fused";
    EXPECT_EQ(gr, testing::group_of(r, g.node(p).name));
    EXPECT_EQ(gr->pattern, "conv_bn_act");
  }
  EXPECT_EQ(conv_bn, 20);
  EXPECT_LT(r.kernels_after, r.kernels_before);
}

}  // namespace
}  // namespace fx
