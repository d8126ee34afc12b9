// SPDX-License-Identifier: Apache-2.0
// The cost model knows which convolutions the runtime runs with oneDNN's Winograd
// convolution (cost_model.h: Cost::winograd, from the device profile's record of the
// runtime's answers, device/winograd_support.h), and the saving model then credits
// fusion with no relayout and no change of the anchor's implementation for them: both
// programs reorder their activations into the blocked layout and compute alike. An
// ineligible conv (stride 2) keeps its relayout saving, and a profile where the shape
// does not run so (FX_WINOGRAD=0: the direct path) restores it. That the records agree
// with the runtime is tested in tests/calibration/winograd_support_test.cc.

#include <gtest/gtest.h>

#include "analysis/cost_model.h"
#include "analysis/saving_model.h"
#include "test_graphs.h"

namespace fx {
namespace {

// Conv 3x3 (+ BN + Relu) on [1,64,56,56]: ResNet's layer1 shape, whose Winograd weights
// (64x64, at most 4x the direct 147 KiB) fit a core's L2; a second conv of stride 2.
struct Net {
  Graph g;
  NodeId conv = kNoNode, bn = kNoNode, relu = kNoNode, down = kNoNode;
};
Net layer1_net() {
  GraphBuilder b;
  auto x = b.input("x", {1, 64, 56, 56});
  auto c = testing::conv(b, x, 64, 64, 56, "conv");
  auto n = testing::batch_norm(b, c, 64, "bn");
  auto r = b.op("Relu", {n}, {}, "relu");
  auto w = b.constant("down_w", testing::zeros({64, 64, 3, 3}));
  auto d =
      b.op("Conv", {r, w},
           {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}},
           "down", Shape::of({1, 64, 28, 28}));
  b.output(d);
  Net net{b.build()};
  net.conv = net.g.find_node("conv");
  net.bn = net.g.find_node("bn");
  net.relu = net.g.find_node("relu");
  net.down = net.g.find_node("down");
  return net;
}

// The layer1 conv's shape, as the runtime reads it.
WinogradShape layer1_shape() {
  return {64, 64, 56, 56, 56, 56, 1, 1, 1, 1};
}

// `winograd`: the runtime's recorded answer for the layer1 conv (on 1 thread this host
// runs it with Winograd: tests/calibration); the stride-2 conv is never asked about.
DeviceProfile rates(bool winograd = true) {
  DeviceProfile p = testing::test_profile();
  p.memory_bandwidth_bytes_per_s = 20e9;
  p.peak_flops = 100e9;
  p.winograd.threads = 1;
  p.winograd.shapes = {{layer1_shape(), winograd}};
  return p;
}

// The saving model's sample of a group of `members` whose first is the anchor.
GroupTermsSample sample(const CostModel& cm, std::vector<NodeId> members) {
  GroupTermsSample s;
  for (NodeId m : members) s.unfused.push_back(terms_of(cm.node(m)));
  s.fused = terms_of(cm.group(members));
  return s;
}

TEST(WinogradCost, TheRuntimesRuleDecidesWhichConvs) {
  Net net = layer1_net();
  CostModel cm(net.g, rates());
  const Cost& conv = cm.node(net.conv);
  EXPECT_TRUE(conv.winograd);
  EXPECT_TRUE(terms_of(conv).winograd);
  EXPECT_GT(conv.relayout_bytes, 0);         // what the unfused kernel still converts
  EXPECT_FALSE(cm.node(net.down).winograd);  // stride 2: the direct (NHWC) path
  EXPECT_FALSE(cm.node(net.relu).winograd);
  // The fused group's anchor takes Winograd too (its post-ops are eltwise).
  EXPECT_TRUE(cm.group(std::vector<NodeId>{net.conv, net.bn, net.relu}).winograd);
  // The shape the profile is asked about is the runtime's reading of the conv.
  EXPECT_EQ(CostModel::node_winograd_shape(net.g, net.g.node(net.conv)), layer1_shape());
  EXPECT_FALSE(CostModel::node_winograd_shape(net.g, net.g.node(net.down)).has_value());
  // A device that records no Winograd (a GPU preset) has none.
  DeviceProfile gpu = rates();
  gpu.winograd = {};
  EXPECT_FALSE(CostModel(net.g, gpu).node(net.conv).winograd);
}

TEST(WinogradCost, AWinogradAnchorSavesNoRelayoutAndKeepsItsImplementation) {
  Net net = layer1_net();
  CostModel cm(net.g, rates());
  const DeviceProfile p = rates();
  const SavingFeatures wino = saving_features(p, sample(cm, {net.conv, net.bn, net.relu}));
  EXPECT_EQ(wino.fused_class, KernelClass::Conv);
  EXPECT_EQ(wino.us[3], 0);  // relayout
  EXPECT_EQ(wino.us[4], 0);  // anchor compute
  EXPECT_EQ(wino.us[6], 0);  // anchor memory
  EXPECT_EQ(wino.us[7], 0);  // anchor weights
  EXPECT_GT(wino.us[0], 0);  // the members BN and Relu are still saved
  EXPECT_LT(wino.us[5], 0);  // and the epilogue still costs
  // The stride-2 conv keeps the relayout its unfused NHWC kernel does and the fused
  // chain does not.
  const SavingFeatures direct = saving_features(p, sample(cm, {net.down}));
  EXPECT_GT(direct.us[3], 0);
  EXPECT_GT(direct.us[4], 0);
}

TEST(WinogradCost, SwitchedOffTheDirectPathIsDescribed) {
  Net net = layer1_net();
  CostModel cm(net.g, rates(false));
  EXPECT_FALSE(cm.node(net.conv).winograd);
  const SavingFeatures f = saving_features(rates(), sample(cm, {net.conv, net.bn, net.relu}));
  EXPECT_DOUBLE_EQ(f.us[3], cm.node(net.conv).relayout_bytes /
                                rates().bandwidth(KernelClass::Elementwise) * 1e6);
  EXPECT_GT(f.us[3], 0);
  EXPECT_GT(f.us[4], 0);
}

}  // namespace
}  // namespace fx
