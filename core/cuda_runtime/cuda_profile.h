// SPDX-License-Identifier: Apache-2.0
#pragma once
// `fxc profile --device cuda[:N]`: a model on the GPU, kernel by kernel, in the CPU
// profiler's result types (so profile_json / before_after_json, the Chrome trace and the
// GUI read it as they read a CPU run).
//
//   cuda_profile        the unfused plan, timed
//   cuda_before_after   unfused and fused plans on the same seeded inputs, timed in
//                       alternation; both runs' outputs compared with the CPU runtime's
//                       on those inputs (and the result says so), per group: the
//                       members' kernels before minus the group's kernels after
//
// Per-kernel times are CUDA events around each launch (one stream); CUPTI activity
// records are not used.

#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "profile/before_after.h"
#include "profile/profiler.h"

namespace fx::cuda {

struct CudaProfileOptions {
  int device = 0;
  int runs = 20, warmup = 5;
  uint64_t seed = 0;
  int64_t opset = 0;
  int cpu_threads = 0;         // the CPU reference run
  std::string stem = "model";  // names the kernel library in the cache
  Tolerance tolerance;
  bool compare_with_cpu = true;
};

ProfileResult cuda_profile(const Graph& graph, const CudaProfileOptions& options);
BeforeAfterResult cuda_before_after(const Graph& graph,
                                    const std::vector<const FusionGroup*>& groups,
                                    const CudaProfileOptions& options);

}  // namespace fx::cuda
