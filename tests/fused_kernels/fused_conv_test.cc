// SPDX-License-Identifier: Apache-2.0
// Conv + epilogue through oneDNN post-ops (no compiler involved) against the unfused
// runtime: Conv+Relu, Conv+BN+SiLU (BN folded, x*sigmoid(x) as swish), Conv + per-channel
// Mul (folded) + residual Add (sum post-op) + Clip, Conv + run-time Mul + Relu + Sub
// (binary post-ops), depthwise Conv + scale + residual + HardSwish (direct loop); and
// a chain of fused Conv groups whose tensors the layout plan keeps channels-last; ResNet
// blocks whose output is written over the dying residual.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "codegen/codegen_test_util.h"
#include "fixed_layout_costs.h"
#include "fused_kernels/conv_layout_plan.h"
#include "fused_kernels/fused_conv_kernel.h"
#include "ir/graph_builder.h"

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

namespace fx {
namespace {

using testing::random_floats;
using Ints = std::vector<int64_t>;

ValueId conv(GraphBuilder& b, ValueId x, const std::string& name, uint32_t seed, bool bias) {
  auto w = b.constant(name + "_w", TensorData::from_floats({8, 4, 3, 3}, random_floats(288, seed)));
  std::vector<ValueId> in{x, w};
  if (bias)
    in.push_back(b.constant(name + "_b", TensorData::from_floats({8}, random_floats(8, seed + 1))));
  return b.op("Conv", in, {{"pads", Ints{1, 1, 1, 1}}}, name, Shape::of({2, 8, 6, 6}));
}

Graph conv_graph() {
  GraphBuilder b;
  auto x = b.input("x", {2, 4, 6, 6});
  b.output(b.op("Relu", {conv(b, x, "c1", 1, true)}, {}, "c1_relu"));
  auto y = conv(b, x, "c2", 3, false);
  auto f = [&](int s) { return TensorData::from_floats({8}, random_floats(8, s, 0.5f, 1.5f)); };
  auto bn = b.op("BatchNormalization",
                 {y, b.constant("g", f(20)), b.constant("be", f(21)), b.constant("mu", f(22)),
                  b.constant("var", f(23))},
                 {}, "c2_bn");
  b.output(b.op("Mul", {bn, b.op("Sigmoid", {bn}, {}, "c2_sig")}, {}, "c2_silu"));
  auto r = b.input("res", {2, 8, 6, 6});
  auto z = conv(b, x, "c3", 5, true);
  auto cs = b.constant("cs", TensorData::from_floats({8, 1, 1}, random_floats(8, 30)));
  auto m = b.op("Mul", {z, cs}, {}, "c3_scale");
  auto a = b.op("Add", {m, r}, {}, "c3_residual");
  auto lo = b.constant("lo", TensorData::from_floats({}, {0.f}));
  auto hi = b.constant("hi", TensorData::from_floats({}, {0.5f}));
  b.output(b.op("Clip", {a, lo, hi}, {}, "c3_clip"));
  // Not foldable: a per-channel operand computed at run time, and a constant after a
  // nonlinearity; both stay oneDNN binary post-ops.
  auto chs = b.input("chs", {2, 8, 1, 1});
  auto u =
      b.op("Relu", {b.op("Mul", {conv(b, x, "c4", 7, true), chs}, {}, "c4_gate")}, {}, "c4_relu");
  auto cb = b.constant("cb", TensorData::from_floats({8, 1, 1}, random_floats(8, 31)));
  b.output(b.op("Sub", {u, cb}, {}, "c4_shift"));
  // Depthwise (the runtime's direct loop) + folded scale + residual + HardSwish.
  auto dw = b.op(
      "Conv", {x, b.constant("c5_w", TensorData::from_floats({4, 1, 3, 3}, random_floats(36, 9)))},
      {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{4}}, {"strides", Ints{2, 2}}}, "c5",
      Shape::of({2, 4, 3, 3}));
  auto ds = b.constant("ds", TensorData::from_floats({}, {1.5f}));
  auto dres = b.input("dres", {2, 4, 3, 3});
  auto da = b.op("Add", {b.op("Mul", {dw, ds}, {}, "c5_scale"), dres}, {}, "c5_residual");
  b.output(b.op("HardSwish", {da}, {}, "c5_hswish"));
  return b.build();
}

TEST(FusedConv, PostOpPlansNameTheirAlgorithms) {
  Graph g = conv_graph();
  std::string why;
  auto p = plan_conv_post_ops(
      g, {g.find_node("c2"), g.find_node("c2_bn"), g.find_node("c2_sig"), g.find_node("c2_silu")},
      &why);
  ASSERT_TRUE(p) << why;
  EXPECT_NE(p->bn, kNoNode);
  ASSERT_EQ(p->post_ops.size(), 1u);
  EXPECT_EQ(p->post_ops[0].alg, "swish");
  auto q = plan_conv_post_ops(g,
                              {g.find_node("c3"), g.find_node("c3_scale"),
                               g.find_node("c3_residual"), g.find_node("c3_clip")},
                              &why);
  ASSERT_TRUE(q) << why;
  ASSERT_EQ(q->post_ops.size(), 3u);
  using K = ConvPostOp::Kind;
  EXPECT_EQ(q->post_ops[0].kind, K::Fold);  // constant per-channel scale
  EXPECT_EQ(q->post_ops[1].alg, "add");
  EXPECT_EQ(q->post_ops[1].kind, K::Sum);  // residual
  EXPECT_EQ(q->post_ops[2].kind, K::Eltwise);
  EXPECT_EQ(q->step_inputs.size(), 2u);  // x, the residual (the scale is folded)
  auto r = plan_conv_post_ops(
      g,
      {g.find_node("c4"), g.find_node("c4_gate"), g.find_node("c4_relu"), g.find_node("c4_shift")},
      &why);
  ASSERT_TRUE(r) << why;
  ASSERT_EQ(r->post_ops.size(), 3u);
  EXPECT_EQ(r->post_ops[0].kind, K::Binary);  // not a constant
  EXPECT_EQ(r->post_ops[2].kind, K::Binary);  // a constant, but after the Relu
  EXPECT_EQ(r->step_inputs.size(), 3u);
}

// FX_CONV_PLAIN=1 keeps oneDNN on plain NCHW (gemm, our epilogue pass); without it,
// convolutions go through oneDNN's blocked layouts where it has a direct kernel.
class FusedConvPaths : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam())
      setenv("FX_CONV_PLAIN", "1", 1);
    else
      unsetenv("FX_CONV_PLAIN");
  }
  void TearDown() override { unsetenv("FX_CONV_PLAIN"); }
};

