// SPDX-License-Identifier: Apache-2.0
// Output comparison with ONNX's tolerances (rtol 1e-3, atol 1e-5).

#include <gtest/gtest.h>

#include <cmath>

#include "ir/graph_builder.h"
#include "profile/equivalence.h"

namespace fx {
namespace {

Tensor floats(std::vector<float> v) {
  return Tensor::from_floats({int64_t(v.size())}, v);
}

Tensor bytes(std::vector<uint8_t> v) {
  Tensor t(DType::UInt8, {int64_t(v.size())});
  std::copy(v.begin(), v.end(), t.data<uint8_t>());
  return t;
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

// Quantized values are judged in quantization steps: one step apart is equal (an int8
// kernel rounds a value near a half apart from the float path), two steps are not.
TEST(Equivalence, QuantizedValuesMayDifferByOneStepNotTwo) {
  const Tensor expected = bytes({0, 7, 128, 255});
  const Tensor one = bytes({1, 6, 129, 255});
  const Tensor two = bytes({0, 7, 130, 255});
  EXPECT_TRUE(compare_tensors(expected, one, "q").match);
  const TensorDiff d = compare_tensors(expected, two, "q");
  EXPECT_FALSE(d.match);
  EXPECT_EQ(d.mismatches, 1);
  EXPECT_NE(d.where.find("1 step of 1 (quantized; 2 steps off)"), std::string::npos) << d.where;
  // A caller may allow more steps (fxc profile --steps).
  Tolerance two_steps;
  two_steps.steps = 2;
  EXPECT_TRUE(compare_tensors(expected, two, "q", two_steps).match);
  // The float tolerance alone would accept neither: 1e-5 of 255 plus 1e-3 of 128.
  EXPECT_FALSE(compare_tensors(floats({0, 7, 128, 255}), floats({1, 6, 129, 255}), "f").match);
}

// A float output that a DequantizeLinear wrote moves in steps of its scale.
TEST(Equivalence, DequantizedFloatsAreJudgedInStepsOfTheirScale) {
  const float s = 0.0147f;
  const Tensor expected = floats({0.f, 0.5f * 65 * s, 1.93f});
  const Tensor one = floats({s, 0.5f * 65 * s, 1.93f - s});
  const Tensor two = floats({0.f, 0.5f * 65 * s + 2 * s, 1.93f});
  EXPECT_FALSE(compare_tensors(expected, one, "y").match);  // as floats
  EXPECT_TRUE(compare_tensors(expected, one, "y", {}, s).match);
  const TensorDiff d = compare_tensors(expected, two, "y", {}, s);
  EXPECT_FALSE(d.match);
  EXPECT_NE(d.where.find("quantized; 2 steps off"), std::string::npos) << d.where;
  // Output lists take their steps position by position.
  EXPECT_TRUE(compare_outputs({expected}, {one}, {"y"}, {}, {s}).match);
  EXPECT_FALSE(compare_outputs({expected}, {two}, {"y"}, {}, {s}).match);
}

// The step comes from the graph: 1 for 8-bit values, the DequantizeLinear's one constant
// scale for its float output, none for a per-channel scale or an ordinary float.
TEST(Equivalence, QuantizationStepOfAGraphValue) {
  GraphBuilder b;
  ValueId x = b.input("x", {4}, DType::UInt8);
  ValueId scale = b.constant("scale", TensorData::from_floats({}, {0.25f}));
  ValueId per_channel = b.constant("per_channel", TensorData::from_floats({4}, {1, 2, 3, 4}));
  ValueId y = b.op("DequantizeLinear", {x, scale}, {}, "dq", Shape::of({4}), DType::Float32);
  ValueId z =
      b.op("DequantizeLinear", {x, per_channel}, {}, "dq_c", Shape::of({4}), DType::Float32);
  ValueId r = b.op("Relu", {y}, {}, "relu");
  const Graph g = b.build();
  EXPECT_DOUBLE_EQ(quantization_step(g, x), 1.0);
  EXPECT_DOUBLE_EQ(quantization_step(g, y), 0.25);
  EXPECT_DOUBLE_EQ(quantization_step(g, z), 0.0);
  EXPECT_DOUBLE_EQ(quantization_step(g, r), 0.0);
  EXPECT_EQ(quantization_steps(g, {y, r}), (std::vector<double>{0.25, 0.0}));
}

}  // namespace
}  // namespace fx
