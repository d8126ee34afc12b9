// SPDX-License-Identifier: Apache-2.0
// The layout plan through a SqueezeNet fire module: a stem Conv, a ceil_mode MaxPool
// (nhwc_max_pool.h), a squeeze Conv and its Relu left unfused (a lone Conv and a lone
// elementwise step), two expand Convs joined by a channel Concat (nhwc_concat.h) and a
// Conv after it keep every tensor between them NHWC, and the fused program matches the
// unfused runtime. A Concat that something else also reads leaves its tensors NCHW. A
// squeeze-excitation Mul by a per-channel scale, a same-shape residual Add and a
// GlobalAveragePool (nhwc_channel_ops.h) keep theirs NHWC too. An NHWC island that only
// 1x1 Convs touch goes back to NCHW.

#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/codegen_test_util.h"
#include "fused_kernels/conv_layout_plan.h"
#include "fused_kernels/nhwc_channel_ops.h"
#include "fused_kernels/nhwc_concat.h"
#include "fused_kernels/nhwc_max_pool.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::random_floats;
using Ints = std::vector<int64_t>;

// x [n,8,14,14] -> stem 3x3+Relu -> MaxPool 3x3/2 ceil (7x7) -> squeeze 1x1+Relu ->
// {expand 1x1+Relu, expand 3x3+Relu} -> Concat -> 1x1+Relu -> GlobalAveragePool; with
// `tap`, the Concat's output is also a graph output.
Graph fire_graph(int64_t n, bool tap) {
  GraphBuilder b;
  auto x = b.input("x", {n, 8, 14, 14});
  auto s4 = [&](int64_t c, int64_t h) { return Shape::of({n, c, h, h}); };
  uint32_t seed = 1;
  auto conv = [&](ValueId in, const std::string& name, int64_t cin, int64_t cout, int64_t k,
                  int64_t h) {
    auto w = b.constant(
        name + "_w",
        TensorData::from_floats({cout, cin, k, k}, random_floats(cout * cin * k * k, seed++)));
    auto bias =
        b.constant(name + "_b", TensorData::from_floats({cout}, random_floats(cout, seed++)));
    const int64_t p = k / 2;
    auto c = b.op("Conv", {in, w, bias}, {{"pads", Ints{p, p, p, p}}}, name, s4(cout, h));
    return b.op("Relu", {c}, {}, name + "_relu", s4(cout, h));
  };
  auto stem = conv(x, "stem", 8, 16, 3, 14);
  auto pool =
      b.op("MaxPool", {stem},
           {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}},
           "pool", s4(16, 7));
  auto sq = conv(pool, "squeeze", 16, 8, 1, 7);
  auto e1 = conv(sq, "expand1", 8, 16, 1, 7);
  auto e3 = conv(sq, "expand3", 8, 24, 3, 7);
  auto cat = b.op("Concat", {e1, e3}, {{"axis", int64_t{1}}}, "cat", s4(40, 7));
  if (tap) b.output(cat);
  auto last = conv(cat, "last", 40, 32, 1, 7);
  b.output(b.op("GlobalAveragePool", {last}, {}, "gap", s4(32, 1)));
  return b.build();
}

std::vector<FusionGroup> fire_groups() {
  using testing::make_group;
  std::vector<FusionGroup> groups;
  // The squeeze Conv and its Relu in no group: two steps, as below the threshold.
  for (const char* c : {"stem", "expand1", "expand3", "last"})
    groups.push_back(make_group(std::string("g_") + c, {c, std::string(c) + "_relu"}));
  return groups;
}

const Step& step_named(const std::vector<Step>& steps, const std::string& name) {
  auto it = std::find_if(steps.begin(), steps.end(), [&](const Step& s) { return s.name == name; });
  EXPECT_NE(it, steps.end()) << name;
  return *it;
}

