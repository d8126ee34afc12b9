// SPDX-License-Identifier: Apache-2.0
// MatMul + epilogue as one oneDNN matmul with post-ops (fused_kernels/matmul_post_ops.h)
// against the unfused runtime: bias + GELU written out in erf form (ViT) and tanh form
// (GPT-2), bias + residual Add, attention scores / scalar (batched, both operands
// inputs), a scalar, a vector and a full-tensor operand after a nonlinearity, weights
// behind an Identity, and
// epilogues that have no post-op form (they keep the generated path). One to three
// threads, so that parts split columns and batches.

#include <gtest/gtest.h>

#include "codegen/codegen_test_util.h"
#include "fused_kernels/matmul_post_ops.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::random_floats;
using Ints = std::vector<int64_t>;

ValueId scalar(GraphBuilder& b, const std::string& name, float v) {
  return b.constant(name, TensorData::from_floats({}, {v}));
}

ValueId weights(GraphBuilder& b, const std::string& name, int64_t k, int64_t n, uint32_t seed) {
  return b.constant(
      name, TensorData::from_floats({k, n}, random_floats(static_cast<std::size_t>(k * n), seed)));
}

ValueId vec(GraphBuilder& b, const std::string& name, int64_t n, uint32_t seed) {
  return b.constant(name,
                    TensorData::from_floats({n}, random_floats(static_cast<std::size_t>(n), seed)));
}

// MatMul + bias + GELU(erf): x * 0.5 * (1 + erf(x / sqrt2)), as torchvision's ViT.
ValueId matmul_gelu_erf(GraphBuilder& b, const std::string& p, ValueId x, const Ints& out,
                        int64_t k) {
  auto mm =
      b.op("MatMul", {x, weights(b, p + "w", k, out.back(), 11)}, {}, p + "mm", Shape::of(out));
  auto h = b.op("Add", {mm, vec(b, p + "b", out.back(), 12)}, {}, p + "bias");
  auto d = b.op("Div", {h, scalar(b, p + "sqrt2", 1.4142135f)}, {}, p + "div");
  auto e = b.op("Erf", {d}, {}, p + "erf");
  auto one = b.op("Add", {e, scalar(b, p + "one", 1.f)}, {}, p + "add_one");
  auto m = b.op("Mul", {h, one}, {}, p + "mul");
  return b.op("Mul", {m, scalar(b, p + "half", 0.5f)}, {}, p + "gelu");
}

// MatMul + bias + GELU(tanh) as GPT-2 exports it.
ValueId matmul_gelu_tanh(GraphBuilder& b, const std::string& p, ValueId x, const Ints& out,
                         int64_t k) {
  auto mm =
      b.op("MatMul", {x, weights(b, p + "w", k, out.back(), 21)}, {}, p + "mm", Shape::of(out));
  auto h = b.op("Add", {mm, vec(b, p + "b", out.back(), 22)}, {}, p + "bias");
  auto cube = b.op("Pow", {h, scalar(b, p + "three", 3.f)}, {}, p + "pow");
  auto c1 = b.op("Mul", {cube, scalar(b, p + "c", 0.044715f)}, {}, p + "mul_c");
  auto inner = b.op("Add", {h, c1}, {}, p + "add_in");
  auto t = b.op("Tanh", {b.op("Mul", {inner, scalar(b, p + "s", 0.7978845608f)}, {}, p + "mul_s")},
                {}, p + "tanh");
  auto one = b.op("Add", {t, scalar(b, p + "one", 1.f)}, {}, p + "add_one");
  auto half = b.op("Mul", {h, scalar(b, p + "half", 0.5f)}, {}, p + "mul_half");
  return b.op("Mul", {half, one}, {}, p + "gelu");
}

struct Case {
  Graph g;
  std::vector<FusionGroup> groups;
  std::map<std::string, Tensor> inputs;
};

