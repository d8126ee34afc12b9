// SPDX-License-Identifier: Apache-2.0
// The oneDNN primitives of a fused MatMul + bias are made on one OpenMP thread, as they
// run (runtime/dnnl_parts.h): oneDNN's gemm-based matmul sizes the OpenMP region of its
// bias pass by the thread count it was made under, so one made under the process's
// default (every core) and run on one thread per part starts an OpenMP team inside each
// part, every run. The test makes the program under two OpenMP threads and counts the
// process's threads around a fused run: the team would be a new one.

#include <gtest/gtest.h>

#include <filesystem>

#include "codegen/codegen_test_util.h"
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
  // Columns split in two parts (strided output): oneDNN's gemm-based matmul.
  const int64_t m = 128, k = 128, n = 512;
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

}  // namespace
}  // namespace fx
