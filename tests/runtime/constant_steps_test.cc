// SPDX-License-Identifier: Apache-2.0
// DequantizeLinear of initializers is computed once when the steps are made
// (runtime/constant_steps.h): its step only hands out the result, the MatMul behind it
// sees constant weights, and the model computes what it computed before.

#include <gtest/gtest.h>

#include <cstring>

#include "ir/graph_builder.h"
#include "runtime/constant_steps.h"
#include "runtime/executor.h"

namespace fx {
namespace {

std::shared_ptr<TensorData> int8s(DType t, std::vector<int64_t> dims, std::vector<int8_t> v) {
  std::vector<std::byte> bytes(v.size());
  std::memcpy(bytes.data(), v.data(), v.size());
  return TensorData::owned(t, std::move(dims), std::move(bytes));
}

// x float [2, 3] -> MatMul with DQ(w int8 [3, 2], scale 0.5, zero point 1) -> y [2, 2];
// x also goes through Q -> DQ (an activation: computed, not constant).
Graph model() {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto sx = b.constant("sx", TensorData::from_floats({}, {0.25f}));
  auto zx = b.constant("zx", int8s(DType::UInt8, {}, {0}));
  auto qx = b.op("QuantizeLinear", {x, sx, zx}, {}, "q_x", Shape::of({2, 3}), DType::UInt8);
  auto dqx = b.op("DequantizeLinear", {qx, sx, zx}, {}, "dq_x", Shape::of({2, 3}), DType::Float32);
  auto w = b.constant("w", int8s(DType::Int8, {3, 2}, {1, 3, -1, 5, 7, 1}));
  auto sw = b.constant("sw", TensorData::from_floats({}, {0.5f}));
  auto zw = b.constant("zw", int8s(DType::Int8, {}, {1}));
  auto dqw = b.op("DequantizeLinear", {w, sw, zw}, {}, "dq_w", Shape::of({3, 2}), DType::Float32);
  b.output(b.op("MatMul", {dqx, dqw}, {}, "mm", Shape::of({2, 2}), DType::Float32));
  return b.build();
}

const Step& step_named(const std::vector<Step>& steps, const std::string& name) {
  for (const Step& s : steps)
    if (s.name == name) return s;
  throw std::runtime_error("no step " + name);
}

TEST(ConstantSteps, DequantizedInitializersAreComputedOnce) {
  Graph g = model();
  PrecomputedSteps pre = precompute_constant_steps(g, 13);
  ASSERT_TRUE(pre.graph.has_value());
  ASSERT_EQ(pre.kernels.size(), 1u);  // dq_w only: dq_x reads a computed value
  const Node& dqw = g.node(pre.kernels.begin()->first);
  EXPECT_EQ(dqw.name, "dq_w");
  // (w - 1) * 0.5, constant in the prepared graph, as the MatMul's kernel sees it.
  const Value& v = pre.graph->value(dqw.outputs[0]);
  ASSERT_TRUE(v.is_constant());
  EXPECT_EQ(v.producer, kNoNode);
  EXPECT_EQ(v.data->to_floats(), (std::vector<float>{0, 1, -1, 2, 3, 0}));
  EXPECT_FALSE(g.value(dqw.outputs[0]).is_constant());  // the model itself is unchanged

  // The executor's step for dq_w hands out the result (a view, no slot); dq_x computes.
  auto steps = make_steps(g, 13);
  EXPECT_TRUE(step_named(steps, "dq_w").kernel->aliases_input());
  EXPECT_FALSE(step_named(steps, "dq_x").kernel->aliases_input());
}

TEST(ConstantSteps, ResultsAreTheOnesARunGives) {
  Graph g = model();
  Executor ex(g, ExecutorOptions{1});
  Tensor x(DType::Float32, {2, 3});
  const std::vector<float> xv{1, 2, 3, 0.5f, -1, 4};
  std::memcpy(x.raw(), xv.data(), sizeof(float) * xv.size());
  // Run twice: the precomputed weights must not be spoiled by the first run.
  for (int run = 0; run < 2; ++run) {
    auto y = ex.run({{"x", x}})[0].to_floats();
    // x quantized with scale 0.25 (uint8: negatives saturate to 0) is exact here but
    // for -1 -> 0; w = [[0, 1], [-1, 2], [3, 0]].
    const std::vector<float> xq{1, 2, 3, 0.5f, 0, 4};
    std::vector<float> want(4, 0);
    const float w[3][2] = {{0, 1}, {-1, 2}, {3, 0}};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 3; ++k) want[i * 2 + j] += xq[i * 3 + k] * w[k][j];
    EXPECT_EQ(y, want) << "run " << run;
  }
}

TEST(ConstantSteps, NothingToPrecomputeLeavesTheGraph) {
  GraphBuilder b;
  auto x = b.input("x", {2}, DType::UInt8);
  auto s = b.constant("s", TensorData::from_floats({}, {0.5f}));
  b.output(b.op("DequantizeLinear", {x, s}, {}, "dq", Shape::of({2}), DType::Float32));
  PrecomputedSteps pre = precompute_constant_steps(b.build(), 13);
  EXPECT_FALSE(pre.graph.has_value());
  EXPECT_TRUE(pre.kernels.empty());
}

}  // namespace
}  // namespace fx
