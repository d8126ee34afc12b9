// SPDX-License-Identifier: Apache-2.0
// The oneDNN primitives of a fused MatMul + bias are made on one OpenMP thread, as they
// run (runtime/dnnl_parts.h): oneDNN's gemm-based matmul sizes the OpenMP region of its
// bias pass by the thread count it was made under, so one made under the process's
// default (every core) and run on one thread per part starts an OpenMP team inside each
// part, every run. The test makes the program under two OpenMP threads and counts the
// process's threads around a fused run: the team would be a new one. Also: which cut
// (rows or columns) the fused kernel takes, and that both match the runtime.

#include <gtest/gtest.h>

#include <filesystem>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "codegen/codegen_test_util.h"
#include "fused_kernels/matmul_post_ops.h"
#include "ir/graph_builder.h"
#include "runtime/parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fx {
namespace {

int process_threads() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)e;
    ++n;
  }
  return n;
}

TEST(MatMulPostOpsThreads, FusedMatMulStartsNoOpenMpTeamWhenMadeUnderSeveral) {
#ifndef _OPENMP
  GTEST_SKIP() << "built without OpenMP";
#else
  if (!std::filesystem::exists("/proc/self/task")) GTEST_SKIP() << "no /proc/self/task";
  omp_set_num_threads(2);  // what a 2-core machine's process starts with
  GraphBuilder b;
  // Columns split in two parts (strided output: oneDNN's gemm-based matmul), as weights
  // over the L2 cache are (matmul_post_ops_split_rows).
  const int64_t m = 128, k = 128, l2 = l2_cache_bytes();
  const int64_t n = l2 > 0 ? l2 / (4 * k) + 64 : 512;
  ASSERT_FALSE(matmul_post_ops_split_rows(m, k, n, 2, false, l2));
  auto x = b.input("x", {m, k});
  auto mm =
      b.op("MatMul", {x, testing::random_constant(b, "w", {k, n}, 3)}, {}, "mm", Shape::of({m, n}));
  b.output(b.op("Add", {mm, testing::random_constant(b, "bias", {n}, 4)}, {}, "bias_add"));
  Graph g = b.build();
  FusedProgram p = testing::post_op_program(g, {testing::make_group("fg", {"mm", "bias_add"})});
  ASSERT_EQ(omp_get_max_threads(), 2) << "building the program must not change the caller's";
  auto in = testing::seeded_inputs(g, 7);
  auto expected = Executor(g, ExecutorOptions{2}).run(in);  // starts the pool's worker
  Executor fused(g, p.steps, ExecutorOptions{2});
  const int before = process_threads();
  testing::expect_two_runs_match(fused, in, expected, "2 threads");
  EXPECT_EQ(process_threads(), before) << "a fused run started threads (an OpenMP team)";
#endif
}

// Rows or columns (matmul_post_ops_split_rows): rows whenever the epilogue reads a tensor;
// otherwise only while the weights fit in the L2 cache and the rows give as many parts.
TEST(MatMulPostOpsThreads, RowsWhenTheWeightsFitInL2OrTheEpilogueReadsATensor) {
  const int64_t l2 = 1 << 20;
  EXPECT_TRUE(matmul_post_ops_split_rows(128, 128, 512, 2, false, l2));   // 256 KiB
  EXPECT_FALSE(matmul_post_ops_split_rows(128, 768, 768, 2, false, l2));  // 2.25 MiB
  EXPECT_TRUE(matmul_post_ops_split_rows(128, 768, 768, 2, true, l2));
  EXPECT_FALSE(matmul_post_ops_split_rows(128, 128, 512, 2, false, 0));  // L2 unknown
  // One row cannot be split: the columns give the parts (4 MiB of weights in a 4 MiB L2).
  EXPECT_FALSE(matmul_post_ops_split_rows(1, 1024, 1024, 2, false, 4 * l2));
  EXPECT_TRUE(matmul_post_ops_split_rows(1, 1024, 1024, 1, false, 4 * l2));
}

