// SPDX-License-Identifier: Apache-2.0
// The integer Conv / MatMul kernels stay exact whatever ISA oneDNN dispatches to:
// inputs at the ends of their ranges (x 0 or 255, w -128 or 127) make the 16-bit
// pair sums of the pre-VNNI kernels saturate, so a kernel that trusts them is off
// by many steps. ctest runs this suite a second and third time with oneDNN capped at
// AVX2 and at AVX512_CORE (tests/CMakeLists.txt), where those kernels are chosen.

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "runtime/int8_conv.h"
#include "runtime/int8_exact.h"
#include "runtime/int8_matmul.h"
#include "runtime/quant_math.h"
#include "runtime_test_util.h"

namespace fx {
namespace {

// Values at either end of the type's range.
std::vector<int32_t> extremes(std::mt19937& rng, int64_t count, int lo, int hi) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < count; ++i) v.push_back(rng() % 2 ? hi : lo);
  return v;
}

Tensor bytes_tensor(DType t, const std::vector<int64_t>& dims, const std::vector<int32_t>& v) {
  Tensor out(t, dims);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (t == DType::UInt8)
      out.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
    else
      out.data<int8_t>()[i] = static_cast<int8_t>(v[i]);
  }
  return out;
}

// The exact result of one output element, in the output's type, as the spec defines it.
int64_t requantized(DType y_type, int64_t acc, float bias, float scale, bool relu, int32_t zp) {
  Tensor one(y_type, {1});
  store_accumulated(y_type, one.raw(), 0, double(acc) + bias, scale, relu, zp);
  return one.to_int64s()[0];
}

void expect_matches(const std::vector<int64_t>& got, const std::vector<int64_t>& want, DType y_type,
                    const std::string& impl) {
  ASSERT_EQ(got.size(), want.size());
  int64_t off = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (y_type == DType::Int32) {
      ASSERT_EQ(got[i], want[i]) << "element " << i << " (" << impl << ")";
    } else {
      // oneDNN's fused requantization may round a tie the other way; never more.
      ASSERT_LE(std::abs(got[i] - want[i]), 1) << "element " << i << " (" << impl << ")";
      off += got[i] != want[i];
    }
  }
  EXPECT_LE(off * 100, static_cast<int64_t>(got.size())) << impl;
}

struct ExactConvCase {
  int64_t n, c, h, w, m, k, group, stride;
  DType x_type, y_type;
  bool relu, x_nhwc, y_nhwc;
};

class Int8ExactConv : public ::testing::TestWithParam<ExactConvCase> {};