INSTANTIATE_TEST_SUITE_P(Layouts, FusedConvPaths, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "plain" : "any"; });

TEST_P(FusedConvPaths, MatchesUnfusedRuntime) {
  Graph g = conv_graph();
  using testing::make_group;
  std::vector<FusionGroup> groups{
      make_group("fg-relu", {"c1", "c1_relu"}),
      make_group("fg-silu", {"c2", "c2_bn", "c2_sig", "c2_silu"}),
      make_group("fg-res", {"c3", "c3_scale", "c3_residual", "c3_clip"}),
      make_group("fg-bin", {"c4", "c4_gate", "c4_relu", "c4_shift"}),
      make_group("fg-dw", {"c5", "c5_scale", "c5_residual", "c5_hswish"})};
  FusedProgram p = testing::post_op_program(g, groups);  // no compiler
  EXPECT_EQ(p.steps.size(), 5u);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({2, 4, 6, 6}, 1)},
                                   {"res", testing::random_tensor({2, 8, 6, 6}, 2)},
                                   {"chs", testing::random_tensor({2, 8, 1, 1}, 3)},
                                   {"dres", testing::random_tensor({2, 4, 3, 3}, 4)}};
  auto expected = Executor(g).run(in);
  auto actual = Executor(g, p.steps).run(in);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    auto d = testing::compare({expected[i]}, {actual[i]});
    EXPECT_LT(d.max_abs, 1e-4) << "output " << i;
  }
}

