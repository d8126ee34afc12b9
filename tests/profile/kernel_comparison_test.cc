// SPDX-License-Identifier: Apache-2.0
#include "profile/kernel_comparison.h"

#include <gtest/gtest.h>

namespace fx {
namespace {

KernelStats k(std::string name, std::vector<std::string> nodes, std::string op, double us) {
  KernelStats s;
  s.name = std::move(name);
  s.nodes = std::move(nodes);
  s.op_types = {std::move(op)};
  s.median_us = us;
  return s;
}

TEST(KernelComparison, MatchesByNodesAndGroupsAFusedKernelWithWhatItReplaced) {
  // A: unfused conv, bn, relu, fc. B: conv+bn+relu fused into one kernel, fc, and a
  // kernel A does not have.
  std::vector<KernelStats> a = {k("conv", {"conv"}, "Conv", 100),
                                k("bn", {"bn"}, "BatchNormalization", 30),
                                k("relu", {"relu"}, "Relu", 20), k("fc", {"fc"}, "Gemm", 10)};
  KernelStats fused = k("fused_0", {"conv", "bn", "relu"}, "Conv", 110);
  fused.op_types = {"Conv", "BatchNormalization", "Relu"};
  std::vector<KernelStats> b = {fused, k("fc", {"fc"}, "Gemm", 12), k("extra", {}, "Copy", 5)};

  auto rows = compare_kernels(a, b);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].kernels_a, (std::vector<std::string>{"conv", "bn", "relu"}));
  EXPECT_EQ(rows[0].kernels_b, std::vector<std::string>{"fused_0"});
  EXPECT_DOUBLE_EQ(rows[0].a_us, 150);
  EXPECT_DOUBLE_EQ(rows[0].b_us, 110);
  EXPECT_NEAR(rows[0].ratio(), 110.0 / 150.0, 1e-12);
  EXPECT_EQ(rows[0].op_types, (std::vector<std::string>{"Conv", "BatchNormalization", "Relu"}));
  EXPECT_EQ(rows[1].kernels_a, std::vector<std::string>{"fc"});
  EXPECT_NEAR(rows[1].ratio(), 1.2, 1e-12);
  EXPECT_TRUE(rows[2].kernels_a.empty());  // only in B, keyed by its name
  EXPECT_EQ(rows[2].kernels_b, std::vector<std::string>{"extra"});
  EXPECT_DOUBLE_EQ(rows[2].ratio(), 0);

  std::string text = format_comparison_table(rows, "fxc", "ort");
  EXPECT_NE(text.find("conv + bn + relu"), std::string::npos) << text;
  EXPECT_NE(text.find("0.73x"), std::string::npos) << text;
  EXPECT_NE(text.find("0 row(s) only in fxc, 1 only in ort"), std::string::npos) << text;
}

}  // namespace
}  // namespace fx
