// SPDX-License-Identifier: Apache-2.0
// The reference-speed ops: trigonometric/hyperbolic, Shrink, BitShift, Det,
// Einsum, windows, DFT, STFT, MelWeightMatrix, GridSample, Resize cubic, random.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "runtime_test_util.h"

namespace fx {
namespace {

using test::floats;
using test::FloatsNear;
using test::int64s;
using test::run_op;

TEST(MathKernels, InverseFunctionsUndoTheirFunctions) {
  std::vector<float> v{-0.9f, -0.3f, 0.0f, 0.4f, 0.8f};
  auto x = floats({5}, v);
  auto pairs = std::vector<std::pair<std::string, std::string>>{
      {"Tan", "Atan"}, {"Sin", "Asin"}, {"Sinh", "Asinh"}};
  for (const auto& [f, g] : pairs) {
    auto y = run_op(g, {run_op(f, {x})[0]});
    EXPECT_THAT(y[0], FloatsNear(v)) << f << "/" << g;
  }
  EXPECT_THAT(run_op("Atanh", {floats({1}, {0.5f})})[0],
              FloatsNear(std::vector<float>{0.5493061f}));
  auto c = run_op("Acos", {run_op("Cos", {floats({3}, {0.1f, 1.0f, 3.0f})})[0]});
  EXPECT_THAT(c[0], FloatsNear(std::vector<float>{0.1f, 1.0f, 3.0f}));
  auto h = run_op("Acosh", {run_op("Cosh", {floats({2}, {0.5f, 2.0f})})[0]});
  EXPECT_THAT(h[0], FloatsNear(std::vector<float>{0.5f, 2.0f}));
}

TEST(MathKernels, ShrinkBitShiftDet) {
  auto s = run_op("Shrink", {floats({5}, {-2, -1, 0, 1, 2})}, {{"lambd", 1.5f}, {"bias", 1.5f}});
  EXPECT_THAT(s[0], FloatsNear(std::vector<float>{-0.5f, 0, 0, 0, 0.5f}));
  Tensor a(DType::UInt8, {3}), b(DType::UInt8, {3});
  for (int i = 0; i < 3; ++i)
    a.data<uint8_t>()[i] = static_cast<uint8_t>(16 * (i + 1)),
    b.data<uint8_t>()[i] = static_cast<uint8_t>(i + 1);
  auto l = run_op("BitShift", {a, b}, {{"direction", std::string("LEFT")}});
  EXPECT_EQ(l[0].to_int64s(), (std::vector<int64_t>{32, 128, 128}));  // 48 << 3 wraps in uint8
  auto r = run_op("BitShift", {a, b}, {{"direction", std::string("RIGHT")}});
  EXPECT_EQ(r[0].to_int64s(), (std::vector<int64_t>{8, 8, 6}));
  auto d = run_op("Det", {floats({2, 3, 3}, {2, 0, 0, 0, 3, 0, 0, 0, 4,      // diagonal: 24
                                             0, 1, 0, 1, 0, 0, 0, 0, 1})});  // a swap: -1
  EXPECT_THAT(d[0], FloatsNear(std::vector<float>{24, -1}));
}

TEST(Einsum, MatmulTraceDiagonalAndImplicitOutput) {
  auto a = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = floats({3, 2}, {1, 0, 0, 1, 1, 1});
  auto m = run_op("Einsum", {a, b}, {{"equation", std::string("ij, jk -> ik")}});
  EXPECT_EQ(m[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(m[0], FloatsNear(std::vector<float>{4, 5, 10, 11}));
  auto sq = floats({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto diag = run_op("Einsum", {sq}, {{"equation", std::string("...ii->...i")}});
  EXPECT_THAT(diag[0], FloatsNear(std::vector<float>{1, 4, 5, 8}));
  auto tr = run_op("Einsum", {floats({2, 2}, {1, 2, 3, 4})}, {{"equation", std::string("ii")}});
  EXPECT_EQ(tr[0].rank(), 0u);
  EXPECT_THAT(tr[0], FloatsNear(std::vector<float>{5}));
  auto t = run_op("Einsum", {a}, {{"equation", std::string("ji")}});  // implicit: "ij"
  EXPECT_THAT(t[0], FloatsNear(std::vector<float>{1, 4, 2, 5, 3, 6}));
}

// Two float32 inputs that form a batched matrix product take the sgemm path; the same
// inputs in float64 take the summation. Both must agree, broadcast and permuted letters
// included.
TEST(Einsum, MatmulFormAgreesWithTheSummation) {
  struct Case {
    const char* eq;
    std::vector<int64_t> a, b;
  };
  const Case cases[] = {
      {"B G H I D, B G H J D -> B G H I J", {1, 2, 3, 5, 4}, {1, 2, 3, 6, 4}},
      {"B G H I J, B G H J D -> B G H I D", {1, 2, 3, 5, 6}, {1, 2, 3, 6, 4}},
      {"bij,jk->bki", {3, 4, 5}, {5, 2}},
      {"bij,bjk->bik", {3, 4, 5}, {1, 5, 2}},  // batch broadcast in the second input
      {"i,j->ij", {4}, {3}},                   // outer product: nothing contracted
      {"...ij,...jk", {2, 3, 4}, {2, 4, 5}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.eq);
    auto make = [](const std::vector<int64_t>& dims, DType dt, int seed) {
      Tensor t(dt, dims);
      for (int64_t i = 0; i < t.numel(); ++i) {
        const double v = std::sin(0.7 * static_cast<double>(i) + seed);
        if (dt == DType::Float32)
          t.data<float>()[i] = static_cast<float>(v);
        else
          t.data<double>()[i] = v;
      }
      return t;
    };
    const std::vector<std::pair<std::string, AttributeValue>> eq{{"equation", std::string(c.eq)}};
    auto f = run_op("Einsum", {make(c.a, DType::Float32, 1), make(c.b, DType::Float32, 2)}, eq);
    auto d = run_op("Einsum", {make(c.a, DType::Float64, 1), make(c.b, DType::Float64, 2)}, eq);
    ASSERT_EQ(f[0].dims(), d[0].dims());
    for (int64_t i = 0; i < f[0].numel(); ++i)
      EXPECT_NEAR(f[0].data<float>()[i], d[0].data<double>()[i], 1e-5) << "element " << i;
  }
}

TEST(Signal, WindowsMatchTheirFormulas) {
  auto n = int64s({}, {4});
  auto hann = run_op("HannWindow", {n});
  EXPECT_THAT(hann[0], FloatsNear(std::vector<float>{0, 0.5f, 1, 0.5f}));
  auto sym = run_op("HannWindow", {n}, {{"periodic", int64_t{0}}});
  EXPECT_THAT(sym[0], FloatsNear(std::vector<float>{0, 0.75f, 0.75f, 0}));
  auto ham = run_op("HammingWindow", {n});
  EXPECT_NEAR(ham[0].to_floats()[0], 4.0f / 46, 1e-6f);
  auto bl = run_op("BlackmanWindow", {n}, {{"output_datatype", int64_t{11}}});
  EXPECT_EQ(bl[0].dtype(), DType::Float64);
  EXPECT_NEAR(bl[0].to_floats()[2], 0.42 + 0.5 + 0.08, 1e-6);
}

TEST(Signal, DftOfACosineIsTwoSpikesAndInverseRestoresIt) {
  const int n = 8;
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = std::cos(2 * std::numbers::pi_v<float> * i / n);
  auto y = run_op("DFT", {floats({1, n, 1}, v)});
  ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{1, n, 2}));
  auto f = y[0].to_floats();
  for (int k = 0; k < n; ++k) {
    const float want = (k == 1 || k == n - 1) ? n / 2.0f : 0.0f;
    EXPECT_NEAR(f[static_cast<std::size_t>(2 * k)], want, 1e-4f) << k;
    EXPECT_NEAR(f[static_cast<std::size_t>(2 * k + 1)], 0.0f, 1e-4f) << k;
  }
  auto one = run_op("DFT", {floats({1, n, 1}, v)}, {{"onesided", int64_t{1}}});
  EXPECT_EQ(one[0].dims(), (std::vector<int64_t>{1, n / 2 + 1, 2}));
  auto back = run_op("DFT", {y[0]}, {{"inverse", int64_t{1}}});
  auto b = back[0].to_floats();
  for (int i = 0; i < n; ++i)
    EXPECT_NEAR(b[static_cast<std::size_t>(2 * i)], v[static_cast<std::size_t>(i)], 1e-5f);
}

TEST(Signal, StftFramesAreDftsOfWindowedSlices) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i % 5);
  auto y = run_op("STFT", {floats({1, 16, 1}, v), int64s({}, {4}), Tensor(), int64s({}, {8})});
  ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{1, 3, 5, 2}));
  // Bin 0 of frame f is the sum of its 8 samples.
  auto f = y[0].to_floats();
  for (int fr = 0; fr < 3; ++fr) {
    float sum = 0;
    for (int j = 0; j < 8; ++j) sum += v[static_cast<std::size_t>(fr * 4 + j)];
    EXPECT_NEAR(f[static_cast<std::size_t>(fr * 10)], sum, 1e-4f);
  }
}

