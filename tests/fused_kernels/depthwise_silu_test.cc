// SPDX-License-Identifier: Apache-2.0
// EfficientNet's MBConv around a fused depthwise Conv + SiLU (x * sigmoid(x)): a 1x1
// expansion + SiLU (channels-last output, read only by the depthwise Conv), the
// depthwise Conv + SiLU, then a squeeze-excite (GlobalAveragePool, Sigmoid, Mul) that
// reads its output NCHW. The depthwise kernel then reads NHWC and writes NCHW, rows
// transposed while in cache (fused_kernels/depthwise_nhwc.h; several rows at a time on small
// maps), and the fused program matches the unfused runtime.

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

struct SiluCase {
  int64_t n, c, hw, k, stride;
};

Graph mbconv_graph(const SiluCase& t) {
  GraphBuilder b;
  auto x = b.input("x", {t.n, 16, t.hw, t.hw});
  auto w = [&](const std::string& name, Ints d, uint32_t s) {
    return b.constant(name, TensorData::from_floats(
                                d, random_floats(static_cast<std::size_t>(dims_numel(d)), s)));
  };
  auto silu = [&](ValueId v, const std::string& name) {
    return b.op("Mul", {v, b.op("Sigmoid", {v}, {}, name + "_sig")}, {}, name + "_silu");
  };
  auto e = b.op("Conv", {x, w("we", {t.c, 16, 1, 1}, 1), w("be", {t.c}, 2)}, {}, "expand");
  auto ea = silu(e, "expand");
  const int64_t p = t.k / 2;
  auto d = b.op("Conv", {ea, w("wd", {t.c, 1, t.k, t.k}, 3), w("bd", {t.c}, 4)},
                {{"pads", Ints{p, p, p, p}}, {"group", t.c}, {"strides", Ints{t.stride, t.stride}}},
                "dw");
  auto da = silu(d, "dw");
  auto gate = b.op("Sigmoid", {b.op("GlobalAveragePool", {da}, {}, "se_pool")}, {}, "se_sig");
  b.output(b.op("Mul", {da, gate}, {}, "se_scale"));
  return b.build();
}

class DepthwiseSilu : public ::testing::TestWithParam<SiluCase> {};
INSTANTIATE_TEST_SUITE_P(
    Shapes, DepthwiseSilu,
    ::testing::Values(SiluCase{1, 48, 37, 3, 1},   // rows of 37: tiles + an overlapping one
                      SiluCase{2, 64, 40, 5, 2},   // 5x5 stride 2, batch of 2, rows of 20
                      SiluCase{1, 40, 24, 3, 1},   // channel tail (40 = 32 + 8)
                      SiluCase{1, 48, 9, 5, 1},    // rows of 9: 4 rows a tile (36 pixels)
                      SiluCase{2, 32, 7, 3, 1}));  // 7x7: chunks of 5 rows, then 2

TEST_P(DepthwiseSilu, WritesNchwAndMatchesUnfused) {
  const SiluCase t = GetParam();
  Graph g = mbconv_graph(t);
  using testing::make_group;
  std::vector<FusionGroup> groups{make_group("g-expand", {"expand", "expand_sig", "expand_silu"}),
                                  make_group("g-dw", {"dw", "dw_sig", "dw_silu"})};
  FusedProgram prog = testing::post_op_program(g, groups);
  // With costs where the NHWC depthwise loop wins (whether it does on this machine is
  // the measured plan's business: conv_layout_costs_test.cc), the layout plan keeps one
  // value NHWC, the expansion's output; the depthwise step reads it and writes NCHW
  // (the squeeze-excite reads its output).
  ASSERT_TRUE(std::any_of(prog.steps.begin(), prog.steps.end(),
                          [](const Step& s) { return s.name == "g-dw"; }));
  std::vector<Step> steps = prog.steps;
  const testing::FixedLayoutCosts nhwc_wins(0.0, 1, 0);
  ASSERT_EQ(plan_conv_layouts(g, steps, &nhwc_wins), 1);
  ConvLayouts lay;
  ASSERT_NE(fused_conv_prep(std::find_if(steps.begin(), steps.end(),
                                         [](const Step& s) { return s.name == "g-dw"; })
                                ->kernel.get(),
                            &lay),
            nullptr);
  EXPECT_TRUE(lay.x);
  EXPECT_FALSE(lay.out);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({t.n, 16, t.hw, t.hw}, 7)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  for (int threads : {1, 2}) {
    Executor fused(g, steps, ExecutorOptions{threads});
    testing::expect_two_runs_match(fused, in, expected, std::to_string(threads) + " threads");
  }
}

}  // namespace
}  // namespace fx
