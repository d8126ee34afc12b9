// SPDX-License-Identifier: Apache-2.0
// QDQ int8 groups: DequantizeLinear -> Conv/MatMul (-> Relu) -> QuantizeLinear as one
// kernel, with byte counts from the 8-bit and 32-bit element sizes.
#include <gtest/gtest.h>

#include "analysis/fusion_finder.h"
#include "test_graphs.h"

namespace fx {
namespace {

std::shared_ptr<TensorData> filled(DType t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (auto d : dims) n *= d;
  return TensorData::owned(t, dims, std::vector<std::byte>(n * dtype_size(t), std::byte{1}));
}

AnalysisResult analyze(const Graph& g, int level) {
  FusionOptions o;
  o.opt_level = level;
  return analyze_fusion(g, testing::test_profile(), o);
}

// x uint8 [1, 8, 16, 16] -> DQ -> Conv 3x3 (DQ'd int8 weights per channel, DQ'd int32
// bias) -> Relu -> Q uint8 [1, 16, 16, 16]. `extra_reader`: the DQ'd activation is also
// read by a Relu outside the pattern.
Graph qdq_conv(bool extra_reader) {
  GraphBuilder b;
  const Shape xs = Shape::of({1, 8, 16, 16}), ys = Shape::of({1, 16, 16, 16});
  auto x = b.input("x", {1, 8, 16, 16}, DType::UInt8);
  auto sx = testing::scalar(b, "sx", 0.02f);
  auto zx = b.constant("zx", filled(DType::UInt8, {}));
  auto dq_x = b.op("DequantizeLinear", {x, sx, zx}, {}, "dq_x", xs, DType::Float32);
  auto w = b.constant("w", filled(DType::Int8, {16, 8, 3, 3}));
  auto sw = b.constant("sw", testing::zeros({16}));
  auto zw = b.constant("zw", filled(DType::Int8, {16}));
  auto dq_w = b.op("DequantizeLinear", {w, sw, zw}, {{"axis", int64_t{0}}}, "dq_w",
                   Shape::of({16, 8, 3, 3}), DType::Float32);
  auto bias = b.constant("b", filled(DType::Int32, {16}));
  auto sb = b.constant("sb", testing::zeros({16}));
  auto dq_b = b.op("DequantizeLinear", {bias, sb}, {{"axis", int64_t{0}}}, "dq_b", Shape::of({16}),
                   DType::Float32);
  auto conv = b.op("Conv", {dq_x, dq_w, dq_b}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv",
                   ys, DType::Float32);
  auto relu = b.op("Relu", {conv}, {}, "relu", ys, DType::Float32);
  auto sy = testing::scalar(b, "sy", 0.05f);
  auto zy = b.constant("zy", filled(DType::UInt8, {}));
  b.output(b.op("QuantizeLinear", {relu, sy, zy}, {}, "q", ys, DType::UInt8));
  if (extra_reader) b.output(b.op("Relu", {dq_x}, {}, "side", xs, DType::Float32));
  return b.build();
}

TEST(QdqPattern, ConvWithReluIsOneInt8Kernel) {
  Graph g = qdq_conv(false);
  AnalysisResult r = analyze(g, 1);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "qdq_conv_int8");
  EXPECT_EQ(testing::sorted(r.groups[0].nodes),
            testing::sorted({"dq_x", "dq_w", "dq_b", "conv", "relu", "q"}));
  EXPECT_EQ(r.kernels_before, 6);
  EXPECT_EQ(r.kernels_after, 1);
  // The fused kernel moves the 8-bit input (2048 B), weights (1152 B) and output
  // (4096 B) plus the parameters: scales 4 + 64 + 64 + 4, zero points 1 + 16 + 1,
  // bias 64.
  EXPECT_EQ(r.bytes_after, 2048 + 1152 + 4096 + 4 + 64 + 64 + 4 + 1 + 16 + 1 + 64);
  // What disappears: the float32 tensors between the nodes, each written once and read
  // once: x 8192, weights 4608, bias 64, conv and relu outputs 16384 each.
  EXPECT_EQ(r.groups[0].estimate.bytes_saved(), 2 * (8192 + 4608 + 64 + 16384 + 16384));
}

TEST(QdqPattern, SharedDequantizedActivationDoesNotMatch) {
  Graph g = qdq_conv(true);
  for (const auto& gr : analyze(g, 1).groups) EXPECT_NE(gr.pattern, "qdq_conv_int8");
}

TEST(QdqPattern, MatMulWithConstantWeights) {
  GraphBuilder b;
  auto x = b.input("x", {4, 32}, DType::Int8);
  auto dq_x = b.op("DequantizeLinear", {x, testing::scalar(b, "sx", 0.1f)}, {}, "dq_x",
                   Shape::of({4, 32}), DType::Float32);
  auto w = b.constant("w", filled(DType::Int8, {32, 16}));
  auto dq_w = b.op("DequantizeLinear", {w, testing::scalar(b, "sw", 0.01f)}, {}, "dq_w",
                   Shape::of({32, 16}), DType::Float32);
  auto mm = b.op("MatMul", {dq_x, dq_w}, {}, "mm", Shape::of({4, 16}), DType::Float32);
  b.output(b.op("QuantizeLinear",
                {mm, testing::scalar(b, "sy", 0.2f), b.constant("zy", filled(DType::Int8, {}))}, {},
                "q", Shape::of({4, 16}), DType::Int8));
  Graph g = b.build();
  AnalysisResult r = analyze(g, 2);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "qdq_matmul_int8");
  EXPECT_EQ(r.groups[0].nodes.size(), 4u);
}