Case make_case() {
  Case c;
  GraphBuilder b;
  using testing::make_group;
  // A: ViT's MLP fc1: [1, 50, 96] x [96, 384] + bias + GELU(erf).
  auto xa = b.input("xa", {1, 50, 96});
  b.output(matmul_gelu_erf(b, "a_", xa, {1, 50, 384}, 96));
  c.groups.push_back(
      make_group("fg-a", {"a_mm", "a_bias", "a_div", "a_erf", "a_add_one", "a_mul", "a_gelu"}));
  // B: GPT-2's MLP fc: [1, 32, 64] x [64, 256] + bias + GELU(tanh).
  auto xb = b.input("xb", {1, 32, 64});
  b.output(matmul_gelu_tanh(b, "b_", xb, {1, 32, 256}, 64));
  c.groups.push_back(
      make_group("fg-b", {"b_mm", "b_bias", "b_pow", "b_mul_c", "b_add_in", "b_mul_s", "b_tanh",
                          "b_add_one", "b_mul_half", "b_gelu"}));
  // C: projection + bias + residual (GPT-2's MatMul+Add+Add): [2, 24, 64] x [64, 96].
  auto xc = b.input("xc", {2, 24, 64});
  auto rc = b.input("rc", {2, 24, 96});
  auto mc = b.op("MatMul", {xc, weights(b, "c_w", 64, 96, 31)}, {}, "c_mm", Shape::of({2, 24, 96}));
  auto hc = b.op("Add", {mc, vec(b, "c_b", 96, 32)}, {}, "c_bias");
  b.output(b.op("Add", {rc, hc}, {}, "c_res"));
  c.groups.push_back(make_group("fg-c", {"c_mm", "c_bias", "c_res"}));
  // D: attention scores / 8 over 8 heads (both operands inputs): parts over the heads.
  auto qd = b.input("qd", {1, 8, 64, 32});
  auto kd = b.input("kd", {1, 8, 32, 64});
  auto md = b.op("MatMul", {qd, kd}, {}, "d_mm", Shape::of({1, 8, 64, 64}));
  b.output(b.op("Div", {md, scalar(b, "d_eight", 8.f)}, {}, "d_div"));
  c.groups.push_back(make_group("fg-d", {"d_mm", "d_div"}));
  // E: Relu, then a vector Mul, a full-tensor Sub and a one-element input Div (binary
  // post-ops with each broadcast): [40, 128] x [128, 512].
  auto xe = b.input("xe", {40, 128});
  auto fe = b.input("fe", {40, 512});
  auto se = b.input("se", {1, 1});
  auto me = b.op("MatMul", {xe, weights(b, "e_w", 128, 512, 41)}, {}, "e_mm", Shape::of({40, 512}));
  auto re = b.op("Relu", {me}, {}, "e_relu");
  auto ve = b.op("Mul", {re, vec(b, "e_v", 512, 42)}, {}, "e_vec");
  auto ue = b.op("Sub", {ve, fe}, {}, "e_full");
  b.output(b.op("Div", {ue, se}, {}, "e_scalar"));
  c.groups.push_back(make_group("fg-e", {"e_mm", "e_relu", "e_vec", "e_full", "e_scalar"}));
  // F: weights shared through an Identity (as exporters write it) + bias + Tanh.
  auto xf = b.input("xf", {1, 20, 32});
  auto wf = b.op("Identity", {weights(b, "f_w", 32, 48, 51)}, {}, "f_id", Shape::of({32, 48}));
  auto mf = b.op("MatMul", {xf, wf}, {}, "f_mm", Shape::of({1, 20, 48}));
  auto hf = b.op("Add", {vec(b, "f_b", 48, 52), mf}, {}, "f_bias");
  b.output(b.op("Tanh", {hf}, {}, "f_tanh"));
  c.groups.push_back(make_group("fg-f", {"f_mm", "f_bias", "f_tanh"}));
  // G: the bias behind an Identity (ViT-B/16's attention in-projection): still the
  // matmul's own bias, not a binary operand.
  auto xg = b.input("xg", {1, 20, 32});
  auto bg = b.op("Identity", {vec(b, "g_b", 48, 62)}, {}, "g_id", Shape::of({48}));
  auto mg = b.op("MatMul", {xg, weights(b, "g_w", 32, 48, 61)}, {}, "g_mm", Shape::of({1, 20, 48}));
  b.output(b.op("Tanh", {b.op("Add", {mg, bg}, {}, "g_bias")}, {}, "g_tanh"));
  c.groups.push_back(make_group("fg-g", {"g_mm", "g_bias", "g_tanh"}));
  c.g = b.build();
  c.inputs = {{"xa", testing::random_tensor({1, 50, 96}, 1)},
              {"xb", testing::random_tensor({1, 32, 64}, 2)},
              {"xc", testing::random_tensor({2, 24, 64}, 3)},
              {"rc", testing::random_tensor({2, 24, 96}, 4)},
              {"qd", testing::random_tensor({1, 8, 64, 32}, 5)},
              {"kd", testing::random_tensor({1, 8, 32, 64}, 6)},
              {"xe", testing::random_tensor({40, 128}, 7)},
              {"fe", testing::random_tensor({40, 512}, 8)},
              {"se", Tensor::from_floats({1, 1}, {1.5f})},
              {"xf", testing::random_tensor({1, 20, 32}, 9)},
              {"xg", testing::random_tensor({1, 20, 32}, 10)}};
  return c;
}

