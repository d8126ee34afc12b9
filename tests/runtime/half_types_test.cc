// SPDX-License-Identifier: Apache-2.0
// float16/bfloat16: the conversions, and kernels that compute in float32 serving
// half tensors through the executor's adapter (stored at 2 bytes per element).
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/half.h"
#include "runtime_test_util.h"

namespace fx {
namespace {

using test::floats;
using test::FloatsNear;
using test::run_op;

Tensor halves(DType t, std::vector<int64_t> dims, const std::vector<float>& v) {
  Tensor h(t, std::move(dims));
  floats_to_half(t, v.data(), h.data<uint16_t>(), h.numel());
  return h;
}

TEST(Half, KnownBitPatterns) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);                      // rounds to infinity
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);         // tie to even: zero
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 ulp: tie to even
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(3.0f, -11)), 0x3c02);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(3.0f, -8)), 0x3f82);
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float f = half_to_float(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_half(f), h) << std::hex << b;
  }
}

TEST(Half, BulkConversionsAgreeWithTheScalarOnes) {
  // half_to_floats/floats_to_half take the CPU's F16C path where it has one, in blocks
  // of 8 with a scalar tail (odd count): every half, and floats at ties, subnormals,
  // overflow and infinities, must convert as the scalar code does.
  std::vector<uint16_t> all(0x10000 + 3);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> wide(all.size());
  half_to_floats(DType::Float16, all.data(), wide.data(), static_cast<int64_t>(all.size()));
  for (std::size_t i = 0; i < all.size(); ++i) {
    const float f = half_to_float(all[i]);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(wide[i])) << i;
      continue;
    }
    ASSERT_EQ(std::memcmp(&f, &wide[i], 4), 0) << std::hex << all[i];
  }
  std::vector<float> probe;
  for (int e = -26; e <= 17; ++e)
    for (float m : {1.0f, 1.00048828125f, 1.0009765625f, 1.5f, 1.99951171875f, 1.9999f})
      for (float sign : {1.0f, -1.0f}) probe.push_back(sign * std::ldexp(m, e));
  for (float v : {0.0f, -0.0f, 65504.0f, 65520.0f, 65519.99f, 1e30f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()})
    probe.push_back(v);
  std::vector<uint16_t> narrow(probe.size());
  floats_to_half(DType::Float16, probe.data(), narrow.data(), static_cast<int64_t>(probe.size()));
  for (std::size_t i = 0; i < probe.size(); ++i)
    ASSERT_EQ(narrow[i], float_to_half(probe[i])) << probe[i];
}

TEST(Half, TensorsKeepTheirWidthAndConvertToFloats) {
  Tensor h = halves(DType::Float16, {3}, {0.5f, -1.25f, 3.0f});
  EXPECT_EQ(h.byte_size(), 6u);
  EXPECT_THAT(h, FloatsNear(std::vector<float>{0.5f, -1.25f, 3.0f}));
}

TEST(HalfAdapter, Float32KernelsServeHalfInputsAndOutputs) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    auto y = run_op("Relu", {halves(t, {4}, {-1, 0.5f, 2, -3})});
    EXPECT_EQ(y[0].dtype(), t);
    EXPECT_THAT(y[0], FloatsNear(std::vector<float>{0, 0.5f, 2, 0}));
    auto s = run_op("Add", {halves(t, {2}, {1, 2}), halves(t, {2}, {0.5f, 0.25f})});
    EXPECT_EQ(s[0].dtype(), t);
    EXPECT_THAT(s[0], FloatsNear(std::vector<float>{1.5f, 2.25f}));
    // Non-float outputs pass through as they are.
    auto sh = run_op("Shape", {halves(t, {2, 5}, std::vector<float>(10, 1))});
    EXPECT_EQ(sh[0].dtype(), DType::Int64);
    auto eq = run_op("Equal", {halves(t, {2}, {1, 2}), halves(t, {2}, {1, 3})});
    EXPECT_EQ(eq[0].dtype(), DType::Bool);
    EXPECT_EQ(eq[0].to_int64s(), (std::vector<int64_t>{1, 0}));
  }
}

TEST(HalfAdapter, CastToAndFromHalfAndViewsOfHalfInputs) {
  auto h = run_op("Cast", {floats({3}, {1.0f, 1.0f / 3, 70000.0f})},
                  {{"to", static_cast<int64_t>(DType::Float16)}});
  ASSERT_EQ(h[0].dtype(), DType::Float16);
  EXPECT_EQ(h[0].data<uint16_t>()[0], 0x3c00);
  EXPECT_EQ(h[0].data<uint16_t>()[1], 0x3555);
  EXPECT_EQ(h[0].data<uint16_t>()[2], 0x7c00);  // beyond the range: infinity
  auto f = run_op("Cast", {h[0]}, {{"to", static_cast<int64_t>(DType::Float32)}});
  EXPECT_EQ(f[0].dtype(), DType::Float32);
  EXPECT_EQ(f[0].data<float>()[1], 0.333251953125f);
  auto b = run_op("Cast", {h[0]}, {{"to", static_cast<int64_t>(DType::BFloat16)}});
  EXPECT_EQ(b[0].dtype(), DType::BFloat16);
  EXPECT_EQ(b[0].data<uint16_t>()[0], 0x3f80);
  auto r =
      run_op("Reshape", {halves(DType::Float16, {2, 2}, {1, 2, 3, 4}), test::int64s({1}, {4})});
  EXPECT_EQ(r[0].dtype(), DType::Float16);
  EXPECT_EQ(r[0].dims(), (std::vector<int64_t>{4}));
  EXPECT_THAT(r[0], FloatsNear(std::vector<float>{1, 2, 3, 4}));
}

TEST(HalfAdapter, ConvWithHalfWeightsMatchesFloat32) {
  const auto xv = test::random_floats(2 * 6 * 6, 1), wv = test::random_floats(3 * 2 * 3 * 3, 2);
  // Round the float32 operands to half first, so both runs see the same numbers.
  auto to_half_and_back = [](std::vector<float> v) {
    for (float& f : v) f = half_to_float(float_to_half(f));
    return v;
  };
  const auto xr = to_half_and_back(xv), wr = to_half_and_back(wv);
  GraphBuilder::AttrList pads{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  auto want = run_op("Conv", {floats({1, 2, 6, 6}, xr), floats({3, 2, 3, 3}, wr)}, pads, 1, {1});
  auto got = run_op(
      "Conv", {halves(DType::Float16, {1, 2, 6, 6}, xr), halves(DType::Float16, {3, 2, 3, 3}, wr)},
      pads, 1, {1});
  ASSERT_EQ(got[0].dtype(), DType::Float16);
  ASSERT_EQ(got[0].dims(), want[0].dims());
  auto g = got[0].to_floats(), w = want[0].to_floats();
  for (std::size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 2e-3f + 1e-3f * std::abs(w[i])) << i;
}

}  // namespace
}  // namespace fx
