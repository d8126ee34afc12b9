// SPDX-License-Identifier: Apache-2.0
// Generated C++ kernels against the runtime's unfused result: an elementwise chain
// with broadcasting, a decomposed LayerNorm and an ONNX LayerNormalization (row
// kernels), scale + mask + Softmax (row kernel), and a MatMul anchor with a generated
// epilogue. All groups of the graph go into one translation unit: one compile.

#include <gtest/gtest.h>

#include "codegen/cpp_emitter.h"
#include "codegen/kernel_ir.h"
#include "codegen_test_util.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

using testing::random_floats;

using Ints = std::vector<int64_t>;

Graph kernels_graph() {
  GraphBuilder b;
  // A: elementwise chain with a per-channel broadcast and a scalar literal.
  auto x = b.input("x", {4, 64, 33});
  auto bias = b.constant("bias", TensorData::from_floats({64, 1}, random_floats(64, 7)));
  auto half = b.constant("half", TensorData::from_floats({}, {0.5f}));
  auto a1 = b.op("Add", {x, bias}, {}, "ew_add");
  auto a2 = b.op("Mul", {a1, half}, {}, "ew_scale");
  auto a3 = b.op("Sigmoid", {a2}, {}, "ew_sig");
  auto a4 = b.op("Mul", {a2, a3}, {}, "ew_swish");
  b.output(b.op("LeakyRelu", {a4}, {{"alpha", 0.1f}}, "ew_leaky"));
  // B: LayerNorm as ONNX exporters decompose it.
  auto h = b.input("h", {6, 100});
  auto two = b.constant("two", TensorData::from_floats({}, {2.f}));
  auto eps = b.constant("eps", TensorData::from_floats({}, {1e-5f}));
  auto gamma = b.constant("gamma", TensorData::from_floats({100}, random_floats(100, 8)));
  auto beta = b.constant("beta", TensorData::from_floats({100}, random_floats(100, 9)));
  auto axes = AttributeValue(Ints{-1});
  auto mean = b.op("ReduceMean", {h}, {{"axes", axes}}, "ln_mean", Shape::of({6, 1}));
  auto d = b.op("Sub", {h, mean}, {}, "ln_sub");
  auto sq = b.op("Pow", {d, two}, {}, "ln_pow");
  auto var = b.op("ReduceMean", {sq}, {{"axes", axes}}, "ln_var", Shape::of({6, 1}));
  auto sd = b.op("Sqrt", {b.op("Add", {var, eps}, {}, "ln_add_eps")}, {}, "ln_sqrt");
  auto n = b.op("Div", {d, sd}, {}, "ln_div");
  b.output(b.op("Add", {b.op("Mul", {n, gamma}, {}, "ln_mul"), beta}, {}, "ln_add"));
  // C: attention scores: scale + mask + Softmax.
  auto s = b.input("s", {2, 3, 5, 7});
  auto mask =
      b.constant("mask", TensorData::from_floats({1, 1, 5, 7}, random_floats(35, 10, -4, 0)));
  auto scale = b.constant("scale", TensorData::from_floats({}, {0.125f}));
  auto c1 = b.op("Mul", {s, scale}, {}, "sm_scale");
  auto c2 = b.op("Add", {c1, mask}, {}, "sm_mask");
  b.output(b.op("Softmax", {c2}, {{"axis", int64_t{-1}}}, "sm_softmax"));
  // D: ONNX LayerNormalization + Relu.
  auto u = b.input("u", {3, 4, 50});
  auto g2 = b.constant("g2", TensorData::from_floats({50}, random_floats(50, 11)));
  auto b2 = b.constant("b2", TensorData::from_floats({50}, random_floats(50, 12)));
  auto ln = b.op("LayerNormalization", {u, g2, b2}, {{"axis", int64_t{-1}}}, "lnorm");
  b.output(b.op("Relu", {ln}, {}, "lnorm_relu"));
  // E: MatMul anchor + bias + erf-GELU epilogue.
  auto m = b.input("m", {5, 16});
  auto wm = b.constant("wm", TensorData::from_floats({16, 24}, random_floats(384, 13)));
  auto bm = b.constant("bm", TensorData::from_floats({24}, random_floats(24, 14)));
  auto mm = b.op("MatMul", {m, wm}, {}, "mm", Shape::of({5, 24}));
  b.output(b.op("Gelu", {b.op("Add", {mm, bm}, {}, "mm_bias")}, {}, "mm_gelu"));
  return b.build();
}