TEST(Signal, MelFiltersAreTrianglesThatPeakAtOne) {
  auto w = run_op("MelWeightMatrix", {int64s({}, {4}), int64s({}, {64}), int64s({}, {8000}),
                                      floats({}, {0}), floats({}, {4000})});
  ASSERT_EQ(w[0].dims(), (std::vector<int64_t>{33, 4}));
  auto v = w[0].to_floats();
  for (int m = 0; m < 4; ++m) {
    float peak = 0;
    for (int b = 0; b < 33; ++b) peak = std::max(peak, v[static_cast<std::size_t>(b * 4 + m)]);
    EXPECT_FLOAT_EQ(peak, 1.0f) << m;
  }
}

TEST(GridSample, IdentityGridReproducesTheInputInEveryMode) {
  auto x = floats({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  // align_corners: -1 and 1 are the corner pixels' centres.
  std::vector<float> g;
  for (int y = 0; y < 2; ++y)
    for (int xx = 0; xx < 3; ++xx) g.push_back(-1.0f + xx), g.push_back(-1.0f + 2.0f * y);
  for (const char* mode : {"nearest", "bilinear", "bicubic"}) {
    auto y = run_op("GridSample", {x, floats({1, 2, 3, 2}, g)},
                    {{"align_corners", int64_t{1}}, {"mode", std::string(mode)}});
    EXPECT_THAT(y[0], FloatsNear(x.to_floats())) << mode;
  }
  // Far outside: zeros padding gives 0, border the nearest edge pixel.
  auto out = floats({1, 1, 2, 2}, {5, 5, -5, -5});
  EXPECT_THAT(run_op("GridSample", {x, out})[0], FloatsNear(std::vector<float>{0, 0}));
  auto border = run_op("GridSample", {x, out}, {{"padding_mode", std::string("border")}});
  EXPECT_THAT(border[0], FloatsNear(std::vector<float>{6, 1}));
}

// Nearest and bilinear under zeros and border padding, both align_corners forms, on
// grids that reach past every edge, against the ONNX formulas written out in double.
TEST(GridSample, NearestAndBilinearFollowTheFormulaUnderEveryPaddingAndAlignment) {
  const int64_t n = 3, c = 2, h = 5, w = 7, ho = 6, wo = 9;
  std::vector<float> xv(static_cast<std::size_t>(n * c * h * w)), gv;
  for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = std::cos(0.53f * float(i)) * 2 + 0.1f;
  for (int64_t i = 0; i < n * ho * wo; ++i)
    gv.push_back(std::sin(0.77f * float(i)) * 1.3f), gv.push_back(std::cos(1.1f * float(i)) * 1.3f);
  for (const char* mode : {"nearest", "bilinear"})
    for (const char* padding : {"zeros", "border"})
      for (int64_t align : {0, 1}) {
        const bool border = std::string(padding) == "border";
        auto y = run_op("GridSample", {floats({n, c, h, w}, xv), floats({n, ho, wo, 2}, gv)},
                        {{"align_corners", align},
                         {"mode", std::string(mode)},
                         {"padding_mode", std::string(padding)}});
        std::vector<float> want;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t p = 0; p < ho * wo; ++p) {
              const double gx = gv[static_cast<std::size_t>(2 * (i * ho * wo + p))];
              const double gy = gv[static_cast<std::size_t>(2 * (i * ho * wo + p) + 1)];
              auto pixel = [&](double g, int64_t size) {
                double v =
                    align ? (g + 1) / 2 * double(size - 1) : ((g + 1) * double(size) - 1) / 2;
                return border ? std::clamp(v, 0.0, double(size - 1)) : v;
              };
              const double px = pixel(gx, w), py = pixel(gy, h);
              auto at = [&](double yy, double xx) -> double {
                if (border)
                  yy = std::clamp(yy, 0.0, double(h - 1)), xx = std::clamp(xx, 0.0, double(w - 1));
                if (yy < 0 || yy >= double(h) || xx < 0 || xx >= double(w)) return 0;
                return xv[static_cast<std::size_t>(((i * c + ch) * h + int64_t(yy)) * w +
                                                   int64_t(xx))];
              };
              if (std::string(mode) == "nearest") {
                want.push_back(float(at(std::nearbyint(py), std::nearbyint(px))));
                continue;
              }
              const double x0 = std::floor(px), y0 = std::floor(py), tx = px - x0, ty = py - y0;
              want.push_back(float((1 - ty) * ((1 - tx) * at(y0, x0) + tx * at(y0, x0 + 1)) +
                                   ty * ((1 - tx) * at(y0 + 1, x0) + tx * at(y0 + 1, x0 + 1))));
            }
        EXPECT_THAT(y[0], FloatsNear(want)) << mode << " " << padding << " align " << align;
      }
}

TEST(ResizeCubic, KeepsConstantsAndIdentityAndInterpolatesSmoothly) {
  auto c =
      run_op("Resize", {floats({1, 1, 2, 2}, {3, 3, 3, 3}), Tensor(), floats({4}, {1, 1, 2, 2})},
             {{"mode", std::string("cubic")}});
  EXPECT_EQ(c[0].dims(), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_THAT(c[0], FloatsNear(std::vector<float>(16, 3.0f)));
  // align_corners keeps the samples at the input positions; a line stays a line
  // between them (cubic convolution reproduces linear functions away from edges).
  std::vector<float> ramp{0, 1, 2, 3, 4, 5, 6, 7};
  auto y = run_op("Resize", {floats({1, 8}, ramp), Tensor(), Tensor(), int64s({2}, {1, 15})},
                  {{"mode", std::string("cubic")},
                   {"coordinate_transformation_mode", std::string("align_corners")}});
  auto v = y[0].to_floats();
  for (int i = 0; i < 15; i += 2) EXPECT_NEAR(v[static_cast<std::size_t>(i)], i / 2.0f, 1e-5f);
  for (int i = 3; i < 12; i += 2) EXPECT_NEAR(v[static_cast<std::size_t>(i)], i / 2.0f, 1e-5f);
}

TEST(Random, SeededOpsRepeatAndStayInRange) {
  auto x = floats({1000}, std::vector<float>(1000, 0.0f));
  auto a = run_op("RandomUniformLike", {x}, {{"seed", 3.0f}, {"low", 2.0f}, {"high", 4.0f}});
  auto b = run_op("RandomUniformLike", {x}, {{"seed", 3.0f}, {"low", 2.0f}, {"high", 4.0f}});
  EXPECT_EQ(a[0].to_floats(), b[0].to_floats());
  for (float v : a[0].to_floats()) {
    EXPECT_GE(v, 2.0f);
    EXPECT_LT(v, 4.0f);
  }
  auto p = floats({1000}, std::vector<float>(1000, 0.25f));
  auto bern = run_op("Bernoulli", {p}, {{"seed", 1.0f}});
  float ones = 0;
  for (float v : bern[0].to_floats()) ones += v;
  EXPECT_GT(ones, 180);  // 250 expected; 5 standard deviations is ~70
  EXPECT_LT(ones, 320);
}

}  // namespace
}  // namespace fx