TEST(QdqPattern, FloatWeightsAreNotQdq) {
  // A MatMul whose weights are plain floats is not a quantized kernel.
  GraphBuilder b;
  auto x = b.input("x", {4, 32}, DType::Int8);
  auto dq_x = b.op("DequantizeLinear", {x, testing::scalar(b, "sx", 0.1f)}, {}, "dq_x",
                   Shape::of({4, 32}), DType::Float32);
  auto mm = b.op("MatMul", {dq_x, b.constant("w", testing::zeros({32, 16}))}, {}, "mm",
                 Shape::of({4, 16}), DType::Float32);
  b.output(b.op("QuantizeLinear", {mm, testing::scalar(b, "sy", 0.2f)}, {}, "q", Shape::of({4, 16}),
                DType::UInt8));
  Graph g = b.build();
  for (const auto& gr : analyze(g, 1).groups) EXPECT_NE(gr.pattern, "qdq_matmul_int8");
}

// a, b uint8 [1, 8, 8, 8] -> DQ each -> Add -> Relu -> Q: QLinearAdd's QDQ form.
TEST(QdqPattern, AddBetweenEightBitTensorsIsOneKernel) {
  GraphBuilder b;
  const Shape s = Shape::of({1, 8, 8, 8});
  auto dq = [&](const std::string& name, float scale) {
    auto x = b.input(name, {1, 8, 8, 8}, DType::UInt8);
    return b.op("DequantizeLinear",
                {x, testing::scalar(b, name + "_s", scale),
                 b.constant(name + "_z", filled(DType::UInt8, {}))},
                {}, "dq_" + name, s, DType::Float32);
  };
  auto add = b.op("Add", {dq("a", 0.1f), dq("b", 0.2f)}, {}, "add", s, DType::Float32);
  auto relu = b.op("Relu", {add}, {}, "relu", s, DType::Float32);
  b.output(b.op("QuantizeLinear",
                {relu, testing::scalar(b, "sy", 0.3f), b.constant("zy", filled(DType::UInt8, {}))},
                {}, "q", s, DType::UInt8));
  Graph g = b.build();
  AnalysisResult r = analyze(g, 1);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "qdq_add_int8");
  EXPECT_EQ(testing::sorted(r.groups[0].nodes),
            testing::sorted({"dq_a", "dq_b", "add", "relu", "q"}));
  EXPECT_EQ(r.kernels_after, 1);
}

