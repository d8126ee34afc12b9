// SPDX-License-Identifier: Apache-2.0
// Output comparison with ONNX's tolerances (rtol 1e-3, atol 1e-5).

#include <gtest/gtest.h>

#include <cmath>

#include "profile/equivalence.h"

namespace fx {
namespace {

Tensor floats(std::vector<float> v) {
  return Tensor::from_floats({int64_t(v.size())}, v);
}

TEST(Equivalence, WithinRelativeToleranceMatches) {
  TensorDiff d =
      compare_tensors(floats({100.f, -2.f, 0.f}), floats({100.09f, -2.0019f, 5e-6f}), "y");
  EXPECT_TRUE(d.match) << d.where;
  EXPECT_NEAR(d.max_abs_error, 0.09, 1e-4);
  EXPECT_NEAR(d.max_rel_error, 9.5e-4, 1e-5);
}

TEST(Equivalence, BeyondToleranceFailsAndSaysWhere) {
  TensorDiff d = compare_tensors(floats({1.f, 2.f, 3.f}), floats({1.f, 2.01f, 3.f}), "y");
  EXPECT_FALSE(d.match);
  EXPECT_EQ(d.mismatches, 1);
  EXPECT_NE(d.where.find("y: 1 of 3"), std::string::npos) << d.where;
  EXPECT_NE(d.where.find("first at 1"), std::string::npos) << d.where;
}

TEST(Equivalence, NearZeroUsesAbsoluteTolerance) {
  EXPECT_TRUE(compare_tensors(floats({0.f}), floats({9e-6f}), "y").match);
  EXPECT_FALSE(compare_tensors(floats({0.f}), floats({2e-5f}), "y").match);
}

TEST(Equivalence, ShapeDtypeAndNanMismatches) {
  EXPECT_FALSE(compare_tensors(floats({1.f, 2.f}), floats({1.f}), "y").match);
  Tensor i = Tensor::from_int64s({2}, {1, 2});
  EXPECT_FALSE(compare_tensors(floats({1.f, 2.f}), i, "y").match);
  EXPECT_FALSE(compare_tensors(floats({1.f}), floats({NAN}), "y").match);
  EXPECT_TRUE(compare_tensors(floats({NAN}), floats({NAN}), "y").match);
}

TEST(Equivalence, OutputListsMergeTheWorst) {
  TensorDiff d =
      compare_outputs({floats({1.f}), floats({1.f})}, {floats({1.f}), floats({3.f})}, {"a", "b"});
  EXPECT_FALSE(d.match);
  EXPECT_DOUBLE_EQ(d.max_abs_error, 2.0);
  EXPECT_EQ(d.where.rfind("b:", 0), 0u) << d.where;
  // The scale the error reads against is the largest finite expected value of any output.
  const TensorDiff s = compare_outputs({floats({-7.f, NAN}), floats({2.f, INFINITY})},
                                       {floats({-7.f, NAN}), floats({2.f, INFINITY})}, {"a", "b"});
  EXPECT_TRUE(s.match) << s.where;
  EXPECT_DOUBLE_EQ(s.max_abs_expected, 7.0);
  EXPECT_FALSE(compare_outputs({floats({1.f})}, {}, {"a"}).match);
}

// Summation-order error grows with the values summed: a near-zero logit beside logits of
// 500 may move by 1e-4. Scaled (the default) accepts that; absolute (ONNX's) does not.
TEST(Equivalence, ScaledToleranceFollowsTheTensorsMagnitude) {
  const Tensor expected = floats({500.f, -320.f, 0.f, 1e-3f});
  const Tensor reordered = floats({500.02f, -320.01f, 3e-4f, 1.2e-3f});
  EXPECT_TRUE(compare_tensors(expected, reordered, "logits").match);
  Tolerance absolute;
  absolute.scaled = false;
  const TensorDiff strict = compare_tensors(expected, reordered, "logits", absolute);
  EXPECT_FALSE(strict.match);
  EXPECT_EQ(strict.mismatches, 2);  // the two near-zero values
  // A value wrong by 1% of the scale fails in both modes.
  const Tensor wrong = floats({500.f, -320.f, 5.f, 1e-3f});
  EXPECT_FALSE(compare_tensors(expected, wrong, "logits").match);
  EXPECT_FALSE(compare_tensors(expected, wrong, "logits", absolute).match);
  EXPECT_NE(compare_tensors(expected, wrong, "logits").where.find("scaled"), std::string::npos);
}

}  // namespace
}  // namespace fx
