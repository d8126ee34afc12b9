// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's source for a chain, a LayerNorm row kernel and a Softmax row
// kernel compiles with nvcc. Skipped by name where nvcc is not installed; running the
// kernels needs a GPU and is not part of this suite.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "codegen/cuda_emitter.h"
#include "codegen/kernel_ir.h"
#include "codegen_test_util.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

std::string find_nvcc() {
  for (const char* p : {"/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc"})
    if (std::filesystem::exists(p)) return p;
  return {};
}

TEST(CudaBackend, GeneratedSourceCompilesWithNvcc) {
  GraphBuilder b;
  auto x = b.input("x", {8, 128});
  auto half = b.constant("half", TensorData::from_floats({}, {0.5f}));
  auto bias = b.constant("bias", TensorData::from_floats({128}, testing::random_floats(128, 1)));
  auto y = b.op("Relu", {b.op("Mul", {b.op("Add", {x, bias}, {}, "c_add"), half}, {}, "c_mul")}, {},
                "c_relu");
  b.output(y);
  auto ln = b.op("LayerNormalization", {x, bias, bias}, {{"axis", int64_t{-1}}}, "ln");
  b.output(ln);
  b.output(b.op("Softmax", {b.op("Mul", {x, half}, {}, "s_scale")}, {{"axis", int64_t{-1}}},
                "s_softmax"));
  Graph g = b.build();
  std::vector<LoweredGroup> groups;
  auto lower = [&](std::vector<std::string> names, const std::string& id) {
    std::vector<NodeId> ids;
    for (const auto& n : names) ids.push_back(g.find_node(n));
    auto r = lower_group(g, ids, id, c_identifier(id));
    ASSERT_TRUE(r.group) << r.reason;
    groups.push_back(*r.group);
  };
  lower({"c_add", "c_mul", "c_relu"}, "fg-chain");
  lower({"ln"}, "fg-ln");
  lower({"s_scale", "s_softmax"}, "fg-softmax");
  std::string src = emit_cuda_source(groups);
  EXPECT_NE(src.find("extern \"C\" int fx_fg_ln_cuda("), std::string::npos);
  EXPECT_NE(src.find("//   node s_softmax"), std::string::npos);
  EXPECT_NE(src.find("fx_block_max"), std::string::npos);
  // Softmax's exp of x - rowmax (<= 0) goes through fx_expf_le0, defined for CUDA too.
  EXPECT_NE(src.find("fx_expf_le0(v"), std::string::npos);
  EXPECT_NE(src.find("__device__ inline float fx_expf_le0("), std::string::npos);
  std::string nvcc = find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found";
  std::string dir = testing::test_cache_dir("cuda");
  std::string cu = dir + "/kernels.cu", so = dir + "/kernels.so", log = dir + "/nvcc.log";
  std::ofstream(cu) << src;
  std::string cmd =
      nvcc + " -O3 -std=c++17 -Xcompiler -fPIC -shared -o " + so + " " + cu + " > " + log + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream lf(log);
  std::string out((std::istreambuf_iterator<char>(lf)), {});
  EXPECT_EQ(rc, 0) << out;
  EXPECT_TRUE(std::filesystem::exists(so));
}

}  // namespace
}  // namespace fx