// A MobileNet/ResNet-like chain: 3x3 Conv+BN+Relu -> 1x1 expand+Clip -> depthwise+Clip
// -> 1x1 project + residual Add -> 3x3 + Relu -> MaxPool -> lone 3x3 stride 2 Conv ->
// 3x3 + residual + Relu -> MaxPool (a graph output: the tensor before it stays NCHW),
// plus a graph output that a Conv reads.
Graph chain_graph(int64_t n) {
  GraphBuilder b;
  auto x = b.input("x", {n, 8, 20, 20});
  auto f = [&](int64_t count, int s, float lo = -0.5f, float hi = 0.5f) {
    return random_floats(static_cast<std::size_t>(count), static_cast<uint32_t>(s), lo, hi);
  };
  auto w = [&](const std::string& name, Ints d, int s) {
    return b.constant(name, TensorData::from_floats(d, f(dims_numel(d), s)));
  };
  auto s4 = [&](int64_t c, int64_t h) { return Shape::of({n, c, h, h}); };
  auto c1 =
      b.op("Conv", {x, w("w1", {16, 8, 3, 3}, 1)}, {{"pads", Ints{1, 1, 1, 1}}}, "c1", s4(16, 20));
  auto bnp = [&](int s) { return TensorData::from_floats({16}, f(16, s, 0.5f, 1.5f)); };
  auto bn = b.op("BatchNormalization",
                 {c1, b.constant("g", bnp(10)), b.constant("be", bnp(11)),
                  b.constant("mu", bnp(12)), b.constant("var", bnp(13))},
                 {}, "c1_bn", s4(16, 20));
  auto a1 = b.op("Relu", {bn}, {}, "c1_relu", s4(16, 20));
  b.output(a1);  // also a graph output: stays NCHW
  auto lo = b.constant("lo", TensorData::from_floats({}, {0.f}));
  auto hi = b.constant("hi", TensorData::from_floats({}, {6.f}));
  auto e = b.op("Conv", {a1, w("w2", {48, 16, 1, 1}, 2), w("b2", {48}, 3)}, {}, "c2", s4(48, 20));
  auto a2 = b.op("Clip", {e, lo, hi}, {}, "c2_clip", s4(48, 20));
  auto d = b.op("Conv", {a2, w("w3", {48, 1, 3, 3}, 4), w("b3", {48}, 5)},
                {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{48}}}, "c3", s4(48, 20));
  auto a3 = b.op("Clip", {d, lo, hi}, {}, "c3_clip", s4(48, 20));
  auto pj = b.op("Conv", {a3, w("w4", {16, 48, 1, 1}, 6)}, {}, "c4", s4(16, 20));
  auto r = b.op("Add", {pj, a1}, {}, "c4_residual", s4(16, 20));
  // Large enough that a single image's rows are split into two parts (two threads).
  auto c5 = b.op("Conv", {r, w("w5", {64, 16, 3, 3}, 7), w("b5", {64}, 8)},
                 {{"pads", Ints{1, 1, 1, 1}}}, "c5", s4(64, 20));
  auto a5 = b.op("Relu", {c5}, {}, "c5_relu", s4(64, 20));
  // A lone Conv (in no group): adopted by the layout plan.
  // A MaxPool between Convs (a ResNet stem's): NHWC too.
  auto mp =
      b.op("MaxPool", {a5},
           {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}},
           "mid_pool", s4(64, 10));
  // Few rows: parts split output channels instead (with a residual in c7).
  auto c6 =
      b.op("Conv", {mp, w("w6", {64, 64, 3, 3}, 9)}, {{"strides", Ints{2, 2}}}, "c6", s4(64, 4));
  auto c7 = b.op("Conv", {c6, w("w7", {64, 64, 3, 3}, 10)}, {{"pads", Ints{1, 1, 1, 1}}}, "c7",
                 s4(64, 4));
  auto a7 =
      b.op("Relu", {b.op("Add", {c7, c6}, {}, "c7_residual", s4(64, 4))}, {}, "c7_relu", s4(64, 4));
  b.output(b.op("MaxPool", {a7}, {{"kernel_shape", Ints{2, 2}}}, "pool", s4(64, 3)));
  return b.build();
}

// EfficientNetV2's first stage: 3x3 Conv + SiLU, then blocks of 3x3 Conv + SiLU + the
// block's input (a sum post-op), channels-last between the groups. On a CPU whose oneDNN
// has no jit kernel for that (ctest fused_kernels.no_reference_conv_on_avx2 runs this with
// oneDNN capped at AVX2 and fails on a reference convolution in its verbose log), the
// kernels take the plain path and still match the unfused runtime.
Graph silu_residual_graph() {
  GraphBuilder b;
  auto s = Shape::of({1, 24, 28, 28});
  auto x = b.input("x", {1, 24, 28, 28});
  auto block = [&](ValueId in, const std::string& name, int seed, bool residual) {
    auto w = b.constant(name + "_w",
                        TensorData::from_floats({24, 24, 3, 3}, random_floats(24 * 24 * 9, seed)));
    auto bias = b.constant(name + "_b", TensorData::from_floats({24}, random_floats(24, seed + 1)));
    auto c = b.op("Conv", {in, w, bias}, {{"pads", Ints{1, 1, 1, 1}}}, name, s);
    auto y = b.op("Mul", {c, b.op("Sigmoid", {c}, {}, name + "_sig", s)}, {}, name + "_silu", s);
    return residual ? b.op("Add", {y, in}, {}, name + "_res", s) : y;
  };
  auto a = block(x, "s0", 1, false);
  auto c = block(block(a, "s1", 3, true), "s2", 5, true);
  b.output(c);
  return b.build();
}