TEST(MatMulPostOps, OneDnnPrimitiveMatchesTheUnfusedRuntime) {
  Case c = make_case();
  FusedProgram p = testing::post_op_program(c.g, c.groups);  // no compiler
  EXPECT_EQ(p.find("fg-a")->detail, "oneDNN matmul with 1 post-op(s) and its bias");
  EXPECT_EQ(p.find("fg-c")->detail, "oneDNN matmul with 1 post-op(s) and its bias");
  EXPECT_EQ(p.find("fg-e")->detail, "oneDNN matmul with 4 post-op(s)");
  EXPECT_EQ(p.find("fg-f")->detail, "oneDNN matmul with 1 post-op(s) and its bias");
  EXPECT_EQ(p.find("fg-g")->detail, "oneDNN matmul with 1 post-op(s) and its bias");
  testing::expect_steps_match_unfused(c.g, p.steps, c.inputs);
}

TEST(MatMulPostOps, PlanNamesWhatIsNotExpressible) {
  GraphBuilder b;
  auto x = b.input("x", {4, 8});
  auto mm = b.op("MatMul", {x, weights(b, "w", 8, 6, 1)}, {}, "mm", Shape::of({4, 6}));
  auto ex = b.op("Exp", {mm}, {}, "exp");  // no eltwise post-op chosen for Exp
  b.output(ex);
  auto x2 = b.input("x2", {4, 8});
  auto mm2 = b.op("MatMul", {x2, weights(b, "w2", 8, 6, 2)}, {}, "mm2", Shape::of({4, 6}));
  auto r2 = b.op("Relu", {mm2}, {}, "relu2");
  b.output(r2);
  b.output(mm2);  // the MatMul's output also leaves the group
  auto x3 = b.input("x3", {4, 8});
  auto mm3 = b.op("MatMul", {x3, weights(b, "w3", 8, 6, 3)}, {}, "mm3", Shape::of({4, 6}));
  b.output(b.op("Sub", {scalar(b, "one", 1.f), mm3}, {}, "rsub"));
  Graph g = b.build();
  std::string why;
  EXPECT_FALSE(plan_matmul_post_ops(g, {g.find_node("mm"), g.find_node("exp")}, &why));
  EXPECT_NE(why.find("op Exp"), std::string::npos) << why;
  EXPECT_FALSE(plan_matmul_post_ops(g, {g.find_node("mm2"), g.find_node("relu2")}, &why));
  EXPECT_NE(why.find("leaves the group"), std::string::npos) << why;
  EXPECT_FALSE(plan_matmul_post_ops(g, {g.find_node("mm3"), g.find_node("rsub")}, &why));
  EXPECT_NE(why.find("second operand"), std::string::npos) << why;
  auto ok = plan_matmul_post_ops(g, {g.find_node("mm2")}, &why);
  EXPECT_FALSE(ok);
}

