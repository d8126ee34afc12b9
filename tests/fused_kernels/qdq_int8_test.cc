// SPDX-License-Identifier: Apache-2.0
// QDQ int8 groups (fused_kernels/qdq_int8_kernel.h) against the unfused runtime, which
// dequantizes, computes in float and quantizes again: the 8-bit outputs of a Conv or
// Gemm may differ by one quantum where the two round a value near a half differently,
// and rarely; those of an Add or MaxPool are equal.

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "codegen/codegen_test_util.h"
#include "fused_kernels/conv_layout_plan.h"
#include "fused_kernels/nhwc_max_pool.h"
#include "fused_kernels/qdq_int8_kernel.h"
#include "ir/graph_builder.h"
#include "runtime/kernel_registry.h"

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

// A float tensor quantized per tensor: "x" -> QuantizeLinear -> 8-bit value.
ValueId quantized(GraphBuilder& b, ValueId x, const std::string& name, const Shape& s, float scale,
                  uint8_t zp) {
  auto sc = floats(b, name + "_s", {}, {scale});
  auto z = ints<uint8_t>(b, name + "_z", DType::UInt8, {}, {zp});
  return b.op("QuantizeLinear", {x, sc, z}, {}, name, s, DType::UInt8);
}

// A DequantizeLinear of `q` with the parameters `quantized` gave it under `name`.
ValueId dequantized(GraphBuilder& b, ValueId q, const std::string& name, const std::string& of,
                    const Shape& s) {
  const Graph& g = b.graph();
  return b.op("DequantizeLinear", {q, g.find_value(of + "_s"), g.find_value(of + "_z")}, {}, name,
              s, DType::Float32);
}

// Two quantized operands -> [DQ, DQ -> Add -> Relu -> Q] -> DQ -> output; and x ->
// Q -> [DQ -> MaxPool 3x3 stride 2 -> Q (same parameters)] -> DQ -> output.
QdqCase add_case() {
  GraphBuilder b;
  const Shape s = Shape::of({1, 6, 9, 9});
  auto a = quantized(b, b.input("a", {1, 6, 9, 9}), "qa", s, 0.011f, 120);
  auto c = quantized(b, b.input("c", {1, 6, 9, 9}), "qc", s, 0.007f, 131);
  auto add = b.op("Add", {dequantized(b, a, "dq_a", "qa", s), dequantized(b, c, "dq_c", "qc", s)},
                  {}, "add", s);
  auto relu = b.op("Relu", {add}, {}, "relu", s);
  auto y = quantized(b, relu, "q", s, 0.009f, 3);
  b.output(dequantized(b, y, "dq_out", "q", s));
  return {b.build(), {"dq_a", "dq_c", "add", "relu", "q"}, 0.009f};
}

