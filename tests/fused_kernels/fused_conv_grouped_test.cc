// SPDX-License-Identifier: Apache-2.0
// Fused grouped and 3-D convolutions (the plain path's parts, runtime/conv_parts.h:
// blocked or channels-last inside, or split over groups / output channels) with their
// epilogues (BN folded, Relu, residual) against the unfused runtime, with oneDNN's
// preferred layouts allowed and with FX_NO_BLOCKED=1.

#include <gtest/gtest.h>

#include <cstdlib>

#include "codegen/codegen_test_util.h"
#include "fused_kernels/conv_layout_plan.h"
#include "fused_kernels/conv_path.h"
#include "fused_kernels/conv_prep.h"
#include "fused_kernels/fused_conv_kernel.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::random_floats;
using Ints = std::vector<int64_t>;

// A RegNet block's grouped 3x3 (+BN+Relu) and a residual Add, then an R3D-like 3x3x3
// Conv + Relu on a clip.
Graph grouped_and_3d_graph() {
  GraphBuilder b;
  auto w = [&](const std::string& name, Ints d, uint32_t s, float lo = -0.5f, float hi = 0.5f) {
    return b.constant(name,
                      TensorData::from_floats(
                          d, random_floats(static_cast<std::size_t>(dims_numel(d)), s, lo, hi)));
  };
  auto x = b.input("x", {1, 64, 14, 14});
  auto g =
      b.op("Conv", {x, w("gw", {64, 16, 3, 3}, 1)},
           {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{4}}}, "g", Shape::of({1, 64, 14, 14}));
  auto bn = b.op("BatchNormalization",
                 {g, w("s", {64}, 2, 0.5f, 1.5f), w("be", {64}, 3), w("mu", {64}, 4),
                  w("var", {64}, 5, 0.5f, 1.5f)},
                 {}, "g_bn", Shape::of({1, 64, 14, 14}));
  auto r = b.op("Relu", {bn}, {}, "g_relu", Shape::of({1, 64, 14, 14}));
  b.output(b.op("Add", {r, x}, {}, "g_res", Shape::of({1, 64, 14, 14})));
  auto clip = b.input("clip", {1, 16, 4, 10, 10});
  auto c = b.op("Conv", {clip, w("cw", {32, 16, 3, 3, 3}, 6), w("cb", {32}, 7)},
                {{"pads", Ints{1, 1, 1, 1, 1, 1}}}, "c3d", Shape::of({1, 32, 4, 10, 10}));
  b.output(b.op("Relu", {c}, {}, "c3d_relu", Shape::of({1, 32, 4, 10, 10})));
  return b.build();
}

class FusedConvGrouped : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam())
      setenv("FX_NO_BLOCKED", "1", 1);
    else
      unsetenv("FX_NO_BLOCKED");
  }
  void TearDown() override { unsetenv("FX_NO_BLOCKED"); }
};

INSTANTIATE_TEST_SUITE_P(Layouts, FusedConvGrouped, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "plain" : "any"; });

TEST_P(FusedConvGrouped, GroupedAnd3dMatchUnfused) {
  Graph g = grouped_and_3d_graph();
  using testing::make_group;
  std::vector<FusionGroup> groups{make_group("fg-g", {"g", "g_bn", "g_relu", "g_res"}),
                                  make_group("fg-3d", {"c3d", "c3d_relu"})};
  FusedProgram p = testing::post_op_program(g, groups);
  EXPECT_EQ(p.steps.size(), 2u);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 64, 14, 14}, 1)},
                                   {"clip", testing::random_tensor({1, 16, 4, 10, 10}, 2)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  auto actual = Executor(g, p.steps, ExecutorOptions{2}).run(in);
  ASSERT_EQ(expected.size(), actual.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    auto d = testing::compare({expected[i]}, {actual[i]});
    EXPECT_LT(d.max_abs, 1e-4) << "output " << i;
  }
}

// A RegNet block: 1x1 a + Relu -> grouped 3x3 b (8 channels per group) + Relu -> 1x1 c
// + x + Relu, twice. Where oneDNN runs the grouped convolution natively on NHWC, the
// layout plan keeps every tensor between the fused Convs NHWC (a's and b's outputs, and
// the first block's output, which the second block's a and c read): no reorder around
// the grouped Conv. Outputs match the unfused runtime.
TEST(GroupedNhwc, RegNetChainStaysNhwcThroughGroupedConvs) {
  GraphBuilder b;
  const Shape s4 = Shape::of({1, 32, 12, 12});
  ValueId v = b.input("x", {1, 32, 12, 12});
  uint32_t seed = 20;
  auto w = [&](const std::string& name, Ints d) {
    return b.constant(
        name, TensorData::from_floats(
                  d, random_floats(static_cast<std::size_t>(dims_numel(d)), seed++, -0.3f, 0.3f)));
  };
  std::vector<FusionGroup> groups;
  for (int k = 0; k < 2; ++k) {
    const std::string n = std::to_string(k);
    auto a =
        b.op("Relu",
             {b.op("Conv", {v, w("wa" + n, {32, 32, 1, 1}), w("ba" + n, {32})}, {}, "a" + n, s4)},
             {}, "a" + n + "_relu", s4);
    auto g = b.op("Relu",
                  {b.op("Conv", {a, w("wb" + n, {32, 8, 3, 3}), w("bb" + n, {32})},
                        {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{4}}}, "b" + n, s4)},
                  {}, "b" + n + "_relu", s4);
    auto sum = b.op("Add", {b.op("Conv", {g, w("wc" + n, {32, 32, 1, 1})}, {}, "c" + n, s4), v}, {},
                    "c" + n + "_add", s4);
    v = b.op("Relu", {sum}, {}, "c" + n + "_relu", s4);
    groups.push_back(testing::make_group("ga" + n, {"a" + n, "a" + n + "_relu"}));
    groups.push_back(testing::make_group("gb" + n, {"b" + n, "b" + n + "_relu"}));
    groups.push_back(testing::make_group("gc" + n, {"c" + n, "c" + n + "_add", "c" + n + "_relu"}));
  }
  b.output(v);
  const Graph g = b.build();
  FusedProgram p = testing::post_op_program(g, groups);
  ASSERT_EQ(p.steps.size(), 6u);
  // Whether this CPU's oneDNN has a native NHWC kernel for the grouped 3x3 (it decides
  // whether the plan may keep its tensors NHWC).
  auto cp = plan_conv_post_ops(g, {g.find_node("b0")}, nullptr);
  ASSERT_TRUE(cp);
  const bool native = grouped_nhwc_native(*prepare_conv(g, *cp), {1, 32, 12, 12});
  std::vector<Step> steps = p.steps;
  // a0, b0, c0 (read by a1 and c1's residual), a1, b1; c1 is the graph output.
  EXPECT_EQ(plan_conv_layouts(g, steps), native ? 5 : 0);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 32, 12, 12}, 3)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  testing::expect_two_runs_match(fused, in, expected, "regnet", 1e-3);
}

}  // namespace
}  // namespace fx