class NhwcFire : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(Batch, NhwcFire, ::testing::Values(1, 2),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

TEST_P(NhwcFire, ConcatAndCeilPoolKeepTheBlockChannelsLastAndMatchUnfused) {
  const Graph g = fire_graph(GetParam(), /*tap=*/false);
  FusedProgram p = testing::post_op_program(g, fire_groups());
  // stem -> pool -> squeeze -> squeeze_relu -> {expand1, expand3} -> cat -> last ->
  // GlobalAveragePool: eight tensors NHWC. Planning again finds the same.
  std::vector<Step> steps = p.steps;
  EXPECT_EQ(plan_conv_layouts(g, steps), 8);
  EXPECT_TRUE(is_nhwc_concat_kernel(step_named(steps, "cat").kernel.get()));
  EXPECT_TRUE(is_nhwc_max_pool_kernel(step_named(steps, "pool").kernel.get()));
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({GetParam(), 8, 14, 14}, 3)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  testing::expect_two_runs_match(fused, in, expected, "fire", 1e-3);
}

TEST(NhwcFire, AConcatAlsoReadElsewhereStaysNchw) {
  const Graph g = fire_graph(1, /*tap=*/true);
  FusedProgram p = testing::post_op_program(g, fire_groups());
  std::vector<Step> steps = p.steps;
  // The Concat's output is a graph output: it and its inputs (expand1, expand3) stay
  // NCHW; stem -> pool -> squeeze -> squeeze_relu are still NHWC. last (a 1x1 Conv)
  // would only convert the Concat's output to write NHWC for the GlobalAveragePool: it
  // stays NCHW.
  EXPECT_EQ(plan_conv_layouts(g, steps), 4);
  EXPECT_FALSE(is_nhwc_concat_kernel(step_named(steps, "cat").kernel.get()));
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 8, 14, 14}, 4)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  testing::expect_two_runs_match(fused, in, expected, "fire tap", 1e-3);
}

// x -> c1+Relu -> Mul by s [n,C,1,1] (a squeeze-excitation scale) -> c2 + Relu ->
// Add(c1's output, the same shape) -> c3 + Relu -> GlobalAveragePool.
TEST(NhwcFire, ChannelScaleResidualAddAndGlobalPoolKeepTheChainNhwc) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 9, 9});
  auto sc = b.input("s", {1, 16, 1, 1});
  auto s4 = Shape::of({1, 16, 9, 9});
  uint32_t seed = 40;
  auto conv = [&](ValueId in, const std::string& name, int64_t cin) {
    auto w = b.constant(
        name + "_w", TensorData::from_floats({16, cin, 3, 3}, random_floats(16 * cin * 9, seed++)));
    auto c = b.op("Conv", {in, w}, {{"pads", Ints{1, 1, 1, 1}}}, name, s4);
    return b.op("Relu", {c}, {}, name + "_relu", s4);
  };
  auto a = conv(x, "c1", 8);
  auto m = b.op("Mul", {a, sc}, {}, "scale", s4);
  auto y = conv(m, "c2", 16);
  auto sum = b.op("Add", {y, a}, {}, "sum", s4);
  auto last = conv(sum, "c3", 16);
  b.output(b.op("GlobalAveragePool", {last}, {}, "gap", Shape::of({1, 16, 1, 1})));
  const Graph g = b.build();
  using testing::make_group;
  FusedProgram p = testing::post_op_program(
      g, {make_group("g1", {"c1", "c1_relu"}), make_group("g2", {"c2", "c2_relu"}),
          make_group("g3", {"c3", "c3_relu"})});
  std::vector<Step> steps = p.steps;
  // c1's output, the scaled tensor, c2's output, the sum and c3's output: all NHWC.
  EXPECT_EQ(plan_conv_layouts(g, steps), 5);
  EXPECT_TRUE(is_nhwc_channel_scale_kernel(step_named(steps, "scale").kernel.get()));
  EXPECT_TRUE(is_nhwc_global_pool_kernel(step_named(steps, "gap").kernel.get()));
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 8, 9, 9}, 6)},
                                   {"s", testing::random_tensor({1, 16, 1, 1}, 7)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  testing::expect_two_runs_match(fused, in, expected, "scale", 1e-3);
}

// As above without the Mul, c3's output also a graph output: c1 -> c2 -> Add(c2, c1)
// -> c3 NHWC (3 values); c3's output NCHW, and its GlobalAveragePool keeps its kernel.
TEST(NhwcFire, SameShapeAddBetweenConvsKeepsTheirTensorsNhwc) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 9, 9});
  auto s4 = Shape::of({1, 16, 9, 9});
  uint32_t seed = 50;
  auto conv = [&](ValueId in, const std::string& name, int64_t cin) {
    auto w = b.constant(
        name + "_w", TensorData::from_floats({16, cin, 3, 3}, random_floats(16 * cin * 9, seed++)));
    auto c = b.op("Conv", {in, w}, {{"pads", Ints{1, 1, 1, 1}}}, name, s4);
    return b.op("Relu", {c}, {}, name + "_relu", s4);
  };
  auto a = conv(x, "c1", 8);
  auto y = conv(a, "c2", 16);
  auto sum = b.op("Add", {y, a}, {}, "sum", s4);
  auto last = conv(sum, "c3", 16);
  b.output(last);
  b.output(b.op("GlobalAveragePool", {last}, {}, "gap", Shape::of({1, 16, 1, 1})));
  const Graph g = b.build();
  using testing::make_group;
  FusedProgram p = testing::post_op_program(
      g, {make_group("g1", {"c1", "c1_relu"}), make_group("g2", {"c2", "c2_relu"}),
          make_group("g3", {"c3", "c3_relu"})});
  std::vector<Step> steps = p.steps;
  EXPECT_EQ(plan_conv_layouts(g, steps), 3);
  EXPECT_FALSE(is_nhwc_global_pool_kernel(step_named(steps, "gap").kernel.get()));
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 8, 9, 9}, 8)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  testing::expect_two_runs_match(fused, in, expected, "add", 1e-3);
}