TEST_P(Int8ExactConv, ExtremeValuesGiveTheIntegerResult) {
  const ExactConvCase p = GetParam();
  std::mt19937 rng(11);
  Int8ConvSpec s;
  s.x_dims = {p.n, p.c, p.h, p.w};
  s.w_dims = {p.m, p.c / p.group, p.k, p.k};
  s.group = p.group;
  s.strides = {p.stride, p.stride};
  s.dilations = {1, 1};
  s.pads_begin = s.pads_end = {p.k / 2, p.k / 2};
  s.x_type = p.x_type;
  const bool u8 = p.x_type == DType::UInt8;
  s.x_zero_point = u8 ? 3 : -5;
  s.weights = extremes(rng, dims_numel(s.w_dims), -128, 127);
  for (int64_t o = 0; o < p.m; ++o) {
    s.bias.push_back(static_cast<float>(static_cast<int>(rng() % 2001) - 1000));
    s.scales.push_back(1.f / static_cast<float>(20000 + rng() % 20000) / static_cast<float>(p.k));
  }
  s.y_type = p.y_type;
  s.y_zero_point = p.y_type == DType::UInt8 ? 100 : 3;
  s.relu = p.relu;
  const auto xv = extremes(rng, dims_numel(s.x_dims), u8 ? 0 : -128, u8 ? 255 : 127);

  Int8Conv conv(s, 2);
  ASSERT_NE(conv.impl(), "reference");
  // Weights beyond 7 bits: split exactly where oneDNN lacks VNNI, and only there.
  EXPECT_EQ(conv.impl().find("7-bit weight halves") != std::string::npos, !onednn_int8_dot_exact())
      << conv.impl();
  const auto yd = conv.y_dims();
  const int64_t oh = yd[2], ow = yd[3], cg = p.c / p.group, mg = p.m / p.group;

  // Inputs and outputs in the memory order the kernel is told.
  std::vector<int32_t> xin(xv.size());
  for (int64_t b = 0; b < p.n; ++b)
    for (int64_t ch = 0; ch < p.c; ++ch)
      for (int64_t i = 0; i < p.h * p.w; ++i) {
        const int64_t nchw = (b * p.c + ch) * p.h * p.w + i, nhwc = (b * p.h * p.w + i) * p.c + ch;
        xin[p.x_nhwc ? nhwc : nchw] = xv[nchw];
      }
  Tensor x = bytes_tensor(p.x_type, s.x_dims, xin);
  Tensor y(p.y_type, yd);
  conv.run(x.raw(), y.raw(), 2, p.x_nhwc, p.y_nhwc);
  const auto got_raw = y.to_int64s();

  std::vector<int64_t> want, got;
  for (int64_t b = 0; b < p.n; ++b)
    for (int64_t o = 0; o < p.m; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t acc = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t a = 0; a < p.k; ++a)
              for (int64_t e = 0; e < p.k; ++e) {
                const int64_t ii = i * p.stride - p.k / 2 + a, jj = j * p.stride - p.k / 2 + e;
                if (ii < 0 || ii >= p.h || jj < 0 || jj >= p.w) continue;
                const int64_t xi = ((b * p.c + (o / mg) * cg + ci) * p.h + ii) * p.w + jj;
                acc += int64_t{xv[xi] - s.x_zero_point} *
                       s.weights[((o * cg + ci) * p.k + a) * p.k + e];
              }
          want.push_back(
              requantized(p.y_type, acc, s.bias[o], s.scales[o], p.relu, s.y_zero_point));
          const int64_t pix = i * ow + j;
          got.push_back(
              got_raw[p.y_nhwc ? (b * oh * ow + pix) * p.m + o : (b * p.m + o) * oh * ow + pix]);
        }
  expect_matches(got, want, p.y_type, conv.impl());
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Int8ExactConv,
    ::testing::Values(
        // Dense 3x3, 1x1 (its own oneDNN kernel), grouped, depthwise, s8 sources
        // (which pre-VNNI oneDNN would halve), strided batches, NHWC in and out.
        ExactConvCase{1, 32, 9, 11, 24, 3, 1, 1, DType::UInt8, DType::Int32, false, false, false},
        ExactConvCase{1, 64, 8, 8, 32, 1, 1, 1, DType::UInt8, DType::Int32, false, false, false},
        ExactConvCase{1, 64, 8, 8, 32, 1, 1, 1, DType::UInt8, DType::UInt8, true, false, false},
        ExactConvCase{2, 16, 10, 10, 16, 3, 2, 2, DType::Int8, DType::Int32, false, false, false},
        ExactConvCase{1, 16, 12, 12, 16, 3, 16, 1, DType::UInt8, DType::Int32, false, false, false},
        ExactConvCase{1, 16, 12, 12, 16, 3, 16, 1, DType::Int8, DType::Int8, false, true, true},
        ExactConvCase{1, 32, 16, 16, 32, 3, 1, 1, DType::Int8, DType::UInt8, true, true, false},
        ExactConvCase{1, 64, 20, 20, 64, 3, 1, 1, DType::UInt8, DType::Float32, false, false,
                      true}));

struct ExactMatMulCase {
  int64_t m, k, n;
  DType a_type, y_type;
};

class Int8ExactMatMul : public ::testing::TestWithParam<ExactMatMulCase> {};

