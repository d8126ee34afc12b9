// SPDX-License-Identifier: Apache-2.0
// Quantized ops: QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear against
// values worked out from the ONNX formulas, and the integer Conv / MatMul kernels
// (oneDNN int8 path and exact loop) against a direct integer reference.

#include <cstring>
#include <random>

#include "runtime/int8_conv.h"
#include "runtime/int8_matmul.h"
#include "runtime_test_util.h"

namespace fx {
namespace {

using test::floats;
using test::run_op;

template <class T>
Tensor ints(DType t, std::vector<int64_t> dims, const std::vector<T>& v) {
  Tensor out(t, std::move(dims));
  std::memcpy(out.raw(), v.data(), v.size() * sizeof(T));
  return out;
}
Tensor u8(std::vector<int64_t> d, const std::vector<uint8_t>& v) {
  return ints(DType::UInt8, d, v);
}
Tensor s8(std::vector<int64_t> d, const std::vector<int8_t>& v) {
  return ints(DType::Int8, d, v);
}
Tensor s32(std::vector<int64_t> d, const std::vector<int32_t>& v) {
  return ints(DType::Int32, d, v);
}

std::vector<int64_t> values(const Tensor& t) {
  return t.to_int64s();
}

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  // x / 2 = 0, 1, 1.5, -1.5, 500, -500, 2.5 -> 0, 1, 2, -2, sat, sat, 2; + 128.
  auto y = run_op("QuantizeLinear",
                  {floats({7}, {0, 2, 3, -3, 1000, -1000, 5}), floats({}, {2.f}), u8({}, {128})});
  EXPECT_EQ(y[0].dtype(), DType::UInt8);
  EXPECT_EQ(values(y[0]), (std::vector<int64_t>{128, 129, 130, 126, 255, 0, 130}));
}

TEST(QuantizeLinear, DefaultsToUint8WithoutZeroPoint) {
  auto y = run_op("QuantizeLinear", {floats({3}, {-1, 0.4f, 0.6f}), floats({}, {1.f})});
  EXPECT_EQ(y[0].dtype(), DType::UInt8);
  EXPECT_EQ(values(y[0]), (std::vector<int64_t>{0, 0, 1}));
}

TEST(QuantizeLinear, PerAxisInt8) {
  // x [1, 2, 2]: channel 0 scale 1 zp 0, channel 1 scale 0.5 zp -10; axis 1.
  auto y =
      run_op("QuantizeLinear",
             {floats({1, 2, 2}, {1, -200, 1, 100}), floats({2}, {1.f, 0.5f}), s8({2}, {0, -10})},
             {{"axis", int64_t{1}}});
  EXPECT_EQ(y[0].dtype(), DType::Int8);
  EXPECT_EQ(values(y[0]), (std::vector<int64_t>{1, -128, -8, 127}));
}

TEST(DequantizeLinear, PerTensorAndPerAxis) {
  auto y = run_op("DequantizeLinear", {u8({3}, {0, 128, 255}), floats({}, {0.5f}), u8({}, {128})});
  EXPECT_EQ(y[0].to_floats(), (std::vector<float>{-64.f, 0.f, 63.5f}));
  auto z = run_op("DequantizeLinear",
                  {s8({2, 2}, {-4, 4, -4, 4}), floats({2}, {1.f, 0.25f}), s8({2}, {0, 4})},
                  {{"axis", int64_t{0}}});
  EXPECT_EQ(z[0].to_floats(), (std::vector<float>{-4.f, 4.f, -2.f, 0.f}));
  auto i = run_op("DequantizeLinear", {s32({2}, {-7, 1000}), floats({}, {2.f})});
  EXPECT_EQ(i[0].to_floats(), (std::vector<float>{-14.f, 2000.f}));
}

TEST(DequantizeLinear, RejectsMismatchedAxis) {
  try {
    run_op("DequantizeLinear", {u8({2, 3}, {1, 2, 3, 4, 5, 6}), floats({2}, {1, 1})},
           {{"axis", int64_t{1}}});
    FAIL() << "a scale of 2 values along an axis of 3 was accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("does not match axis 1"));
  }
}

TEST(DynamicQuantizeLinear, RangeIncludesZero) {
  // min -3, max 2: scale 5/255, zero point round(3 / scale) = 153.
  auto y = run_op("DynamicQuantizeLinear", {floats({4}, {0, 2, -3, -1})}, {}, 3);
  EXPECT_FLOAT_EQ(y[1].to_floats()[0], 5.f / 255.f);
  EXPECT_EQ(values(y[2]), (std::vector<int64_t>{153}));
  EXPECT_EQ(values(y[0]), (std::vector<int64_t>{153, 255, 0, 102}));
  // All positive: the range starts at 0, zero point 0.
  auto p = run_op("DynamicQuantizeLinear", {floats({2}, {1, 3})}, {}, 3);
  EXPECT_EQ(values(p[2]), (std::vector<int64_t>{0}));
  EXPECT_EQ(values(p[0]), (std::vector<int64_t>{85, 255}));
}

// Direct integer convolution (2-D), requantized like the spec: round(acc * scale) + zp.
std::vector<int64_t> reference_qconv(const Int8ConvSpec& s, const std::vector<int32_t>& x,
                                     const std::vector<int64_t>& yd) {
  const int64_t n = s.x_dims[0], c = s.x_dims[1], h = s.x_dims[2], w = s.x_dims[3];
  const int64_t m = s.w_dims[0], kh = s.w_dims[2], kw = s.w_dims[3];
  const int64_t cg = c / s.group, mg = m / s.group, oh = yd[2], ow = yd[3];
  std::vector<int64_t> y;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t acc = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t ii = i * s.strides[0] - s.pads_begin[0] + a * s.dilations[0];
                const int64_t jj = j * s.strides[1] - s.pads_begin[1] + e * s.dilations[1];
                if (ii < 0 || ii >= h || jj < 0 || jj >= w) continue;
                acc +=
                    int64_t{x[((b * c + (o / mg) * cg + ci) * h + ii) * w + jj] - s.x_zero_point} *
                    s.weights[((o * cg + ci) * kh + a) * kw + e];
              }
          const float v = (static_cast<float>(acc) + (s.bias.empty() ? 0.f : s.bias[o])) *
                          s.scales[s.scales.size() == 1 ? 0 : o];
          y.push_back(std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(v)) + s.y_zero_point,
                                          s.y_type == DType::UInt8 ? 0 : -128,
                                          s.y_type == DType::UInt8 ? 255 : 127));
        }
  return y;
}