TEST(MatMulPostOps, SwitchedOffKeepsTheGeneratedEpilogue) {
  Case c = make_case();
  CodegenOptions opt;
  opt.dnnl_post_ops = false;
  opt.compile = false;
  FusedProgram p = build_fused_program(c.g, testing::ptrs(c.groups), opt);
  for (const auto& gb : p.groups) EXPECT_NE(gb.outcome, GroupOutcome::DnnlPostOps) << gb.id;
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

// A projection on few rows with a bias (ViT's and GPT-2's shape, scaled down): fused,
// each thread would read all the weights; the saving of one epilogue op is smaller.
// With one thread, many rows, or an epilogue without a tensor operand (a GELU on
// scalars only), fusing is worth it.
TEST(MatMulFusionLoss, WeightsReReadPerThreadAgainstEpilogueTraffic) {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 256});
  auto mm = b.op("MatMul", {x, weights(b, "w", 256, 64, 1)}, {}, "mm", Shape::of({1, 16, 64}));
  b.output(b.op("Add", {mm, vec(b, "bias", 64, 2)}, {}, "bias_add"));
  auto xl = b.input("xl", {1, 512, 256});
  auto mml = b.op("MatMul", {xl, weights(b, "wl", 256, 64, 3)}, {}, "mml", Shape::of({1, 512, 64}));
  b.output(b.op("Add", {mml, vec(b, "biasl", 64, 4)}, {}, "bias_addl"));
  auto xs = b.input("xs", {1, 16, 256});
  auto mms = b.op("MatMul", {xs, weights(b, "ws", 256, 64, 5)}, {}, "mms", Shape::of({1, 16, 64}));
  b.output(b.op("Mul", {mms, scalar(b, "half", 0.5f)}, {}, "scale"));
  Graph g = b.build();
  const std::vector<NodeId> small = {g.find_node("mm"), g.find_node("bias_add")};
  // 2 threads: 256x64 extra weight floats against 2 x 16 x 64 of output traffic.
  const std::string why = matmul_fusion_loss(g, small, 2);
  EXPECT_NE(why.find("16 rows over 2 threads"), std::string::npos) << why;
  EXPECT_EQ(matmul_fusion_loss(g, small, 1), "");
  EXPECT_EQ(matmul_fusion_loss(g, {g.find_node("mml"), g.find_node("bias_addl")}, 2), "");
  EXPECT_EQ(matmul_fusion_loss(g, {g.find_node("mms"), g.find_node("scale")}, 2), "");
}

// ViT-B/16's in-projection group: [Identity of the bias, MatMul, Add]. The whole group
// is not generated (its anchor is not first); its part [MatMul, Add] is held to the
// same loss rule as a group (it was fused with a row split, each thread reading all
// the weights: 0.2-0.3 ms slower per layer), so everything runs unfused here.
TEST(MatMulFusionLoss, AppliesToTheGeneratedPartsOfAGroup) {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 256});
  auto bias = b.op("Identity", {vec(b, "bias", 64, 2)}, {}, "bias_id", Shape::of({64}));
  auto mm = b.op("MatMul", {x, weights(b, "w", 256, 64, 1)}, {}, "mm", Shape::of({1, 16, 64}));
  b.output(b.op("Add", {mm, bias}, {}, "bias_add"));
  Graph g = b.build();
  std::vector<FusionGroup> groups{testing::make_group("fg-p", {"bias_id", "mm", "bias_add"})};
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("matmul_fusion_loss");
  opt.threads = 2;
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_NE(p.find("fg-p.1"), nullptr);
  EXPECT_EQ(p.find("fg-p.1")->outcome, GroupOutcome::Excluded);
  EXPECT_NE(p.find("fg-p.1")->detail.find("16 rows over 2 threads"), std::string::npos)
      << p.find("fg-p.1")->detail;
  for (const auto& gb : p.groups) EXPECT_EQ(gb.outcome, GroupOutcome::Excluded) << gb.id;
  testing::expect_steps_match_unfused(g, p.steps, {{"x", testing::random_tensor({1, 16, 256}, 3)}});
  // One thread: the part is fused, the bias (behind its Identity) as the matmul's own.
  opt.threads = 1;
  FusedProgram one = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_NE(one.find("fg-p.1"), nullptr);
  EXPECT_EQ(one.find("fg-p.1")->outcome, GroupOutcome::DnnlPostOps) << one.find("fg-p.1")->detail;
  testing::expect_steps_match_unfused(g, one.steps,
                                      {{"x", testing::random_tensor({1, 16, 256}, 3)}});
}

}  // namespace
}  // namespace fx