// Two RegNet-like blocks whose middle step is no layout candidate (a Softmax over
// channels stands in for a grouped Conv that oneDNN runs blocked): b_k -> 1x1 a_k +
// Relu -> Softmax -> 1x1 c_k + b_k + Relu -> b_k+1. b_1 alone could stay NHWC, but only
// 1x1 Convs touch it, each then converting its other tensors: the island goes back to
// NCHW (0 kept) instead of paying three conversions to save none.
TEST(NhwcFire, AnIslandBetween1x1ConvsStaysNchw) {
  GraphBuilder b;
  const Shape s4 = Shape::of({1, 16, 10, 10});
  ValueId v = b.input("x", {1, 16, 10, 10});
  uint32_t seed = 60;
  std::vector<FusionGroup> groups;
  for (int k = 0; k < 2; ++k) {
    const std::string n = std::to_string(k);
    auto w = [&](const std::string& name) {
      return b.constant(name, TensorData::from_floats({16, 16, 1, 1}, random_floats(256, seed++)));
    };
    auto a =
        b.op("Relu", {b.op("Conv", {v, w("wa" + n)}, {}, "a" + n, s4)}, {}, "a" + n + "_relu", s4);
    auto m = b.op("Softmax", {a}, {{"axis", int64_t{1}}}, "soft" + n, s4);
    auto sum =
        b.op("Add", {b.op("Conv", {m, w("wc" + n)}, {}, "c" + n, s4), v}, {}, "c" + n + "_add", s4);
    v = b.op("Relu", {sum}, {}, "c" + n + "_relu", s4);
    groups.push_back(testing::make_group("ga" + n, {"a" + n, "a" + n + "_relu"}));
    groups.push_back(testing::make_group("gc" + n, {"c" + n, "c" + n + "_add", "c" + n + "_relu"}));
  }
  b.output(v);
  const Graph g = b.build();
  FusedProgram p = testing::post_op_program(g, groups);
  std::vector<Step> steps = p.steps;
  EXPECT_EQ(plan_conv_layouts(g, steps), 0);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 16, 10, 10}, 9)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  testing::expect_two_runs_match(fused, in, expected, "island", 1e-3);
}

TEST(NhwcFire, OnlyChannelConcatsOfRank4FloatsAreCandidates) {
  GraphBuilder b;
  auto a = b.input("a", {1, 4, 5, 5});
  auto c = b.input("c", {1, 4, 5, 5});
  auto v = b.input("v", {1, 4, 5});
  b.output(b.op("Concat", {a, c}, {{"axis", int64_t{1}}}, "ch", Shape::of({1, 8, 5, 5})));
  b.output(b.op("Concat", {a, c}, {{"axis", int64_t{-3}}}, "ch_neg", Shape::of({1, 8, 5, 5})));
  b.output(b.op("Concat", {a, c}, {{"axis", int64_t{3}}}, "cols", Shape::of({1, 4, 5, 10})));
  b.output(b.op("Concat", {v, v}, {{"axis", int64_t{1}}}, "rank3", Shape::of({1, 8, 5})));
  const Graph g = b.build();
  auto step_of = [&](const std::string& name) {
    Step s;
    s.nodes = {g.find_node(name)};
    s.inputs = g.node(s.nodes[0]).inputs;
    s.outputs = g.node(s.nodes[0]).outputs;
    return s;
  };
  EXPECT_TRUE(is_nhwc_concat_candidate(g, step_of("ch")));
  EXPECT_TRUE(is_nhwc_concat_candidate(g, step_of("ch_neg")));
  EXPECT_FALSE(is_nhwc_concat_candidate(g, step_of("cols")));
  EXPECT_FALSE(is_nhwc_concat_candidate(g, step_of("rank3")));
}

}  // namespace
}  // namespace fx
