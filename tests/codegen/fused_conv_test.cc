// Conv + epilogue through oneDNN post-ops (no compiler involved) against the unfused
// runtime: Conv+Relu, Conv+BN+SiLU (BN folded, x*sigmoid(x) as swish), Conv + per-channel
// Mul (folded) + residual Add (sum post-op) + Clip, Conv + run-time Mul + Relu + Sub
// (binary post-ops), depthwise Conv + scale + residual + HardSwish (direct loop).

#include <gtest/gtest.h>

#include <cstdlib>

#include "codegen/fused_conv_kernel.h"
#include "codegen_test_util.h"
#include "ir/graph_builder.h"

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
  CodegenOptions opt;
  opt.compile = false;  // post-ops need no compiler
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  for (const auto& gb : p.groups)
    EXPECT_EQ(gb.outcome, GroupOutcome::DnnlPostOps) << gb.id << ": " << gb.detail;
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

}  // namespace
}  // namespace fx