TEST(FusedConvSiluResidual, ChannelsLastChainMatchesUnfused) {
  Graph g = silu_residual_graph();
  using testing::make_group;
  std::vector<FusionGroup> groups{make_group("g0", {"s0", "s0_sig", "s0_silu"}),
                                  make_group("g1", {"s1", "s1_sig", "s1_silu", "s1_res"}),
                                  make_group("g2", {"s2", "s2_sig", "s2_silu", "s2_res"})};
  FusedProgram p = testing::post_op_program(g, groups);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 24, 28, 28}, 2)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  testing::expect_two_runs_match(fused, in, expected, "silu_residual", 1e-3);
}

class FusedConvChain : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(Batch, FusedConvChain, ::testing::Values(1, 2),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

TEST_P(FusedConvChain, KeepsChannelsLastBetweenConvGroupsAndMatchesUnfused) {
  Graph g = chain_graph(GetParam());
  using testing::make_group;
  std::vector<FusionGroup> groups{make_group("g1", {"c1", "c1_bn", "c1_relu"}),
                                  make_group("g2", {"c2", "c2_clip"}),
                                  make_group("g3", {"c3", "c3_clip"}),
                                  make_group("g4", {"c4", "c4_residual"}),
                                  make_group("g5", {"c5", "c5_relu"}),
                                  make_group("g7", {"c7", "c7_residual", "c7_relu"})};
  FusedProgram p = testing::post_op_program(g, groups);
  // c2 -> c3 -> c4 -> c5 -> mid_pool -> c6 -> c7 exchange NHWC tensors; c1's output
  // is a graph output, and c7's goes to the last MaxPool, whose output is one.
  // Planning again finds the same.
  std::vector<Step> steps = p.steps;
  EXPECT_EQ(plan_conv_layouts(g, steps), 6);
  auto c6_step =
      std::find_if(steps.begin(), steps.end(), [](const Step& s) { return s.name == "c6"; });
  ASSERT_NE(c6_step, steps.end());
  EXPECT_EQ(c6_step->inputs.size(), 1u);  // adopted: the weights are the kernel's
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({GetParam(), 8, 20, 20}, 1)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  // Summation order differs (folded BatchNormalization, other kernels).
  testing::expect_two_runs_match(fused, in, expected, "chain", 1e-3);
  // Each group's own step (what before/after checks alone on NCHW tensors) keeps its
  // NCHW kernel; the program's steps got channels-last variants.
  for (const auto& gb : p.groups) {
    ASSERT_TRUE(gb.step);
    auto it = std::find_if(p.steps.begin(), p.steps.end(),
                           [&](const Step& s) { return s.name == gb.id; });
    ASSERT_NE(it, p.steps.end());
    EXPECT_EQ(it->kernel == gb.step->kernel, gb.id == "g1") << gb.id;
  }
}

// ResNet basic blocks: x -> c0+Relu (a0) -> c1+Relu -> c2 + a0 + Relu (a2) -> c3+Relu
// -> c4 + a2 + Relu -> MaxPool (a graph output). a0 and a2 stay NHWC and die at the
// residual Add, so the memory plan writes c2's and c4's outputs over them (oneDNN's
// sum post-op accumulates in place, no copy); c4's output is NCHW (the pool reads it),
// so c4 keeps its own buffer. Params: batch, channels, map size (64 channels on a 4x4
// map: parts split output channels; 64 channels on 14x14 and 28x28: oneDNN's Winograd
// convolution, runtime/winograd_conv.h, split over channels and over rows).
struct BlockCase {
  int64_t n, c, hw;
};
class FusedConvResidual : public ::testing::TestWithParam<BlockCase> {};
INSTANTIATE_TEST_SUITE_P(Shapes, FusedConvResidual,
                         ::testing::Values(BlockCase{1, 16, 12}, BlockCase{2, 16, 12},
                                           BlockCase{1, 64, 4}, BlockCase{1, 64, 14},
                                           BlockCase{1, 64, 28}),
                         [](const auto& info) {
                           const BlockCase& c = info.param;
                           return "n" + std::to_string(c.n) + "c" + std::to_string(c.c) + "hw" +
                                  std::to_string(c.hw);
                         });

Graph residual_graph(const BlockCase& bc, std::map<std::string, ValueId>& ids) {
  GraphBuilder b;
  const auto s4 = Shape::of({bc.n, bc.c, bc.hw, bc.hw});
  auto x = b.input("x", {bc.n, bc.c, bc.hw, bc.hw});
  int seed = 40;
  auto conv3 = [&](ValueId in, const std::string& name) {
    const Ints wd{bc.c, bc.c, 3, 3};
    auto w = b.constant(
        name + "_w",
        TensorData::from_floats(wd, random_floats(static_cast<std::size_t>(dims_numel(wd)),
                                                  static_cast<uint32_t>(seed++), -0.2f, 0.2f)));
    auto bias = b.constant(
        name + "_b", TensorData::from_floats({bc.c}, random_floats(static_cast<std::size_t>(bc.c),
                                                                   static_cast<uint32_t>(seed++))));
    return b.op("Conv", {in, w, bias}, {{"pads", Ints{1, 1, 1, 1}}}, name, s4);
  };
  auto relu = [&](ValueId in, const std::string& name) { return b.op("Relu", {in}, {}, name, s4); };
  auto a0 = relu(conv3(x, "c0"), "c0_relu");
  auto a1 = relu(conv3(a0, "c1"), "c1_relu");
  auto a2 = relu(b.op("Add", {conv3(a1, "c2"), a0}, {}, "c2_add", s4), "c2_relu");
  auto a3 = relu(conv3(a2, "c3"), "c3_relu");
  auto a4 = relu(b.op("Add", {conv3(a3, "c4"), a2}, {}, "c4_add", s4), "c4_relu");
  ids = {{"a0", a0}, {"a2", a2}, {"a4", a4}};
  b.output(b.op("MaxPool", {a4}, {{"kernel_shape", Ints{2, 2}}}, "pool",
                Shape::of({bc.n, bc.c, bc.hw - 1, bc.hw - 1})));
  return b.build();
}

TEST_P(FusedConvResidual, WritesOverTheDyingResidualAndMatchesUnfused) {
  const BlockCase bc = GetParam();
  std::map<std::string, ValueId> v;
  Graph g = residual_graph(bc, v);
  using testing::make_group;
  std::vector<FusionGroup> groups{
      make_group("g0", {"c0", "c0_relu"}), make_group("g1", {"c1", "c1_relu"}),
      make_group("g2", {"c2", "c2_add", "c2_relu"}), make_group("g3", {"c3", "c3_relu"}),
      make_group("g4", {"c4", "c4_add", "c4_relu"})};
  FusedProgram p = testing::post_op_program(g, groups);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({bc.n, bc.c, bc.hw, bc.hw}, 3)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  Executor fused(g, p.steps, ExecutorOptions{2});
  // Written over the residual: same arena slot.
  EXPECT_GE(fused.slot_of(v["a2"]), 0);
  EXPECT_EQ(fused.slot_of(v["a2"]), fused.slot_of(v["a0"]));
  // c4's output is NCHW for the pool, its residual NHWC: its own slot.
  EXPECT_NE(fused.slot_of(v["a4"]), fused.slot_of(v["a2"]));
  for (int run = 0; run < 2; ++run) {  // the second run reuses the built primitives
    auto actual = fused.run(in);
    ASSERT_EQ(actual.size(), expected.size());
    auto diff = testing::compare({expected[0]}, {actual[0]});
    EXPECT_LT(diff.max_rel, 1e-3) << "run " << run;
    EXPECT_LT(diff.max_abs, 1e-3) << "run " << run;
  }
}

// 1x1 convolutions with stride 1 on a single image run as runs of pixels, not rows
// (7x7: 25 and 24 pixels on two threads): a 7x7 chain of 1x1 expand + Clip -> 1x1
// project + residual Add -> 1x1 + run-time per-channel Mul (a binary post-op) + Relu,
// NHWC between them, against the unfused runtime on one to three threads, and on an
// odd map (9x5: 22 and 23 pixels) where the pixel runs do not align with rows. The
// expand and project convolutions are large enough (49K weights) to be cut in parts.
TEST(FusedConvPointwise, PixelPartsMatchUnfused) {
  for (int64_t h : {7, 9}) {
    const int64_t w = h == 7 ? 7 : 5;
    GraphBuilder b;
    auto x = b.input("x", {1, 128, h, w});
    auto chs = b.input("chs", {1, 128, 1, 1});
    auto wt = [&](const std::string& name, Ints d, uint32_t seed) {
      return testing::random_constant(b, name, d, seed);
    };
    auto lo = b.constant("lo", TensorData::from_floats({}, {0.f}));
    auto hi = b.constant("hi", TensorData::from_floats({}, {6.f}));
    auto e = b.op("Conv", {x, wt("we", {384, 128, 1, 1}, 1), wt("be", {384}, 2)}, {}, "e");
    auto ec = b.op("Clip", {e, lo, hi}, {}, "e_clip");
    auto pj = b.op("Conv", {ec, wt("wp", {128, 384, 1, 1}, 3)}, {}, "p");
    auto r = b.op("Add", {pj, x}, {}, "p_res");
    auto c = b.op("Conv", {r, wt("wc", {128, 128, 1, 1}, 4), wt("bc", {128}, 5)}, {}, "c");
    b.output(b.op("Relu", {b.op("Mul", {c, chs}, {}, "c_gate")}, {}, "c_relu"));
    Graph g = b.build();
    using testing::make_group;
    std::vector<FusionGroup> groups{make_group("ge", {"e", "e_clip"}),
                                    make_group("gp", {"p", "p_res"}),
                                    make_group("gc", {"c", "c_gate", "c_relu"})};
    std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 128, h, w}, 1)},
                                     {"chs", testing::random_tensor({1, 128, 1, 1}, 2)}};
    for (int threads : {1, 2, 3}) {
      // A program per thread count: a kernel's parts are cut for the first run's.
      FusedProgram p = testing::post_op_program(g, groups);
      auto expected = Executor(g, ExecutorOptions{threads}).run(in);
      Executor fused(g, p.steps, ExecutorOptions{threads});
      testing::expect_two_runs_match(
          fused, in, expected,
          std::to_string(h) + "x" + std::to_string(w) + " threads " + std::to_string(threads));
    }
  }
}