std::vector<FusionGroup> kernel_groups() {
  using testing::make_group;
  return {make_group("fg-chain", {"ew_add", "ew_scale", "ew_sig", "ew_swish", "ew_leaky"}),
          make_group("fg-layernorm", {"ln_mean", "ln_sub", "ln_pow", "ln_var", "ln_add_eps",
                                      "ln_sqrt", "ln_div", "ln_mul", "ln_add"}),
          make_group("fg-softmax", {"sm_scale", "sm_mask", "sm_softmax"}),
          make_group("fg-lnorm", {"lnorm", "lnorm_relu"}),
          make_group("fg-matmul", {"mm", "mm_bias", "mm_gelu"})};
}

std::map<std::string, Tensor> kernel_inputs() {
  return {{"x", testing::random_tensor({4, 64, 33}, 1)},
          {"h", testing::random_tensor({6, 100}, 2)},
          {"s", testing::random_tensor({2, 3, 5, 7}, 3)},
          {"u", testing::random_tensor({3, 4, 50}, 4)},
          {"m", testing::random_tensor({5, 16}, 5)}};
}

TEST(GeneratedSource, NamesTheOriginalNodes) {
  Graph g = kernels_graph();
  auto groups = kernel_groups();
  std::string src = generate_group_source(g, groups[1]);
  for (const auto& n : groups[1].nodes) EXPECT_NE(src.find(n), std::string::npos) << n;
  EXPECT_NE(src.find("extern \"C\" void fx_fg_layernorm("), std::string::npos);
  EXPECT_NE(src.find("#pragma omp simd reduction(+:"), std::string::npos);
  // The chain is one loop nest: one simd loop (after the prelude's helpers), no row
  // buffers.
  std::string chain = generate_group_source(g, groups[0]);
  std::size_t loops = 0;
  for (std::size_t p = chain.find("#pragma omp simd", chain.find("// ---- fused group"));
       p != std::string::npos; p = chain.find("#pragma omp simd", p + 1))
    ++loops;
  EXPECT_EQ(loops, 1u);
  EXPECT_EQ(chain.find("scratch"), std::string::npos);
}

TEST(LowerGroup, ExplainsWhatItCannotEmit) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto y = b.op("Transpose", {x}, {}, "tr", Shape::of({3, 2}));
  b.output(b.op("Relu", {y}, {}, "r"));
  Graph g = b.build();
  auto r = lower_group(g, {g.find_node("tr"), g.find_node("r")}, "fg-x", "fx_x");
  EXPECT_FALSE(r.group);
  EXPECT_NE(r.reason.find("Transpose"), std::string::npos);
}

TEST(GeneratedKernels, MatchTheUnfusedRuntimeAndAreCached) {
  Graph g = kernels_graph();
  auto groups = kernel_groups();
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("kernels");
  opt.stem = "kernels_test";
  opt.dnnl_post_ops = false;
  std::filesystem::remove_all(opt.compiler.cache_dir);
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_TRUE(p.note.empty()) << p.note;
  for (const auto& gb : p.groups) {
    EXPECT_EQ(gb.outcome, GroupOutcome::Compiled) << gb.id << ": " << gb.detail;
  }
  EXPECT_EQ(p.find("fg-matmul")->detail,
            "MatMul in parts, each followed by the generated epilogue");
  EXPECT_FALSE(p.cache_hit);
  auto in = kernel_inputs();
  auto expected = Executor(g).run(in);
  auto actual = Executor(g, p.steps).run(in);
  ASSERT_EQ(expected.size(), actual.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    auto d = testing::compare({expected[i]}, {actual[i]});
    EXPECT_LT(d.max_rel, 1e-5) << "output " << i << " max abs " << d.max_abs;
  }
  // Second build: same source, same flags -> no compiler run, library from the cache.
  int before = KernelCompiler::compilations();
  FusedProgram again = build_fused_program(g, testing::ptrs(groups), opt);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(KernelCompiler::compilations(), before);
  EXPECT_EQ(again.library_path, p.library_path);
  auto third = Executor(g, again.steps).run(in);
  EXPECT_LT(testing::compare(expected, third).max_rel, 1e-5);
}

