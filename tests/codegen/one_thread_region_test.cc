// SPDX-License-Identifier: Apache-2.0
// A generated kernel called with one thread (the runtime calls it so on each slice it
// spreads over its pool, generated_kernel.cc) starts no OpenMP team: the region's body
// is called directly, and an OpenMP team is started only for threads > 1. Both paths
// compute what the unfused runtime computes, for an elementwise chain and a row kernel.

#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

Graph swish_then_softmax(const std::vector<int64_t>& dims) {
  GraphBuilder b;
  auto x = b.input("x", dims);
  auto s = b.op("Sigmoid", {x}, {}, "sig");
  auto m = b.op("Mul", {x, s}, {}, "swish");
  b.output(b.op("Softmax", {m}, {{"axis", int64_t{-1}}}, "softmax"));
  return b.build();
}

// The text of the function from `if (threads > 1)` on: the one-thread branch must call
// the region without any OpenMP construct of its own.
void expect_direct_call_for_one_thread(const std::string& src) {
  const auto branch = src.find(
      "  if (threads > 1) {\n#pragma omp parallel num_threads(threads)\n"
      "    region();\n  } else {\n    region();\n  }\n}");
  ASSERT_NE(branch, std::string::npos) << src;
  // The only `omp parallel` is the one under threads > 1.
  EXPECT_EQ(src.find("#pragma omp parallel"), src.find("#pragma omp parallel", branch)) << src;
}

TEST(OneThreadRegion, OneThreadCallsTheBodyDirectlyAndBothPathsMatchTheRuntime) {
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{1, 8, 1, 1}, std::vector<int64_t>{64, 1000}}) {
    SCOPED_TRACE(dims_str(dims));
    Graph g = swish_then_softmax(dims);
    std::vector<FusionGroup> groups{testing::make_group("fg-swish", {"sig", "swish"}),
                                    testing::make_group("fg-softmax", {"softmax"})};
    for (const auto& grp : groups) expect_direct_call_for_one_thread(generate_group_source(g, grp));
    CodegenOptions opt;
    opt.compiler.cache_dir = testing::test_cache_dir("one_thread_region");
    opt.stem = "one_thread_region_test";
    FusedProgram p = build_fused_program(g, testing::ptrs(groups), opt);
    ASSERT_TRUE(p.note.empty()) << p.note;
    for (const auto& pg : p.groups) ASSERT_EQ(pg.outcome, GroupOutcome::Compiled) << pg.detail;
    auto in = testing::seeded_inputs(g, 5);
    for (int threads : {1, 2}) {
      ExecutorOptions eo;
      eo.threads = threads;
      auto actual = Executor(g, p.steps, eo).run(in);
      auto expected = Executor(g, eo).run(in);
      const auto d = testing::compare(expected, actual);
      EXPECT_LT(d.max_rel, 1e-5) << threads << " threads, max abs " << d.max_abs;
    }
  }
}

}  // namespace
}  // namespace fx
