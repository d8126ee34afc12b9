// SPDX-License-Identifier: Apache-2.0
// What cuDNN and cuBLASLt are asked to compute, read from nodes: convolution and pooling
// geometry, MatMul batches and Gemm transposes, generated kernels' dims.

#include "cuda_plan/kernel_params.h"

#include <gtest/gtest.h>

#include "cuda_plan/launch_plan.h"
#include "cuda_plan_test_util.h"
#include "util/error.h"

namespace fx::cuda {
namespace {

TEST(KernelParams, ConvAndPoolGeometry) {
  const Graph g = testing::residual_cnn();
  const ConvParams c = conv_params(g, g.find_node("conv1"));
  EXPECT_EQ(c.n, 2);
  EXPECT_EQ(c.c, 8);
  EXPECT_EQ(c.k, 8);
  EXPECT_EQ(c.r, 3);
  EXPECT_EQ(c.pad, (std::array<int64_t, 2>{1, 1}));
  EXPECT_TRUE(c.has_bias);
  EXPECT_EQ(c.flops(), 2 * 2 * 8 * 16 * 16 * 8 * 9);
  EXPECT_FALSE(conv_params(g, g.find_node("conv2")).has_bias);
  const PoolParams p = pool_params(g, g.find_node("pool"));
  EXPECT_EQ(p.mode, PoolParams::Max);
  EXPECT_EQ(p.window, (std::array<int64_t, 2>{2, 2}));
  EXPECT_EQ(p.stride, (std::array<int64_t, 2>{2, 2}));
  EXPECT_EQ(p.out_h, 8);
  const PoolParams gap = pool_params(g, g.find_node("gap"));
  EXPECT_EQ(gap.mode, PoolParams::Average);
  EXPECT_EQ(gap.window, (std::array<int64_t, 2>{8, 8}));
}

TEST(KernelParams, BatchNormMergesTrailingDims) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4, 5, 3});
  std::vector<ValueId> ops = {x};
  for (const char* n : {"scale", "bias", "mean", "var"})
    ops.push_back(b.constant(n, testing::seeded({4}, 1)));
  b.output(b.op("BatchNormalization", ops, {{"epsilon", 1e-3f}}, "bn"));
  ops.pop_back();
  b.output(b.op("BatchNormalization", ops, {}, "bn_short"));
  const Graph g = b.build();
  const BatchNormParams p = batchnorm_params(g, g.find_node("bn"));
  EXPECT_EQ(p.n, 2);
  EXPECT_EQ(p.c, 4);
  EXPECT_EQ(p.h, 15);
  EXPECT_EQ(p.w, 1);
  EXPECT_NEAR(p.epsilon, 1e-3, 1e-9);
  EXPECT_THROW(batchnorm_params(g, g.find_node("bn_short")), Error);
}

TEST(KernelParams, GemmTransposeAndBias) {
  const Graph g = testing::residual_cnn();
  const MatmulParams m = matmul_params(g, g.find_node("fc"));
  EXPECT_EQ(m.m, 2);
  EXPECT_EQ(m.k, 8);
  EXPECT_EQ(m.n, 4);
  EXPECT_TRUE(m.trans_b);
  EXPECT_FALSE(m.trans_a);
  EXPECT_EQ(m.bias, g.find_value("bf"));
  EXPECT_EQ(m.batch, 1);
}

TEST(KernelParams, MatmulBatchesFoldOrStride) {
  const Graph g = testing::mlp_block();
  // [2,16,32] x [32,64]: the shared weight folds the batch into M.
  const MatmulParams a = matmul_params(g, g.find_node("mm1"));
  EXPECT_EQ(a.batch, 1);
  EXPECT_EQ(a.m, 32);
  EXPECT_EQ(a.k, 32);
  EXPECT_EQ(a.n, 64);
  GraphBuilder b;
  auto q = b.input("q", {2, 4, 8, 16});
  auto k = b.input("k", {2, 4, 16, 8});
  b.output(b.op("MatMul", {q, k}, {}, "qk", Shape::of({2, 4, 8, 8})));
  auto w = b.input("w", {8, 16});
  auto big = b.input("big", {3, 16, 8});
  b.output(b.op("MatMul", {w, big}, {}, "shared_a", Shape::of({3, 8, 8})));
  b.output(b.op("MatMul", {q, big}, {}, "bad", Shape::of({2, 4, 8, 8})));
  const Graph h = b.build();
  const MatmulParams qk = matmul_params(h, h.find_node("qk"));
  EXPECT_EQ(qk.batch, 8);
  EXPECT_EQ(qk.stride_a, 8 * 16);
  EXPECT_EQ(qk.stride_b, 16 * 8);
  const MatmulParams sa = matmul_params(h, h.find_node("shared_a"));
  EXPECT_EQ(sa.batch, 3);
  EXPECT_EQ(sa.stride_a, 0);
  EXPECT_EQ(sa.stride_b, 16 * 8);
  EXPECT_THROW(matmul_params(h, h.find_node("bad")), Error);
}

TEST(KernelParams, AsymmetricPadsAreRefusedByName) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 8, 8});
  auto w = b.constant("w", testing::seeded({2, 2, 3, 3}, 1));
  b.output(b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{0, 0, 1, 1}}}, "odd_conv",
                Shape::of({1, 2, 7, 7})));
  const Graph g = b.build();
  try {
    conv_params(g, g.find_node("odd_conv"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("odd_conv"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("asymmetric"), std::string::npos);
  }
}

TEST(KernelParams, GeneratedDimsFollowTheInputs) {
  const Graph g = testing::mlp_block();
  const LaunchPlan p = build_launch_plan(g, {});
  const Launch& add = p.launches[static_cast<std::size_t>(p.launch_of(g.find_node("add1")))];
  ASSERT_EQ(add.kind, LaunchKind::Generated);
  const auto dims = generated_dims(g, p.generated[static_cast<std::size_t>(add.generated)]);
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  EXPECT_EQ(numel, 2 * 16 * 64);
  EXPECT_EQ(dims.back(), 64);
}

}  // namespace
}  // namespace fx::cuda
