// SPDX-License-Identifier: Apache-2.0
#include "profile/flop_counter.h"

#include <gtest/gtest.h>

namespace fx {
namespace {

TEST(FlopCounter, ConvCountsMultiplyAddsPerOutputAndBias) {
  Attributes none;
  // 4 output channels x 8x8 outputs, each 3 in-channels x 3x3 taps.
  EXPECT_EQ(count_flops("Conv", none, {{1, 3, 8, 8}, {4, 3, 3, 3}}, {{1, 4, 8, 8}}), 256 * 2 * 27);
  EXPECT_EQ(count_flops("Conv", none, {{1, 3, 8, 8}, {4, 3, 3, 3}, {4}}, {{1, 4, 8, 8}}),
            256 * (2 * 27 + 1));
  // Depthwise: weight [C, 1, k, k] -> one input channel per output.
  EXPECT_EQ(count_flops("Conv", none, {{1, 8, 4, 4}, {8, 1, 3, 3}}, {{1, 8, 4, 4}}), 128 * 18);
}

TEST(FlopCounter, MatMulAndGemm) {
  Attributes none;
  EXPECT_EQ(count_flops("MatMul", none, {{2, 3, 4}, {4, 5}}, {{2, 3, 5}}), 2 * 30 * 4);
  Attributes trans_a;
  trans_a.set("transA", int64_t{1});
  // A is [K, M] = [7, 3] when transposed.
  EXPECT_EQ(count_flops("Gemm", trans_a, {{7, 3}, {7, 5}, {5}}, {{3, 5}}), 2 * 15 * 7 + 15);
}

TEST(FlopCounter, ElementwiseReductionsPoolsAndDataMovement) {
  Attributes none;
  EXPECT_EQ(count_flops("Relu", none, {{2, 8}}, {{2, 8}}), 16);
  EXPECT_EQ(count_flops("Add", none, {{2, 8}, {8}}, {{2, 8}}), 16);
  EXPECT_EQ(count_flops("ReduceMean", none, {{2, 8}}, {{2, 1}}), 16);
  Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{3, 3});
  EXPECT_EQ(count_flops("MaxPool", pool, {{1, 2, 8, 8}}, {{1, 2, 4, 4}}), 32 * 9);
  EXPECT_EQ(count_flops("Transpose", none, {{2, 8}}, {{8, 2}}), 0);
  EXPECT_EQ(count_flops("SomeCustomOp", none, {{2, 8}}, {{8, 2}}), 0);
}

}  // namespace
}  // namespace fx