// Channels-last 1x1 convolutions too small for the rows path's work rule to cut (a
// 14x14 map, 24 <-> 96 channels: 0.45M multiply-adds) run as one part or as one part
// per thread, whichever is faster on the first run (make_split_candidate). An inverted
// residual block, NHWC between its Convs (fixed layout costs): e (1x1 + Relu) -> d
// (depthwise 3x3 + Relu) -> p (1x1 + residual Add: a sum post-op, never timed). Each way,
// forced by FX_CONV_SPLIT, and the timed choice match the unfused runtime on two and
// three threads over two runs (the second runs the kept path alone); only the timed
// choice times.
TEST(FusedConvPointwise, SplitOrOnePartMatchesUnfused) {
  GraphBuilder b;
  auto x = b.input("x", {1, 24, 14, 14});
  const Shape wide = Shape::of({1, 96, 14, 14}), narrow = Shape::of({1, 24, 14, 14});
  auto wt = [&](const std::string& name, Ints d, uint32_t seed) {
    return testing::random_constant(b, name, d, seed);
  };
  auto e = b.op("Conv", {x, wt("we", {96, 24, 1, 1}, 1), wt("be", {96}, 2)}, {}, "e", wide);
  auto a1 = b.op("Relu", {e}, {}, "e_relu", wide);
  auto d = b.op("Conv", {a1, wt("wd", {96, 1, 3, 3}, 3), wt("bd", {96}, 4)},
                {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{96}}}, "d", wide);
  auto a2 = b.op("Relu", {d}, {}, "d_relu", wide);
  auto pj = b.op("Conv", {a2, wt("wp", {24, 96, 1, 1}, 5)}, {}, "p", narrow);
  b.output(b.op("Add", {pj, x}, {}, "p_res", narrow));
  Graph g = b.build();
  using testing::make_group;
  std::vector<FusionGroup> groups{make_group("ge", {"e", "e_relu"}),
                                  make_group("gd", {"d", "d_relu"}),
                                  make_group("gp", {"p", "p_res"})};
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 24, 14, 14}, 6)}};
  // The timed choice logs its two times at debug level: captured, to count them.
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1024);
  auto saved = spdlog::default_logger();
  const auto saved_level = saved->level();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("split_test", sink));
  spdlog::set_level(spdlog::level::debug);
  auto timings = [&] {
    int n = 0;
    for (const auto& m : sink->last_formatted())
      if (m.find("threads' parts") != std::string::npos) ++n;
    return n;
  };
  for (const char* how : {"split", "one", ""}) {
    if (*how)
      setenv("FX_CONV_SPLIT", how, 1);
    else
      unsetenv("FX_CONV_SPLIT");
    const int before = timings();
    for (int threads : {2, 3}) {
      FusedProgram p = testing::post_op_program(g, groups);
      const testing::FixedLayoutCosts nhwc_wins(0.0, 1, 0);
      ASSERT_EQ(plan_conv_layouts(g, p.steps, &nhwc_wins), 2);
      auto expected = Executor(g, ExecutorOptions{threads}).run(in);
      Executor fused(g, p.steps, ExecutorOptions{threads});
      testing::expect_two_runs_match(
          fused, in, expected,
          std::string("FX_CONV_SPLIT '") + how + "' threads " + std::to_string(threads));
    }
    // e on two and on three threads (p has a residual, d is depthwise).
    EXPECT_EQ(timings() - before, *how ? 0 : 2) << "FX_CONV_SPLIT '" << how << "'";
  }
  unsetenv("FX_CONV_SPLIT");
  spdlog::set_default_logger(saved);
  spdlog::set_level(saved_level);
}