struct QConvCase {
  int64_t n, c, h, w, m, k, group, stride, pad;
  DType x_type, y_type;
  int wmin, wmax;  // weight value range after the zero point is taken out
};

class Int8ConvTest : public ::testing::TestWithParam<QConvCase> {};

TEST_P(Int8ConvTest, MatchesIntegerReferenceWithinOneQuantum) {
  const QConvCase p = GetParam();
  std::mt19937 rng(7);
  Int8ConvSpec s;
  s.x_dims = {p.n, p.c, p.h, p.w};
  s.w_dims = {p.m, p.c / p.group, p.k, p.k};
  s.group = p.group;
  s.strides = {p.stride, p.stride};
  s.dilations = {1, 1};
  s.pads_begin = s.pads_end = {p.pad, p.pad};
  s.x_type = p.x_type;
  s.x_zero_point = p.x_type == DType::UInt8 ? 117 : -5;
  std::uniform_int_distribution<int> wd(p.wmin, p.wmax),
      xd(p.x_type == DType::UInt8 ? 0 : -128, p.x_type == DType::UInt8 ? 255 : 127);
  for (int64_t i = 0; i < dims_numel(s.w_dims); ++i) s.weights.push_back(wd(rng));
  for (int64_t o = 0; o < p.m; ++o) {
    s.bias.push_back(static_cast<float>(static_cast<int>(rng() % 2001) - 1000));
    s.scales.push_back(1.f / static_cast<float>(800 + rng() % 400) / static_cast<float>(p.k));
  }
  s.y_type = p.y_type;
  s.y_zero_point = p.y_type == DType::UInt8 ? 100 : 3;
  std::vector<int32_t> xv;
  Tensor x(p.x_type, s.x_dims);
  for (int64_t i = 0; i < x.numel(); ++i) {
    xv.push_back(xd(rng));
    if (p.x_type == DType::UInt8)
      x.data<uint8_t>()[i] = static_cast<uint8_t>(xv.back());
    else
      x.data<int8_t>()[i] = static_cast<int8_t>(xv.back());
  }
  Int8Conv conv(s, 2);
  const bool fits = p.wmin >= -128 && p.wmax <= 127;
  EXPECT_EQ(conv.impl() != "reference", fits) << conv.impl();
  Tensor y(p.y_type, conv.y_dims());
  conv.run(x.raw(), y.raw(), 2);
  auto want = reference_qconv(s, xv, conv.y_dims());
  auto got = y.to_int64s();
  ASSERT_EQ(got.size(), want.size());
  int64_t off = 0, spread = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), 1) << "element " << i;
    off += got[i] != want[i];
    spread += got[i] != got[0];
  }
  EXPECT_LE(off * 100, static_cast<int64_t>(got.size()));  // rounding ties only
  EXPECT_GT(spread, 0);                                    // the outputs are not all saturated
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Int8ConvTest,
    ::testing::Values(
        QConvCase{1, 16, 9, 11, 24, 3, 1, 1, 1, DType::UInt8, DType::UInt8, -128, 127},
        QConvCase{1, 16, 9, 11, 32, 1, 1, 1, 0, DType::UInt8, DType::Int8, -60, 60},
        QConvCase{2, 8, 10, 10, 16, 3, 2, 2, 1, DType::Int8, DType::UInt8, -128, 127},
        QConvCase{1, 8, 7, 7, 8, 3, 8, 1, 1, DType::UInt8, DType::UInt8, -100, 100},
        QConvCase{1, 4, 6, 6, 4, 3, 1, 1, 1, DType::UInt8, DType::UInt8, 0, 255},
        // Large enough to be split over output rows into one part per thread.
        QConvCase{1, 64, 32, 32, 64, 3, 1, 1, 1, DType::UInt8, DType::UInt8, -128, 127}));

