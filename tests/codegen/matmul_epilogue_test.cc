// SPDX-License-Identifier: Apache-2.0
// MatMul + generated epilogue run part by part (codegen/matmul_epilogue.h) against the
// unfused runtime: bias + tanh-GELU as GPT-2 exports it, a residual Add, a LayerNorm
// epilogue (a reduction: no oneDNN post-op form), one row (M = 1, column parts), a
// MatMul output that is also read outside the group, and attention scores (weights
// that are an input, parts over the heads). One to three threads.

#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::random_floats;
using Ints = std::vector<int64_t>;

ValueId scalar(GraphBuilder& b, const std::string& name, float v) {
  return b.constant(name, TensorData::from_floats({}, {v}));
}

// x [..., K] x w [K, N] + bias, then 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
ValueId matmul_gelu(GraphBuilder& b, const std::string& p, ValueId x, const Ints& out, int64_t k,
                    uint32_t seed) {
  const int64_t n = out.back();
  auto w = b.constant(p + "w", TensorData::from_floats(
                                   {k, n}, random_floats(static_cast<std::size_t>(k * n), seed)));
  auto bias = b.constant(
      p + "b", TensorData::from_floats({n}, random_floats(static_cast<std::size_t>(n), seed + 1)));
  auto mm = b.op("MatMul", {x, w}, {}, p + "mm", Shape::of(out));
  auto h = b.op("Add", {mm, bias}, {}, p + "bias");
  auto cube = b.op("Pow", {h, scalar(b, p + "three", 3.f)}, {}, p + "pow");
  auto c1 = b.op("Mul", {cube, scalar(b, p + "c", 0.044715f)}, {}, p + "mul_c");
  auto inner = b.op("Add", {h, c1}, {}, p + "add_in");
  auto t = b.op("Tanh", {b.op("Mul", {inner, scalar(b, p + "s", 0.7978845608f)}, {}, p + "mul_s")},
                {}, p + "tanh");
  auto one = b.op("Add", {t, scalar(b, p + "one", 1.f)}, {}, p + "add_one");
  auto half = b.op("Mul", {h, scalar(b, p + "half", 0.5f)}, {}, p + "mul_half");
  return b.op("Mul", {half, one}, {}, p + "gelu");
}