// A wide 1x1 convolution on a small map (MobileNetV2's features.18: 320 -> 1280 on 7x7)
// runs as oneDNN matmuls over output-channel slices, each writing its columns into the
// NHWC output in place: c0 (3x3 + Clip, NHWC out) -> c1 (1x1 to `oc` channels + Clip,
// 512 KiB+ of weights). 1000 channels do not split at a multiple of 16 evenly (496 and
// 504 columns on two threads; 336, 320, 344 on three), an 8x8 map is the largest this
// path takes, and 480 -> 320 channels (160 a part, features.17's 960 -> 320 in
// small) is its narrowest on two threads (three threads keep the pixel split there). Against the
// unfused runtime, two runs each (the second reuses the primitives).
TEST(FusedConvPointwise, WideOutputChannelPartsMatchUnfused) {
  struct Case {
    int64_t mid, oc, h;  // c0's output channels (c1's input), c1's, map size
  };
  for (auto [mid, oc, h] : {Case{320, 1280, 7}, Case{320, 1000, 8}, Case{480, 320, 7}}) {
    GraphBuilder b;
    auto x = b.input("x", {1, 96, h, h});
    auto wt = [&](const std::string& name, Ints d, uint32_t seed) {
      return testing::random_constant(b, name, d, seed);
    };
    auto lo = b.constant("lo", TensorData::from_floats({}, {0.f}));
    auto hi = b.constant("hi", TensorData::from_floats({}, {6.f}));
    auto c0 = b.op("Conv", {x, wt("w0", {mid, 96, 3, 3}, 1), wt("b0", {mid}, 2)},
                   {{"pads", Ints{1, 1, 1, 1}}}, "c0");
    auto a0 = b.op("Clip", {c0, lo, hi}, {}, "c0_clip");
    auto c1 = b.op("Conv", {a0, wt("w1", {oc, mid, 1, 1}, 3), wt("b1", {oc}, 4)}, {}, "c1");
    // c0 a 3x3 and c1's output read NHWC by a GlobalAveragePool: two 1x1 Convs
    // between NCHW tensors would stay NCHW (no spatial Conv gains from conversions).
    auto a1 = b.op("Clip", {c1, lo, hi}, {}, "c1_clip");
    b.output(b.op("GlobalAveragePool", {a1}, {}, "gap"));
    Graph g = b.build();
    using testing::make_group;
    std::vector<FusionGroup> groups{make_group("g0", {"c0", "c0_clip"}),
                                    make_group("g1", {"c1", "c1_clip"})};
    std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 96, h, h}, 5)}};
    for (int threads : {2, 3}) {
      FusedProgram p = testing::post_op_program(g, groups);
      std::vector<Step> steps = p.steps;
      EXPECT_EQ(plan_conv_layouts(g, steps), 2);  // c0 -> c1 -> gap is NHWC
      auto expected = Executor(g, ExecutorOptions{threads}).run(in);
      Executor fused(g, p.steps, ExecutorOptions{threads});
      testing::expect_two_runs_match(
          fused, in, expected,
          std::to_string(oc) + " channels, threads " + std::to_string(threads));
    }
  }
}

