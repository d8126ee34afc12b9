// SPDX-License-Identifier: Apache-2.0
// The layout plan's time rule for a component of NHWC values with a depthwise Conv
// (conv_layout_costs.h): ShuffleNetV2's branch, x (NCHW) -> 1x1 + Relu -> 3x3
// depthwise -> 1x1 + Relu -> output (NCHW). Keeping the two tensors between the Convs
// NHWC makes each 1x1 Conv convert one tensor; the depthwise Conv gains only what its
// NHWC loop is faster. With costs where that gain pays for the conversions the branch
// is NHWC, with costs where it does not the branch stays NCHW, and both programs match
// the unfused runtime. The measured costs are positive, grow with the tensor and are
// measured once per shape.

#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/codegen_test_util.h"
#include "fixed_layout_costs.h"
#include "fused_kernels/conv_layout_plan.h"
#include "fused_kernels/fused_conv_kernel.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::random_floats;
using Ints = std::vector<int64_t>;

constexpr int64_t kC = 24, kHw = 14;

Graph branch_graph() {
  GraphBuilder b;
  auto x = b.input("x", {1, kC, kHw, kHw});
  const Shape s4 = Shape::of({1, kC, kHw, kHw});
  uint32_t seed = 70;
  auto w = [&](const std::string& name, Ints d) {
    return b.constant(
        name, TensorData::from_floats(
                  d, random_floats(static_cast<std::size_t>(dims_numel(d)), seed++, -0.5f, 0.5f)));
  };
  auto pw1 =
      b.op("Relu", {b.op("Conv", {x, w("w1", {kC, kC, 1, 1}), w("b1", {kC})}, {}, "pw1", s4)}, {},
           "pw1_relu", s4);
  auto dw = b.op("Conv", {pw1, w("wd", {kC, 1, 3, 3}), w("bd", {kC})},
                 {{"group", kC}, {"pads", Ints{1, 1, 1, 1}}}, "dw", s4);
  b.output(b.op("Relu", {b.op("Conv", {dw, w("w2", {kC, kC, 1, 1}), w("b2", {kC})}, {}, "pw2", s4)},
                {}, "pw2_relu", s4));
  return b.build();
}

FusedProgram branch_program(const Graph& g) {
  using testing::make_group;
  return testing::post_op_program(
      g, {make_group("g_pw1", {"pw1", "pw1_relu"}), make_group("g_pw2", {"pw2", "pw2_relu"})});
}

const Step& step_with_node(const Graph& g, const std::vector<Step>& steps, const std::string& n) {
  const NodeId id = g.find_node(n);
  auto it = std::find_if(steps.begin(), steps.end(), [&](const Step& s) {
    return std::find(s.nodes.begin(), s.nodes.end(), id) != s.nodes.end();
  });
  EXPECT_NE(it, steps.end()) << n;
  return *it;
}

void expect_matches_unfused(const Graph& g, const std::vector<Step>& steps, const char* what) {
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, kC, kHw, kHw}, 11)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  for (int threads : {1, 2}) {
    Executor fused(g, steps, ExecutorOptions{threads});
    testing::expect_two_runs_match(fused, in, expected, what, 1e-3);
  }
}

TEST(DepthwiseLayoutCosts, BranchStaysNhwcWhereTheDepthwiseGainPaysForTheConversions) {
  const Graph g = branch_graph();
  FusedProgram p = branch_program(g);
  std::vector<Step> steps = p.steps;
  // Each conversion: 24 x 14 x 14 floats, 18.4 KiB, 18.4 us; two of them against a
  // depthwise Conv 90 us faster on NHWC.
  const testing::FixedLayoutCosts nhwc_wins(1.0, 100, 10);
  EXPECT_EQ(plan_conv_layouts(g, steps, &nhwc_wins), 2);
  ConvLayouts lay;
  ASSERT_NE(fused_conv_prep(step_with_node(g, steps, "dw").kernel.get(), &lay), nullptr);
  EXPECT_TRUE(lay.x);
  EXPECT_TRUE(lay.out);
  expect_matches_unfused(g, steps, "nhwc wins");
}

TEST(DepthwiseLayoutCosts, BranchStaysNchwWhereTheConversionsCostMore) {
  const Graph g = branch_graph();
  FusedProgram p = branch_program(g);
  std::vector<Step> steps = p.steps;
  // The same conversions against a depthwise Conv only 10 us faster on NHWC; then one
  // where the NHWC loop is slower, whatever the conversions cost.
  for (const auto& costs :
       {testing::FixedLayoutCosts(1.0, 30, 20), testing::FixedLayoutCosts(0.0, 20, 30)}) {
    EXPECT_EQ(plan_conv_layouts(g, steps, &costs), 0);
    ConvLayouts lay;
    // A fused Conv kernel on NCHW tensors, or the runtime's Conv kernel left in place.
    if (fused_conv_prep(step_with_node(g, steps, "dw").kernel.get(), &lay)) {
      EXPECT_FALSE(lay.x || lay.out || lay.sum);
    }
    expect_matches_unfused(g, steps, "nchw wins");
  }
}

TEST(DepthwiseLayoutCosts, MeasuredCostsArePositiveGrowWithTheTensorAndAreMeasuredOnce) {
  const LayoutCosts& m = measured_layout_costs();
  const double small = m.conversion_us({1, 16, 14, 14}), large = m.conversion_us({1, 64, 56, 56});
  EXPECT_GT(small, 0);
  EXPECT_GT(large, small);  // 64 times the bytes
  EXPECT_EQ(m.conversion_us({1, 16, 14, 14}), small);
  const Graph g = branch_graph();
  FusedProgram p = branch_program(g);
  std::vector<Step> steps = p.steps;
  const testing::FixedLayoutCosts nhwc_wins(1.0, 100, 10);
  plan_conv_layouts(g, steps, &nhwc_wins);
  const auto prep = fused_conv_prep(step_with_node(g, steps, "dw").kernel.get());
  ASSERT_NE(prep, nullptr);
  const Ints x{1, kC, kHw, kHw};
  ASSERT_TRUE(runs_depthwise_path(*prep, x));
  for (bool nhwc : {false, true}) {
    const double us = m.depthwise_us(*prep, x, nhwc, nhwc);
    EXPECT_GT(us, 0);
    EXPECT_EQ(m.depthwise_us(*prep, x, nhwc, nhwc), us);
  }
}

}  // namespace
}  // namespace fx