TEST(QLinearConv, PerChannelUint8WeightsWithZeroPoint) {
  // 1x1 conv, 2 output channels, weights uint8 with zero points 128 and 0.
  // x - 10 = [10, 20]; channel 0 w - 128 = [1, -1] -> -10; channel 1 w = [2, 3] -> 80.
  // scales x 0.5 * w [1, 0.25] / y 1 -> [-5, 10]; + bias [4 * 0.5, -8 * 0.125] -> [-3, 9]; + y
  // zp 50.
  auto y = run_op("QLinearConv",
                  {u8({1, 2, 1, 1}, {20, 30}), floats({}, {0.5f}), u8({}, {10}),
                   u8({2, 2, 1, 1}, {129, 127, 2, 3}), floats({2}, {1.f, 0.25f}), u8({2}, {128, 0}),
                   floats({}, {1.f}), u8({}, {50}), s32({2}, {4, -8})},
                  {}, 1, {3, 4, 5});
  EXPECT_EQ(values(y[0]), (std::vector<int64_t>{47, 59}));
}

TEST(ConvInteger, Int32OutputWithPadding) {
  // 3x3 input, 2x2 kernel of ones, pad 1, x zp 1: sums of (x - 1) over each window.
  auto y = run_op("ConvInteger",
                  {u8({1, 1, 2, 2}, {2, 3, 4, 5}), u8({1, 1, 2, 2}, {1, 1, 1, 1}), u8({}, {1})},
                  {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, 1, {1});
  EXPECT_EQ(y[0].dtype(), DType::Int32);
  EXPECT_EQ(values(y[0]), (std::vector<int64_t>{1, 3, 2, 4, 10, 6, 3, 7, 4}));
}

TEST(MatMulInteger, PerRowAndPerColumnZeroPoints) {
  // a - [1, 2] per row = [[1, 2], [1, 1]]; b - [0, 1] per column = [[1, 0], [2, 1]].
  auto y = run_op("MatMulInteger", {u8({2, 2}, {2, 3, 3, 3}), u8({2, 2}, {1, 1, 2, 2}),
                                    u8({2}, {1, 2}), u8({2}, {0, 1})});
  EXPECT_EQ(values(y[0]), (std::vector<int64_t>{5, 2, 3, 1}));
}

TEST(QLinearMatMul, BatchedRowsThroughInt8MatMul) {
  // a [2, 3, 4] int8, b [4, 5] constant int8 with per-column scales, y uint8.
  std::mt19937 rng(3);
  std::vector<int8_t> av(24), bv(20);
  for (auto& v : av) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  for (auto& v : bv) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  std::vector<float> bs{0.01f, 0.02f, 0.03f, 0.015f, 0.005f};
  auto y = run_op("QLinearMatMul",
                  {s8({2, 3, 4}, av), floats({}, {0.05f}), s8({}, {2}), s8({4, 5}, bv),
                   floats({5}, bs), s8({}, {0}), floats({}, {0.5f}), u8({}, {128})},
                  {}, 1, {3, 4, 5});
  ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{2, 3, 5}));
  auto got = values(y[0]);
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t j = 0; j < 5; ++j) {
      int64_t acc = 0;
      for (int64_t k = 0; k < 4; ++k) acc += int64_t{av[r * 4 + k] - 2} * bv[k * 5 + j];
      const float v = static_cast<float>(acc) * (0.05f * bs[j] / 0.5f);
      const int64_t want =
          std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(v)) + 128, 0, 255);
      EXPECT_NEAR(got[r * 5 + j], want, 1) << r << "," << j;
    }
}

TEST(Int8MatMul, UsesOneDnnWhenWeightsFit) {
  Int8MatMulSpec s;
  s.m = 8, s.k = 16, s.n = 8;
  s.b.assign(16 * 8, 3);
  s.scales = {0.1f};
  s.y_type = DType::Int8;
  EXPECT_NE(Int8MatMul(s, 1).impl(), "reference");
  s.b[5] = 200;  // no longer fits int8: the exact loop
  EXPECT_EQ(Int8MatMul(s, 1).impl(), "reference");
}

}  // namespace
}  // namespace fx
