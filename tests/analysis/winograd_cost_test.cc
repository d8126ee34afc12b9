// The cost model knows which convolutions the runtime runs with oneDNN's Winograd
// convolution (cost_model.h: Cost::winograd, by the runtime's own rule in
// runtime/winograd_conv.h), and the saving model then credits fusion with no relayout
// and no change of the anchor's implementation for them: both programs reorder their
// activations into the blocked layout and compute alike. An ineligible conv (stride 2)
// keeps its relayout saving, and FX_WINOGRAD=0 (the direct path) restores it.

#include <gtest/gtest.h>

#include <cstdlib>

#include "analysis/cost_model.h"
#include "analysis/saving_model.h"
#include "runtime/winograd_conv.h"
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

DeviceProfile rates() {
  DeviceProfile p = testing::test_profile();
  p.memory_bandwidth_bytes_per_s = 20e9;
  p.peak_flops = 100e9;
  return p;
}

// The saving model's sample of a group of `members` whose first is the anchor.
GroupTermsSample sample(const CostModel& cm, std::vector<NodeId> members) {
  GroupTermsSample s;
  for (NodeId m : members) s.unfused.push_back(terms_of(cm.node(m)));
  s.fused = terms_of(cm.group(members));
  return s;
}

class WinogradCost : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("FX_WINOGRAD"); }
  void TearDown() override { unsetenv("FX_WINOGRAD"); }
};

TEST_F(WinogradCost, TheRuntimesRuleDecidesWhichConvs) {
  Net net = layer1_net();
  CostModel cm(net.g, rates(), 1);
  const Cost& conv = cm.node(net.conv);
  EXPECT_TRUE(conv.winograd);
  EXPECT_TRUE(terms_of(conv).winograd);
  EXPECT_GT(conv.relayout_bytes, 0);         // what the unfused kernel still converts
  EXPECT_FALSE(cm.node(net.down).winograd);  // stride 2: the direct (NHWC) path
  EXPECT_FALSE(cm.node(net.relu).winograd);
  // The fused group's anchor takes Winograd too (its post-ops are eltwise).
  EXPECT_TRUE(cm.group(std::vector<NodeId>{net.conv, net.bn, net.relu}).winograd);
  // The same answer as the runtime's own, asked directly.
  WinogradConvSpec s;
  s.ic = s.oc = 64;
  s.ih = s.iw = s.oh = s.ow = 56;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  EXPECT_EQ(conv.winograd, winograd_runs(s, 1));
}

TEST_F(WinogradCost, AWinogradAnchorSavesNoRelayoutAndKeepsItsImplementation) {
  Net net = layer1_net();
  CostModel cm(net.g, rates(), 1);
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

TEST_F(WinogradCost, SwitchedOffTheDirectPathIsDescribed) {
  Net net = layer1_net();
  setenv("FX_WINOGRAD", "0", 1);
  CostModel cm(net.g, rates(), 1);
  EXPECT_FALSE(cm.node(net.conv).winograd);
  const SavingFeatures f = saving_features(rates(), sample(cm, {net.conv, net.bn, net.relu}));
  EXPECT_DOUBLE_EQ(f.us[3], cm.node(net.conv).relayout_bytes /
                                rates().bandwidth(KernelClass::Elementwise) * 1e6);
  EXPECT_GT(f.us[3], 0);
  EXPECT_GT(f.us[4], 0);
}

}  // namespace
}  // namespace fx