// An elementwise group writes its output over an input of its shape that dies there
// (as an unfused unary op does): x -> Exp -> e; group {Mul(e, s), Add(., b), Relu} reads
// e for the last time, so its output takes e's slot, and the outputs still match.
TEST(GeneratedKernels, ElementwiseGroupWritesOverItsDyingInput) {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 300});
  const ValueId e = b.op("Exp", {x}, {}, "exp");
  const ValueId s = testing::random_constant(b, "s", {300}, 5);
  const ValueId c = testing::random_constant(b, "c", {1}, 6);
  const ValueId m = b.op("Mul", {e, s}, {}, "mul");
  const ValueId a = b.op("Add", {m, c}, {}, "add");
  const ValueId y = b.op("Relu", {a}, {}, "relu");
  b.output(y);
  Graph g = b.build();
  std::vector<FusionGroup> groups{testing::make_group("fg-ew", {"mul", "add", "relu"})};
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("over_input");
  opt.stem = "over_input_test";
  opt.dnnl_post_ops = false;
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_TRUE(p.note.empty()) << p.note;
  ASSERT_EQ(p.find("fg-ew")->outcome, GroupOutcome::Compiled) << p.find("fg-ew")->detail;
  const std::map<std::string, Tensor> in{
      {"x", Tensor::from_floats({4, 300}, testing::random_floats(1200, 7))}};
  for (int threads : {1, 2}) {
    Executor fused(g, p.steps, ExecutorOptions{threads});
    EXPECT_GE(fused.slot_of(e), 0);
    EXPECT_EQ(fused.slot_of(y), fused.slot_of(e));
    const auto expected = Executor(g, ExecutorOptions{threads}).run(in);
    const auto actual = fused.run(in);
    EXPECT_LT(testing::compare(expected, actual).max_rel, 1e-5) << "threads " << threads;
  }
}

TEST(GeneratedKernels, WithoutACompilerGroupsRunThroughRuntimeKernels) {
  Graph g = kernels_graph();
  auto groups = kernel_groups();
  CodegenOptions opt;
  opt.compiler.compiler = "/nonexistent/c++";
  opt.compiler.cache_dir = testing::test_cache_dir("nocompiler");
  // The MatMul group would run as oneDNN post-ops, which need no compiler
  // (matmul_post_ops_test.cc); here every group needs one.
  opt.dnnl_post_ops = false;
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  EXPECT_NE(p.note.find("no C++ compiler found"), std::string::npos) << p.note;
  for (const auto& gb : p.groups) {
    EXPECT_EQ(gb.outcome, GroupOutcome::Excluded) << gb.id;
    EXPECT_NE(gb.detail.find("no C++ compiler"), std::string::npos);
  }
  auto in = kernel_inputs();
  EXPECT_LT(testing::compare(Executor(g).run(in), Executor(g, p.steps).run(in)).max_rel, 1e-6);
  // Nothing fused: the members stay one step per node.
  EXPECT_EQ(p.steps.size(), g.node_count());
  for (const auto& gb : p.groups) EXPECT_FALSE(gb.step) << gb.id;
}

TEST(KernelCompiler, CompileErrorNamesGeneratedFileAndLine) {
  CompilerOptions co;
  co.cache_dir = testing::test_cache_dir("broken");
  KernelCompiler cc(co);
  ASSERT_TRUE(cc.compiler()) << cc.why_unavailable();
  std::string src = "extern \"C\" void f() {\n  int x = 1;\n  this is not C++;\n}\n";
  try {
    cc.build(src, "broken");
    FAIL() << "expected a compile error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("broken-" + cc.cache_key(src) + ".cc:3:"), std::string::npos) << m;
  }
}