TEST_P(Int8ExactMatMul, ExtremeValuesGiveTheIntegerResult) {
  const ExactMatMulCase p = GetParam();
  std::mt19937 rng(5);
  Int8MatMulSpec s;
  s.m = p.m, s.k = p.k, s.n = p.n;
  s.a_type = p.a_type;
  const bool u8 = p.a_type == DType::UInt8;
  s.a_zero_point = u8 ? 7 : -2;
  s.b = extremes(rng, p.k * p.n, -128, 127);
  for (int64_t j = 0; j < p.n; ++j) {
    s.bias.push_back(static_cast<float>(static_cast<int>(rng() % 201) - 100));
    s.scales.push_back(1.f / static_cast<float>(4000 + rng() % 4000) / static_cast<float>(p.k));
  }
  s.y_type = p.y_type;
  s.y_zero_point = p.y_type == DType::UInt8 ? 128 : 0;
  const auto av = extremes(rng, p.m * p.k, u8 ? 0 : -128, u8 ? 255 : 127);
  Int8MatMul mm(s, 2);
  ASSERT_NE(mm.impl(), "reference");
  EXPECT_EQ(mm.impl().find("7-bit weight halves") != std::string::npos, !onednn_int8_dot_exact())
      << mm.impl();
  Tensor a = bytes_tensor(p.a_type, {p.m, p.k}, av);
  Tensor y(p.y_type, {p.m, p.n});
  mm.run(a.raw(), y.raw(), 2);
  std::vector<int64_t> want;
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      int64_t acc = 0;
      for (int64_t kk = 0; kk < p.k; ++kk)
        acc += int64_t{av[i * p.k + kk] - s.a_zero_point} * s.b[kk * p.n + j];
      want.push_back(requantized(p.y_type, acc, s.bias[j], s.scales[j], false, s.y_zero_point));
    }
  expect_matches(y.to_int64s(), want, p.y_type, mm.impl());
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int8ExactMatMul,
                         ::testing::Values(ExactMatMulCase{16, 64, 24, DType::UInt8, DType::Int32},
                                           ExactMatMulCase{37, 96, 40, DType::Int8, DType::Int32},
                                           ExactMatMulCase{64, 128, 64, DType::Int8, DType::UInt8},
                                           ExactMatMulCase{8, 256, 16, DType::UInt8,
                                                           DType::Float32}));

TEST(Int8Exact, OneDnnIsaCapDecidesTheMethod) {
  // A cap below VNNI (how ctest runs this suite a second time) must be seen: the
  // kernels then split their weights.
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::string c = cap ? cap : "";
  if (c == "SSE41" || c == "AVX" || c == "AVX2" || c == "AVX512_CORE") {
    EXPECT_FALSE(onednn_int8_dot_exact()) << c;
  }
  // 7-bit weights need no split anywhere.
  Int8MatMulSpec s;
  s.m = 8, s.k = 16, s.n = 8;
  s.b.assign(16 * 8, 64);
  s.b[3] = -64;
  s.scales = {0.1f};
  s.y_type = DType::Int8;
  Int8MatMul mm(s, 1);
  EXPECT_NE(mm.impl(), "reference");
  EXPECT_EQ(mm.impl().find("halves"), std::string::npos) << mm.impl();
}

TEST(Int8Exact, WeightHalvesAreSevenBitAndSumBack) {
  std::vector<int32_t> w;
  for (int v = -128; v <= 127; ++v) w.push_back(v);
  auto h = split_weights_7bit(w);
  for (std::size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(h.lo[i] + h.hi[i], w[i]);
    EXPECT_LE(std::abs(int{h.lo[i]}), 64);
    EXPECT_LE(std::abs(int{h.hi[i]}), 64);
  }
  EXPECT_TRUE(fits_7bit({-64, 0, 64}));
  EXPECT_FALSE(fits_7bit({-65}));
  EXPECT_FALSE(fits_7bit({65}));
}

}  // namespace
}  // namespace fx