QdqCase max_pool_case() {
  GraphBuilder b;
  const Shape s = Shape::of({1, 5, 11, 11}), o = Shape::of({1, 5, 6, 6});
  auto x = quantized(b, b.input("x", {1, 5, 11, 11}), "qx", s, 0.02f, 100);
  auto pool = b.op("MaxPool", {dequantized(b, x, "dq_x", "qx", s)},
                   {{"kernel_shape", std::vector<int64_t>{3, 3}},
                    {"strides", std::vector<int64_t>{2, 2}},
                    {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                   "pool", o);
  const Graph& g = b.graph();
  auto y = b.op("QuantizeLinear", {pool, g.find_value("qx_s"), g.find_value("qx_z")}, {}, "q", o,
                DType::UInt8);
  b.output(dequantized(b, y, "dq_out", "qx", o));
  return {b.build(), {"dq_x", "pool", "q"}, 0.02f};
}

// The group's output is the unfused one bit for bit: it computes the same float
// operations in the same order (Add) or pools the 8-bit values (MaxPool).
void expect_equal(const QdqCase& c, const char* pattern) {
  auto fg = testing::make_group("g", c.group);
  fg.pattern = pattern;
  FusedProgram p = testing::post_op_program(c.g, {fg});
  ASSERT_TRUE(p.groups[0].step.has_value());
  ASSERT_EQ(p.groups[0].step->inputs.size(), std::string(pattern) == "qdq_add_int8" ? 2u : 1u);
  auto inputs = testing::seeded_inputs(c.g, 7);
  for (int threads : {1, 2}) {
    auto want = Executor(c.g, ExecutorOptions{threads}).run(inputs)[0].to_floats();
    auto got = Executor(c.g, p.steps, ExecutorOptions{threads}).run(inputs)[0].to_floats();
    ASSERT_EQ(got.size(), want.size());
    int64_t distinct = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << "element " << i;
      distinct += got[i] != got[0];
    }
    EXPECT_GT(distinct, 0);  // not all saturated
  }
}

TEST(QdqInt8Kernel, AddReluEqualsTheUnfusedFloatArithmetic) {
  expect_equal(add_case(), "qdq_add_int8");
}

TEST(QdqInt8Kernel, MaxPoolOnEightBitsEqualsTheUnfusedPool) {
  expect_equal(max_pool_case(), "qdq_maxpool_int8");
}

// conv group -> MaxPool group -> {conv group, Add group of that conv and the pool} ->
// conv group: the 8-bit tensors between the groups stay NHWC (no reorder around the
// int8 convolutions), and the output is that of the same groups on NCHW tensors.
TEST(QdqInt8Kernel, EightBitTensorsBetweenGroupsStayNhwc) {
  GraphBuilder b;
  const int64_t c = 8, hw = 12;
  const Shape xs = Shape::of({1, c, hw, hw}), ps = Shape::of({1, c, hw / 2, hw / 2});
  auto x = quantized(b, b.input("x", {1, c, hw, hw}), "q_in", xs, 0.008f, 128);
  // Group 1: a 3x3 conv + relu keeping c channels.
  auto conv_group = [&](ValueId in, const std::string& p, const std::string& in_q, const Shape& s,
                        uint32_t seed) {
    auto dq = dequantized(b, in, p + "dq_x", in_q, s);
    std::vector<float> ws(c, 0.003f);
    auto w = ints(b, p + "w", DType::Int8, {c, c, 3, 3}, random_int8(c * c * 9, seed));
    auto dq_w = b.op("DequantizeLinear",
                     {w, floats(b, p + "sw", {c}, ws),
                      ints(b, p + "zw", DType::Int8, {c}, std::vector<int8_t>(c, 0))},
                     {{"axis", int64_t{0}}}, p + "dq_w", Shape::of({c, c, 3, 3}), DType::Float32);
    auto conv =
        b.op("Conv", {dq, dq_w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, p + "conv", s);
    auto relu = b.op("Relu", {conv}, {}, p + "relu", s);
    return quantized(b, relu, p + "q", s, 0.01f, 0);
  };
  auto y1 = conv_group(x, "a_", "q_in", xs, 3);
  // Group 2: MaxPool on y1's parameters.
  auto pool =
      b.op("MaxPool", {dequantized(b, y1, "p_dq", "a_q", xs)},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
           "pool", ps);
  const Graph& gb = b.graph();
  auto pooled = b.op("QuantizeLinear", {pool, gb.find_value("a_q_s"), gb.find_value("a_q_z")}, {},
                     "p_q", ps, DType::UInt8);
  // Group 3: a conv of the pool; group 4: conv + pool, relu, quantized.
  auto y3 = conv_group(pooled, "b_", "a_q", ps, 4);
  auto add = b.op(
      "Add", {dequantized(b, y3, "s_dq1", "b_q", ps), dequantized(b, pooled, "s_dq2", "a_q", ps)},
      {}, "sum", ps);
  auto y4 = quantized(b, b.op("Relu", {add}, {}, "sum_relu", ps), "s_q", ps, 0.015f, 0);
  auto y5 = conv_group(y4, "c_", "s_q", ps, 5);
  b.output(dequantized(b, y5, "out", "c_q", ps));
  Graph g = b.build();
  auto group = [](const std::string& id, std::vector<std::string> nodes, const char* pattern) {
    auto fg = testing::make_group(id, std::move(nodes));
    fg.pattern = pattern;
    return fg;
  };
  std::vector<FusionGroup> groups{
      group("g1", {"a_dq_x", "a_dq_w", "a_conv", "a_relu", "a_q"}, "qdq_conv_int8"),
      group("g2", {"p_dq", "pool", "p_q"}, "qdq_maxpool_int8"),
      group("g3", {"b_dq_x", "b_dq_w", "b_conv", "b_relu", "b_q"}, "qdq_conv_int8"),
      group("g4", {"s_dq1", "s_dq2", "sum", "sum_relu", "s_q"}, "qdq_add_int8"),
      group("g5", {"c_dq_x", "c_dq_w", "c_conv", "c_relu", "c_q"}, "qdq_conv_int8")};
  FusedProgram p = testing::post_op_program(g, groups);
  // a_q (conv -> pool), p_q (pool -> conv, Add), b_q (conv -> Add) and s_q (Add ->
  // conv) stay NHWC; c_q, read by the output's DequantizeLinear, does not.
  EXPECT_EQ(plan_conv_layouts(g, p.steps), 4);
  bool x_nhwc = false, y_nhwc = false;
  for (const Step& s : p.steps) {
    if (s.name == "g3") ASSERT_TRUE(qdq_int8_conv_layouts(s.kernel.get(), &x_nhwc, &y_nhwc));
  }
  EXPECT_TRUE(x_nhwc && y_nhwc);
  // The same groups on NCHW tensors (each conv reorders around itself, the pool runs
  // the runtime's kernel) compute the same values.
  std::vector<Step> nchw = p.steps;
  for (Step& s : nchw) {
    if (qdq_int8_conv_layouts(s.kernel.get(), nullptr, nullptr))
      s.kernel = qdq_int8_conv_with_layouts(*s.kernel, false, false);
    if (is_nhwc_max_pool_kernel(s.kernel.get()))
      s.kernel = make_kernel(g, g.node(g.find_node("pool")));
  }
  auto inputs = testing::seeded_inputs(g, 11);
  for (int threads : {1, 2}) {
    auto want = Executor(g, nchw, ExecutorOptions{threads}).run(inputs)[0].to_floats();
    auto got = Executor(g, p.steps, ExecutorOptions{threads}).run(inputs)[0].to_floats();
    ASSERT_EQ(got.size(), want.size());
    int64_t distinct = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << "element " << i;
      distinct += got[i] != got[0];
    }
    EXPECT_GT(distinct, 0);
  }
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