// An inverted residual block as separate groups: 1x1 expand + Clip -> depthwise 3x3
// (stride 1, "same" padding) + Clip -> 1x1 project + residual Add, NHWC between them.
// The depthwise output takes the expanded tensor's arena slot (it dies there) and is
// written over it; with a batch of two the step copies its input aside instead. Against
// the unfused runtime on one to three threads (56x56x96, 1.2 MB: the size from which
// the step writes in place; its rows are cut into bands).
TEST(FusedConvDepthwise, WritesOverItsDyingInputAndMatchesUnfused) {
  for (int64_t n : {1, 2}) {
    GraphBuilder b;
    auto x = b.input("x", {n, 32, 56, 56});
    // Static shapes: the depthwise step writes in place from 1 MiB of input.
    const Shape wide = Shape::of({n, 96, 56, 56}), narrow = Shape::of({n, 32, 56, 56});
    auto wt = [&](const std::string& name, Ints d, uint32_t seed) {
      return testing::random_constant(b, name, d, seed);
    };
    auto lo = b.constant("lo", TensorData::from_floats({}, {0.f}));
    auto hi = b.constant("hi", TensorData::from_floats({}, {6.f}));
    auto e = b.op("Conv", {x, wt("we", {96, 32, 1, 1}, 1), wt("be", {96}, 2)}, {}, "e", wide);
    auto a1 = b.op("Clip", {e, lo, hi}, {}, "e_clip", wide);
    auto d = b.op("Conv", {a1, wt("wd", {96, 1, 3, 3}, 3), wt("bd", {96}, 4)},
                  {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{96}}}, "d", wide);
    auto a2 = b.op("Clip", {d, lo, hi}, {}, "d_clip", wide);
    auto pj = b.op("Conv", {a2, wt("wp", {32, 96, 1, 1}, 5)}, {}, "p", narrow);
    b.output(b.op("Add", {pj, x}, {}, "p_res", narrow));
    Graph g = b.build();
    using testing::make_group;
    std::vector<FusionGroup> groups{make_group("ge", {"e", "e_clip"}),
                                    make_group("gd", {"d", "d_clip"}),
                                    make_group("gp", {"p", "p_res"})};
    std::map<std::string, Tensor> in{{"x", testing::random_tensor({n, 32, 56, 56}, 6)}};
    for (int threads : {1, 2, 3}) {
      FusedProgram p = testing::post_op_program(g, groups);
      // NHWC between the Convs, as in MobileNetV2's chain of blocks; alone, whether
      // the NHWC depthwise loop pays for the block's conversions is this machine's
      // measurement (conv_layout_costs_test.cc).
      const testing::FixedLayoutCosts nhwc_wins(0.0, 1, 0);
      ASSERT_EQ(plan_conv_layouts(g, p.steps, &nhwc_wins), 2);
      auto expected = Executor(g, ExecutorOptions{threads}).run(in);
      Executor fused(g, p.steps, ExecutorOptions{threads});
      EXPECT_GE(fused.slot_of(a1), 0);
      EXPECT_EQ(fused.slot_of(a2), fused.slot_of(a1));
      testing::expect_two_runs_match(
          fused, in, expected,
          "batch " + std::to_string(n) + " threads " + std::to_string(threads));
    }
  }
}