std::vector<std::string> gelu_nodes(const std::string& p) {
  return {p + "mm",    p + "bias", p + "pow",     p + "mul_c",    p + "add_in",
          p + "mul_s", p + "tanh", p + "add_one", p + "mul_half", p + "gelu"};
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
  // A: [2, 24, 64] x [64, 96] + bias + GELU, then + residual: rows cut along axis 0.
  auto xa = b.input("xa", {2, 24, 64});
  auto ra = b.input("ra", {2, 24, 96});
  auto ga = matmul_gelu(b, "a_", xa, {2, 24, 96}, 64, 10);
  b.output(b.op("Add", {ga, ra}, {}, "a_res"));
  auto na = gelu_nodes("a_");
  na.push_back("a_res");
  c.groups.push_back(make_group("fg-a", na));
  // B: [1, 40, 128] x [128, 256] + bias + GELU: rows cut along axis 1.
  auto xb = b.input("xb", {1, 40, 128});
  b.output(matmul_gelu(b, "b_", xb, {1, 40, 256}, 128, 20));
  c.groups.push_back(make_group("fg-b", gelu_nodes("b_")));
  // C: one row [1, 1, 256] x [256, 2048] + bias + GELU: column parts.
  auto xc = b.input("xc", {1, 1, 256});
  b.output(matmul_gelu(b, "c_", xc, {1, 1, 2048}, 256, 30));
  c.groups.push_back(make_group("fg-c", gelu_nodes("c_")));
  // D: MatMul + bias + LayerNorm over the last axis, its MatMul output also read
  // outside the group: [3, 16, 48] x [48, 80].
  auto xd = b.input("xd", {3, 16, 48});
  auto wd = b.constant("d_w", TensorData::from_floats({48, 80}, random_floats(48 * 80, 40)));
  auto bd = b.constant("d_b", TensorData::from_floats({80}, random_floats(80, 41)));
  auto gd = b.constant("d_g", TensorData::from_floats({80}, random_floats(80, 42)));
  auto md = b.op("MatMul", {xd, wd}, {}, "d_mm", Shape::of({3, 16, 80}));
  auto hd = b.op("Add", {md, bd}, {}, "d_bias");
  auto ln = b.op("LayerNormalization", {hd, gd}, {{"axis", int64_t{-1}}}, "d_ln");
  b.output(ln);
  b.output(b.op("Relu", {md}, {}, "d_outside"));
  c.groups.push_back(make_group("fg-d", {"d_mm", "d_bias", "d_ln"}));
  // E: one row with a LayerNorm epilogue: the epilogue cannot be cut (runs after the
  // column parts). [1, 512] x [512, 1024].
  auto xe = b.input("xe", {1, 512});
  auto we = b.constant("e_w", TensorData::from_floats({512, 1024}, random_floats(512 * 1024, 50)));
  auto ge = b.constant("e_g", TensorData::from_floats({1024}, random_floats(1024, 51)));
  auto me = b.op("MatMul", {xe, we}, {}, "e_mm", Shape::of({1, 1024}));
  b.output(b.op("LayerNormalization", {me, ge}, {{"axis", int64_t{-1}}}, "e_ln"));
  c.groups.push_back(make_group("fg-e", {"e_mm", "e_ln"}));
  // F: attention scores: a batch of [64, 32] x [32, 64] per head over 8 heads (both
  // operands inputs), / 8: parts cut the heads.
  auto qf = b.input("qf", {1, 8, 64, 32});
  auto kf = b.input("kf", {1, 8, 32, 64});
  auto mf = b.op("MatMul", {qf, kf}, {}, "f_mm", Shape::of({1, 8, 64, 64}));
  b.output(b.op("Div", {mf, scalar(b, "f_eight", 8.f)}, {}, "f_div"));
  c.groups.push_back(make_group("fg-f", {"f_mm", "f_div"}));
  c.g = b.build();
  c.inputs = {{"xa", testing::random_tensor({2, 24, 64}, 1)},
              {"ra", testing::random_tensor({2, 24, 96}, 2)},
              {"xb", testing::random_tensor({1, 40, 128}, 3)},
              {"xc", testing::random_tensor({1, 1, 256}, 4)},
              {"xd", testing::random_tensor({3, 16, 48}, 5)},
              {"xe", testing::random_tensor({1, 512}, 6)},
              {"qf", testing::random_tensor({1, 8, 64, 32}, 7)},
              {"kf", testing::random_tensor({1, 8, 32, 64}, 8)}};
  return c;
}

TEST(MatMulEpilogue, PartsWithTheirEpilogueMatchTheUnfusedRuntime) {
  Case c = make_case();
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("matmul_epilogue");
  opt.stem = "matmul_epilogue_test";
  // These epilogues have a oneDNN post-op form too (matmul_post_ops_test.cc): off, so
  // that the generated path is what runs here.
  opt.dnnl_post_ops = false;
  FusedProgram p = build_fused_program(c.g, testing::ptrs(c.groups), opt);
  ASSERT_TRUE(p.note.empty()) << p.note;
  for (const auto& gb : p.groups) {
    EXPECT_EQ(gb.outcome, GroupOutcome::Compiled) << gb.id << ": " << gb.detail;
    EXPECT_EQ(gb.detail, "MatMul in parts, each followed by the generated epilogue") << gb.id;
  }
  testing::expect_steps_match_unfused(c.g, p.steps, c.inputs);
}

TEST(MatMulEpilogue, NonConstantWeightsKeepTheRuntimeMatMul) {
  GraphBuilder b;
  auto x = b.input("x", {4, 8});
  auto w = b.input("w", {8, 6});
  auto mm = b.op("MatMul", {x, w}, {}, "mm", Shape::of({4, 6}));
  b.output(b.op("Relu", {mm}, {}, "relu"));
  Graph g = b.build();
  std::vector<FusionGroup> groups{testing::make_group("fg-w", {"mm", "relu"})};
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("matmul_epilogue_w");
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_TRUE(p.note.empty()) << p.note;
  const GroupBuild* gb = p.find("fg-w");
  ASSERT_NE(gb, nullptr);
  EXPECT_EQ(gb->outcome, GroupOutcome::Compiled);
  EXPECT_NE(gb->detail.find("runtime kernel + generated epilogue (the MatMul's weights are not "
                            "constant, nor a batch"),
            std::string::npos)
      << gb->detail;
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({4, 8}, 1)},
                                   {"w", testing::random_tensor({8, 6}, 2)}};
  EXPECT_LT(testing::compare(Executor(g).run(in), Executor(g, p.steps).run(in)).max_rel, 1e-5);
}

}  // namespace
}  // namespace fx
