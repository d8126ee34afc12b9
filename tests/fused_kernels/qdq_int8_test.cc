// SPDX-License-Identifier: Apache-2.0
// QDQ int8 groups (fused_kernels/qdq_int8_kernel.h) against the unfused runtime, which
// dequantizes, computes in float and quantizes again: the 8-bit outputs may differ by
// one quantum where the two round a value near a half differently, and rarely.

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "codegen/codegen_test_util.h"
#include "fused_kernels/qdq_int8_kernel.h"
#include "ir/graph_builder.h"

namespace fx {
namespace {

template <class T>
ValueId ints(GraphBuilder& b, const std::string& name, DType t, const std::vector<int64_t>& dims,
             const std::vector<T>& v) {
  std::vector<std::byte> bytes(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return b.constant(name, TensorData::owned(t, dims, std::move(bytes)));
}

ValueId floats(GraphBuilder& b, const std::string& name, const std::vector<int64_t>& dims,
               const std::vector<float>& v) {
  return b.constant(name, TensorData::from_floats(dims, v));
}

std::vector<int8_t> random_int8(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int8_t> v(n);
  for (auto& e : v) e = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  return v;
}

// x float -> Q -> [DQ -> anchor (DQ'd int8 weights per channel, DQ'd int32 bias) ->
// Relu -> Q] -> DQ -> output; the bracket is the group.
struct QdqCase {
  Graph g;
  std::vector<std::string> group;
  float y_scale;
};

QdqCase conv_case() {
  GraphBuilder b;
  const int64_t c = 8, m = 16, hw = 12;
  auto x = b.input("x", {1, c, hw, hw});
  auto sx = floats(b, "sx", {}, {0.008f});
  auto zx = ints<uint8_t>(b, "zx", DType::UInt8, {}, {128});
  auto xq =
      b.op("QuantizeLinear", {x, sx, zx}, {}, "q_in", Shape::of({1, c, hw, hw}), DType::UInt8);
  auto dq_x =
      b.op("DequantizeLinear", {xq, sx, zx}, {}, "dq_x", Shape::of({1, c, hw, hw}), DType::Float32);
  std::vector<float> ws(m), bs(m);
  std::vector<int32_t> bias(m);
  for (int64_t i = 0; i < m; ++i) {
    ws[i] = 0.002f + 0.0005f * static_cast<float>(i);
    bs[i] = 0.008f * ws[i];
    bias[i] = static_cast<int32_t>(i * 997 % 4001) - 2000;
  }
  auto w = ints(b, "w", DType::Int8, {m, c, 3, 3}, random_int8(m * c * 9, 5));
  auto dq_w = b.op(
      "DequantizeLinear",
      {w, floats(b, "sw", {m}, ws), ints(b, "zw", DType::Int8, {m}, std::vector<int8_t>(m, 0))},
      {{"axis", int64_t{0}}}, "dq_w", Shape::of({m, c, 3, 3}), DType::Float32);
  auto dq_b =
      b.op("DequantizeLinear", {ints(b, "b", DType::Int32, {m}, bias), floats(b, "sb", {m}, bs)},
           {{"axis", int64_t{0}}}, "dq_b", Shape::of({m}), DType::Float32);
  const Shape ys = Shape::of({1, m, hw / 2, hw / 2});
  auto conv =
      b.op("Conv", {dq_x, dq_w, dq_b},
           {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}},
           "conv", ys);
  auto relu = b.op("Relu", {conv}, {}, "relu", ys);
  auto sy = floats(b, "sy", {}, {0.01f});
  auto zy = ints<uint8_t>(b, "zy", DType::UInt8, {}, {10});
  auto yq = b.op("QuantizeLinear", {relu, sy, zy}, {}, "q", ys, DType::UInt8);
  b.output(b.op("DequantizeLinear", {yq, sy, zy}, {}, "dq_out", ys, DType::Float32));
  return {b.build(), {"dq_x", "dq_w", "dq_b", "conv", "relu", "q"}, 0.01f};
}

QdqCase gemm_case() {
  GraphBuilder b;
  const int64_t k = 64, n = 24;
  auto x = b.input("x", {5, k});
  auto sx = floats(b, "sx", {}, {0.01f});
  auto zx = ints<int8_t>(b, "zx", DType::Int8, {}, {-3});
  auto xq = b.op("QuantizeLinear", {x, sx, zx}, {}, "q_in", Shape::of({5, k}), DType::Int8);
  auto dq_x = b.op("DequantizeLinear", {xq, sx, zx}, {}, "dq_x", Shape::of({5, k}), DType::Float32);
  std::vector<float> ws(n, 0.003f);
  ws[3] = 0.001f;
  auto w = ints(b, "w", DType::Int8, {n, k}, random_int8(n * k, 9));  // transB: [N, K]
  auto dq_w = b.op("DequantizeLinear", {w, floats(b, "sw", {n}, ws)}, {{"axis", int64_t{0}}},
                   "dq_w", Shape::of({n, k}), DType::Float32);
  auto bias = floats(b, "bias", {n}, std::vector<float>(n, 0.05f));  // a float bias
  auto gemm = b.op("Gemm", {dq_x, dq_w, bias}, {{"transB", int64_t{1}}}, "gemm", Shape::of({5, n}));
  auto sy = floats(b, "sy", {}, {0.02f});
  auto zy = ints<int8_t>(b, "zy", DType::Int8, {}, {0});
  auto yq = b.op("QuantizeLinear", {gemm, sy, zy}, {}, "q", Shape::of({5, n}), DType::Int8);
  b.output(b.op("DequantizeLinear", {yq, sy, zy}, {}, "dq_out", Shape::of({5, n}), DType::Float32));
  return {b.build(), {"dq_x", "dq_w", "gemm", "q"}, 0.02f};
}

void expect_within_one_quantum(const QdqCase& c, const char* pattern) {
  auto fg = testing::make_group("g", c.group);
  fg.pattern = pattern;
  FusedProgram p = testing::post_op_program(c.g, {fg});
  ASSERT_TRUE(p.groups[0].step.has_value());
  auto inputs = testing::seeded_inputs(c.g, 3);
  for (int threads : {1, 2}) {
    auto want = Executor(c.g, ExecutorOptions{threads}).run(inputs)[0].to_floats();
    Executor fused(c.g, p.steps, ExecutorOptions{threads});
    for (int run = 0; run < 2; ++run) {
      auto got = fused.run(inputs)[0].to_floats();
      ASSERT_EQ(got.size(), want.size());
      int64_t off = 0, distinct = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_LE(std::fabs(got[i] - want[i]), c.y_scale * 1.01f) << "element " << i;
        off += got[i] != want[i];
        distinct += got[i] != got[0];
      }
      EXPECT_LE(off * 50, static_cast<int64_t>(got.size()));  // near-half values only
      EXPECT_GT(distinct, 0);                                 // not all saturated
    }
  }
}

TEST(QdqInt8Kernel, ConvReluPerChannel) {
  expect_within_one_quantum(conv_case(), "qdq_conv_int8");
}

TEST(QdqInt8Kernel, GemmTransposedWithFloatBias) {
  expect_within_one_quantum(gemm_case(), "qdq_gemm_int8");
}

TEST(QdqInt8Kernel, PlanRejectsGroupsThatAreNotOneQdqAnchor) {
  QdqCase c = conv_case();
  std::vector<NodeId> nodes;
  for (const char* name : {"dq_x", "dq_w", "dq_b", "conv", "relu"})
    nodes.push_back(c.g.find_node(name));
  std::string why;
  EXPECT_FALSE(plan_qdq_int8(c.g, nodes, &why).has_value());
  EXPECT_NE(why.find("QuantizeLinear"), std::string::npos) << why;
}

}  // namespace
}  // namespace fx