// MobileNetV2 as exported: Clip's bounds come from Constant nodes, which the fused
// Conv step takes at build time; the fused program no longer runs them (70 steps a
// run there), while the unfused one does, and both agree.
TEST(FusedConvPointwise, ConstantBoundsOfAFusedClipAreNotRunEachTime) {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 8, 8});
  auto w = b.constant("w", TensorData::from_floats({32, 16, 1, 1}, random_floats(512, 3)));
  auto lo =
      b.op("Constant", {}, {{"value", TensorData::from_floats({}, {0.f})}}, "lo", Shape::scalar());
  auto hi =
      b.op("Constant", {}, {{"value", TensorData::from_floats({}, {0.5f})}}, "hi", Shape::scalar());
  auto c = b.op("Conv", {x, w}, {}, "c", Shape::of({1, 32, 8, 8}));
  b.output(b.op("Clip", {c, lo, hi}, {}, "c_clip"));
  Graph g = b.build();
  std::vector<FusionGroup> groups{testing::make_group("gc", {"c", "c_clip"})};
  CodegenOptions opt;
  opt.compile = false;
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].outcome, GroupOutcome::DnnlPostOps) << p.groups[0].detail;
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].op_type.find("Constant"), std::string::npos) << p.steps[0].op_type;
  EXPECT_EQ(make_steps(g).size(), 4u);
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({1, 16, 8, 8}, 4)}};
  auto expected = Executor(g, ExecutorOptions{2}).run(in);
  auto actual = Executor(g, p.steps, ExecutorOptions{2}).run(in);
  EXPECT_LT(testing::compare(expected, actual).max_rel, 1e-5);
}

}  // namespace
}  // namespace fx
