// SPDX-License-Identifier: Apache-2.0
// Every kernel a launch plan needs that is not a library call compiles with nvcc, and
// the built library exports each entry point the executor looks up (loading needs the
// CUDA runtime library only, not a GPU). Skipped by name where nvcc is not installed.

#include "cuda_plan/cuda_source.h"

#include <gtest/gtest.h>

#include "cuda_plan/cuda_compile.h"
#include "cuda_plan_test_util.h"
#include "util/error.h"

namespace fx::cuda {
namespace {

TEST(CudaSource, HasEveryGeneratedEntryAndTheCopyKernels) {
  const Graph g = testing::mlp_block();
  const LaunchPlan p = build_launch_plan(g, {});
  const std::string src = launch_plan_cuda_source(p);
  ASSERT_FALSE(p.generated.empty());
  for (const auto& lg : p.generated)
    EXPECT_NE(src.find("extern \"C\" int " + lg.entry + "_cuda("), std::string::npos) << lg.entry;
  EXPECT_NE(src.find("extern \"C\" int fx_strided_copy("), std::string::npos);
  EXPECT_NE(src.find("extern \"C\" int fx_gather("), std::string::npos);
}

TEST(CudaSource, UnfusedAndFusedPlansCompileWithNvccAndExportTheirEntries) {
  std::string why;
  if (find_nvcc(&why).empty()) GTEST_SKIP() << why;
  const Graph cnn = testing::residual_cnn(), mlp = testing::mlp_block();
  const FusionGroup soft = testing::group_of(mlp, "fg-soft", {"scale", "softmax"}, "softmax");
  const FusionGroup tail = testing::group_of(mlp, "fg-tail", {"mm2", "add2", "scale"}, "auto");
  // Both models' kernels in one library: one nvcc run.
  LaunchPlan a = build_launch_plan(cnn, {}), b = build_launch_plan(mlp, {}),
             c = build_launch_plan(mlp, {&soft});
  LaunchPlan d = build_launch_plan(mlp, {&tail});
  LaunchPlan all;
  int k = 0;
  for (LaunchPlan* p : {&a, &b, &c, &d}) {
    for (LoweredGroup lg : p->generated) {
      lg.entry += "_p" + std::to_string(k);  // plans number their kernels alike
      all.generated.push_back(lg);
    }
    ++k;
  }
  auto lib = build_cuda_library(launch_plan_cuda_source(all), "cuda-plan-test", "sm_90");
  for (const auto& lg : all.generated) EXPECT_NE(lib->raw_symbol(lg.entry + "_cuda"), nullptr);
  EXPECT_NE(lib->raw_symbol("fx_strided_copy"), nullptr);
  EXPECT_NE(lib->raw_symbol("fx_gather"), nullptr);
  EXPECT_NE(lib->raw_symbol("fx_compare"), nullptr);
}

TEST(CudaSource, ACompileErrorNamesTheSourceLine) {
  std::string why;
  if (find_nvcc(&why).empty()) GTEST_SKIP() << why;
  try {
    build_cuda_library("__global__ void k() { this is not cuda; }\n", "cuda-plan-bad", "sm_90");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compiling generated kernels failed"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fx::cuda