TEST(KernelCompiler, ParsesFirstErrorLine) {
  std::string out =
      "/tmp/k.cc: In function 'void f()':\n/tmp/k.cc:12:5: error: 'y' was not declared\n"
      "/tmp/k.cc:14:1: error: second\n";
  EXPECT_EQ(first_compiler_error(out), "/tmp/k.cc:12: 'y' was not declared");
  EXPECT_EQ(first_compiler_error("no errors here"), "");
}

}  // namespace
}  // namespace fx

namespace fx {
namespace {

// A group with an op that has no emitter in the middle (Transpose): the runs of
// emittable members on either side become generated parts "<id>.1" and "<id>.2"; the
// Transpose stays an unfused step; the result matches the unfused run.
TEST(GeneratedKernels, GroupsThatCannotBeGeneratedWholeAreSplit) {
  GraphBuilder b;
  auto x = b.input("x", {3, 8, 16});
  auto half = b.constant("half", TensorData::from_floats({}, {0.5f}));
  auto y = b.op("Mul", {x, half}, {}, "s_scale");
  y = b.op("Tanh", {y}, {}, "s_tanh");
  y = b.op("Transpose", {y}, {{"perm", Ints{0, 2, 1}}}, "s_transpose", Shape::of({3, 16, 8}));
  y = b.op("Sigmoid", {y}, {}, "s_sig");
  b.output(b.op("Mul", {y, half}, {}, "s_half"));
  Graph g = b.build();
  std::vector<FusionGroup> groups{
      testing::make_group("fg-split", {"s_scale", "s_tanh", "s_transpose", "s_sig", "s_half"})};
  CodegenOptions opt;
  opt.compiler.cache_dir = testing::test_cache_dir("split");
  FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
  ASSERT_EQ(p.groups.size(), 3u);
  EXPECT_EQ(p.groups[0].outcome, GroupOutcome::Excluded);
  EXPECT_FALSE(p.groups[0].step);
  EXPECT_NE(p.groups[0].detail.find("fg-split.1 fg-split.2"), std::string::npos)
      << p.groups[0].detail;
  const GroupBuild* p1 = p.find("fg-split.1");
  const GroupBuild* p2 = p.find("fg-split.2");
  ASSERT_TRUE(p1 && p2);
  EXPECT_EQ(p1->outcome, GroupOutcome::Compiled) << p1->detail;
  EXPECT_EQ(p1->nodes, (std::vector<std::string>{"s_scale", "s_tanh"}));
  EXPECT_EQ(p2->nodes, (std::vector<std::string>{"s_sig", "s_half"}));
  EXPECT_EQ(p.steps.size(), 3u);  // part 1, the Transpose, part 2
  std::map<std::string, Tensor> in{{"x", testing::random_tensor({3, 8, 16}, 5)}};
  EXPECT_LT(testing::compare(Executor(g).run(in), Executor(g, p.steps).run(in)).max_abs, 1e-6);
  // The source shown for the group (Generate dock, `fxc codegen`, kernel export) is
  // what runs: both parts, and the member left to its runtime kernel named.
  const std::string src = generate_group_source(g, groups[0]);
  EXPECT_NE(src.find("// part fg-split.1: Mul+Tanh"), std::string::npos) << src;
  EXPECT_NE(src.find("// part fg-split.2: Sigmoid+Mul"), std::string::npos) << src;
  EXPECT_NE(src.find("extern \"C\" void " + p1->entry + "("), std::string::npos) << src;
  EXPECT_NE(src.find("extern \"C\" void " + p2->entry + "("), std::string::npos) << src;
  EXPECT_NE(src.find("s_transpose (Transpose)"), std::string::npos) << src;
  // Without splitting nothing is fused.
  opt.split = false;
  EXPECT_EQ(build_fused_program(g, testing::ptrs(groups), opt).steps.size(), g.node_count());
}

}  // namespace
}  // namespace fx