// x uint8 -> DQ -> MaxPool -> Q: one kernel when both sides share scale and zero
// point (then the pool of the 8-bit values is the float pool); not otherwise.
Graph qdq_max_pool(float out_scale) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 8, 8}, DType::UInt8);
  auto zx = b.constant("zx", filled(DType::UInt8, {}));
  auto dq = b.op("DequantizeLinear", {x, testing::scalar(b, "sx", 0.5f), zx}, {}, "dq",
                 Shape::of({1, 4, 8, 8}), DType::Float32);
  const Shape o = Shape::of({1, 4, 4, 4});
  auto pool =
      b.op("MaxPool", {dq},
           {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
           "pool", o, DType::Float32);
  b.output(
      b.op("QuantizeLinear",
           {pool, testing::scalar(b, "sy", out_scale), b.constant("zy", filled(DType::UInt8, {}))},
           {}, "q", o, DType::UInt8));
  return b.build();
}

TEST(QdqPattern, MaxPoolWithOneScaleIsOneKernel) {
  AnalysisResult r = analyze(qdq_max_pool(0.5f), 1);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].pattern, "qdq_maxpool_int8");
  EXPECT_EQ(testing::sorted(r.groups[0].nodes), testing::sorted({"dq", "pool", "q"}));
  for (const auto& gr : analyze(qdq_max_pool(0.25f), 1).groups)
    EXPECT_NE(gr.pattern, "qdq_maxpool_int8");
}

// The fused QDQ kernel multiplies at the int8 rate the device profile measured
// (DeviceProfile::int8_speedup); without that figure it is estimated at the float rate.
// The test conv is compute-bound on test_profile (590 kFLOP at 1 GFLOP/s, 7 KB at 1 GB/s).
TEST(QdqPattern, FusedTimeFollowsTheMeasuredInt8Rate) {
  Graph g = qdq_conv(false);
  FusionOptions o;
  o.opt_level = 1;
  DeviceProfile p = testing::test_profile();
  const GroupEstimate at_float = analyze_fusion(g, p, o).groups.at(0).estimate;
  p.int8_speedup = 4;
  const GroupEstimate at_int8 = analyze_fusion(g, p, o).groups.at(0).estimate;
  EXPECT_DOUBLE_EQ(at_int8.time_before_s, at_float.time_before_s);  // the float members
  EXPECT_LT(at_int8.time_after_s, 0.3 * at_float.time_after_s);
  EXPECT_GT(at_int8.time_after_s, 0.2 * at_float.time_after_s);
  EXPECT_GT(at_int8.time_saved_s(), at_float.time_saved_s());
}

// A float Conv's group is not an int8 kernel, whatever the profile's int8 figure.
TEST(QdqPattern, Int8RateLeavesFloatGroupsAlone) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 16, 16});
  auto c = testing::conv(b, x, 8, 16, 16, "c");
  b.output(b.op("Relu", {c}, {}, "r", Shape::of({1, 16, 16, 16}), DType::Float32));
  Graph g = b.build();
  FusionOptions o;
  o.opt_level = 1;
  DeviceProfile p = testing::test_profile();
  auto r0 = analyze_fusion(g, p, o);
  p.int8_speedup = 4;
  auto r4 = analyze_fusion(g, p, o);
  ASSERT_EQ(r0.groups.size(), r4.groups.size());
  ASSERT_FALSE(r0.groups.empty());
  EXPECT_DOUBLE_EQ(r4.groups[0].estimate.time_after_s, r0.groups[0].estimate.time_after_s);
}

}  // namespace
}  // namespace fx