// Both cuts compute what the unfused runtime does, with a bias and an eltwise post-op:
// weights that fit in L2 (rows) and weights over it (columns), on 1 to 3 threads.
TEST(MatMulPostOpsThreads, RowAndColumnPartsMatchTheRuntime) {
  const int64_t l2 = l2_cache_bytes();
  for (int64_t n : {int64_t{256}, l2 > 0 ? l2 / (4 * 64) + 64 : int64_t{8192}}) {
    SCOPED_TRACE("N " + std::to_string(n));
    const int64_t m = 96, k = 64;
    GraphBuilder b;
    auto x = b.input("x", {m, k});
    auto mm = b.op("MatMul", {x, testing::random_constant(b, "w", {k, n}, 5)}, {}, "mm",
                   Shape::of({m, n}));
    auto h = b.op("Add", {mm, testing::random_constant(b, "bias", {n}, 6)}, {}, "bias_add");
    b.output(b.op("Tanh", {h}, {}, "tanh"));
    Graph g = b.build();
    FusedProgram p =
        testing::post_op_program(g, {testing::make_group("fg", {"mm", "bias_add", "tanh"})});
    testing::expect_steps_match_unfused(g, p.steps, testing::seeded_inputs(g, 9));
  }
}

// Rows pay only where oneDNN applies the epilogue in registers (its brgemm matmul); where
// it picks another implementation for the row parts (its gemm-based matmul, below
// AVX-512), the fused kernel cuts the columns, as the runtime's MatMul does. ctest runs
// this again with oneDNN capped at AVX2 and at AVX512_CORE (matmul_cut_on_<ISA>).
TEST(MatMulPostOpsThreads, RowsOnlyWhereOneDnnAppliesTheEpilogueInRegisters) {
  const int64_t l2 = l2_cache_bytes();
  const int64_t m = 128, k = 128, n = 512;  // 256 KiB of weights
  if (!matmul_post_ops_split_rows(m, k, n, 2, false, l2))
    GTEST_SKIP() << "the L2 cache (" << l2 << " bytes) does not hold the weights";
  // What oneDNN picks for one row part with a bias and GELU.
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::post_ops po;
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::matmul::primitive_desc probe(
      dnnl::matmul::desc({{m / 2, k}, dt::f32, tag::ab}, {{k, n}, dt::f32, tag::any},
                         {{1, n}, dt::f32, tag::ab}, {{m / 2, n}, dt::f32, tag::ab}),
      attr, eng);
  const bool rows = std::string(probe.impl_info_str()).rfind("brg", 0) == 0;

  GraphBuilder b;
  auto x = b.input("x", {m, k});
  auto mm =
      b.op("MatMul", {x, testing::random_constant(b, "w", {k, n}, 3)}, {}, "mm", Shape::of({m, n}));
  auto h = b.op("Add", {mm, testing::random_constant(b, "bias", {n}, 4)}, {}, "bias_add");
  b.output(b.op("Relu", {h}, {}, "relu"));
  Graph g = b.build();
  FusedProgram p =
      testing::post_op_program(g, {testing::make_group("fg", {"mm", "bias_add", "relu"})});
  auto in = testing::seeded_inputs(g, 11);
  Executor fused(g, p.steps, ExecutorOptions{2});
  dnnl::set_verbose(2);
  ::testing::internal::CaptureStdout();
  fused.run(in);
  dnnl::set_verbose(0);
  const std::string log = ::testing::internal::GetCapturedStdout();
  const std::string row_part = std::to_string(m / 2) + "x" + std::to_string(k) + ":";
  const std::string column_part = std::to_string(k) + "x" + std::to_string(n / 2) + ":";
  EXPECT_EQ(log.find(row_part) != std::string::npos, rows) << probe.impl_info_str() << "\n" << log;
  EXPECT_EQ(log.find(column_part) != std::string::npos, !rows) << probe.impl_info_str() << "\n"
                                                               << log;
  testing::expect_steps_match_unfused(g, p.steps, in);
}

}  // namespace
}  // namespace fx
