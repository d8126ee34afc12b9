// SPDX-License-Identifier: Apache-2.0
// The generated kernels' exp (the prelude's fx_expf_le0 and fx_expf) against std::exp
// in double, compiled twice: with the kernels' own flags (-O3 -march=native: the
// vectorized path, AVX-512 on the bench machine) and as plain scalar x86-64 code
// without AVX or the vectorizer (what a machine without AVX-512 falls back to). The
// bound: relative error <= 2e-7 and <= 2.5 ulp against the exact value, over every
// 499th float of [-87.3, 88.3] (measured: 1.6e-7 / 1.96 ulp with FMA, 1.73e-7 / 2.14
// ulp without; the degree-6 Taylor exp before it: 2.3e-7), plus the edges: exp(0) = 1 exactly,
// exp(-inf) (a masked score) ~0 and finite, NaN passes through, fx_expf overflows to +inf.
// The AVX-512 exp of the Softmax row primitive (fx_exp16_le0: a 16-entry table and a
// degree-3 polynomial) is held to the same bound over x <= 0 (measured 1.6e-7 / 1.64 ulp).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "codegen/cpp_emitter.h"
#include "codegen/kernel_compiler.h"
#include "codegen_test_util.h"

namespace fx {
namespace {

using ExpFn = void (*)(const float*, float*, float*, int64_t);

// y_le0[i] = fx_expf_le0(x[i]) and y[i] = fx_expf(x[i]), in a loop the compiler may
// vectorize as it does the kernels' passes.
std::string exp_source() {
  return emit_cpp_prelude() + R"(
extern "C" void fx_test_exp(const float* x, float* y_le0, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y_le0[i] = fx_expf_le0(x[i]);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = fx_expf(x[i]);
}
)";
}

// y[i] = fx_exp16_le0 (the AVX-512 exp of the Softmax row primitive fx_exp_sum) of
// x[i] for x <= 0, 16 at a time, the rest masked; 0 from fx_test_has_exp16 where the
// prelude has no such function (no AVX-512).
std::string exp16_source() {
  return emit_cpp_prelude() + R"(
extern "C" int fx_test_has_exp16() {
#if defined(__AVX512F__)
  return 1;
#else
  return 0;
#endif
}
extern "C" void fx_test_exp16(const float* x, float* y, int64_t n) {
#if defined(__AVX512F__)
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = fx_mask16(n - i);
    _mm512_mask_storeu_ps(y + i, k, fx_exp16_le0(_mm512_maskz_loadu_ps(k, x + i)));
  }
#else
  (void)x, (void)y, (void)n;
#endif
}
)";
}

struct ExpBuild {
  std::shared_ptr<CompiledLibrary> lib;
  ExpFn fn = nullptr;
};

ExpBuild build(const std::vector<std::string>& flags, const std::string& stem) {
  CompilerOptions co;
  co.cache_dir = testing::test_cache_dir("expf");
  if (!flags.empty()) co.flags = flags;
  KernelCompiler cc(co);
  if (!cc.compiler()) return {};
  ExpBuild b;
  b.lib = cc.build(exp_source(), stem);
  b.fn = b.lib->symbol<ExpFn>("fx_test_exp");
  return b;
}

// Every 499th float of [lo, hi] (about 4 million), walking the bit patterns: dense
// near 0, where the polynomial's argument is the whole of x.
std::vector<float> sweep(float lo, float hi) {
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u & 0x7fffffffu;  // the magnitude's bits
  };
  auto of = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  std::vector<float> x;
  for (uint32_t m = bits(lo); m > 0 && m <= bits(lo); m -= std::min<uint32_t>(m, 499))
    x.push_back(-of(m));                                             // lo .. just below 0
  for (uint32_t m = 0; m <= bits(hi); m += 499) x.push_back(of(m));  // 0 .. hi
  return x;
}

struct Error {
  double rel = 0, ulp = 0;  // the largest relative error, and in units in the last place
  float worst = 0;          // the x of the largest ulp error
};

// Against exp in double; an ulp is that of the exact result's binade.
Error max_error(const std::vector<float>& x, const std::vector<float>& y) {
  Error m;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = std::exp(double(x[i]));
    const double d = std::fabs(double(y[i]) - e);
    const double ulp = std::ldexp(1.0, std::ilogb(e) - 23);
    m.rel = std::max(m.rel, d / e);
    if (d / ulp > m.ulp) {
      m.ulp = d / ulp;
      m.worst = x[i];
    }
  }
  return m;
}

void check_accuracy(ExpFn fn, const char* what) {
  SCOPED_TRACE(what);
  // Softmax's range (x - rowmax <= 0) down to the clamp, then the positive range.
  std::vector<float> x = sweep(-87.3f, 88.3f);
  ASSERT_GT(x.size(), 100000u);
  std::vector<float> le0(x.size()), full(x.size());
  fn(x.data(), le0.data(), full.data(), static_cast<int64_t>(x.size()));
  for (const auto& [name, y] : {std::pair{"fx_expf_le0", &le0}, std::pair{"fx_expf", &full}}) {
    const Error e = max_error(x, *y);
    EXPECT_LE(e.rel, 2e-7) << name;
    EXPECT_LE(e.ulp, 2.5) << name << ", worst at x = " << e.worst;
    std::printf("%s %s: max relative error %.3g, %.2f ulp (x = %.9g)\n", what, name, e.rel, e.ulp,
                e.worst);
  }

  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> edge{0.f, -0.f, -INFINITY, -1000.f, -87.3f, nan, 88.8f, INFINITY, 1000.f};
  std::vector<float> e0(edge.size()), e1(edge.size());
  fn(edge.data(), e0.data(), e1.data(), static_cast<int64_t>(edge.size()));
  EXPECT_EQ(e0[0], 1.f);
  EXPECT_EQ(e0[1], 1.f);
  for (int k : {2, 3, 4}) {  // below the clamp: ~1e-38, never NaN or negative
    EXPECT_GE(e0[k], 0.f) << edge[k];
    EXPECT_LT(e0[k], 1.3e-38f) << edge[k];
  }
  EXPECT_TRUE(std::isnan(e0[5]));
  EXPECT_TRUE(std::isnan(e1[5]));
  for (int k : {6, 7, 8}) EXPECT_EQ(e1[k], INFINITY) << edge[k];
  EXPECT_EQ(e1[2], e0[2]);
}

TEST(ExpfAccuracy, VectorizedWithTheKernelFlags) {
  ExpBuild b = build({}, "expf_native");
  if (!b.fn) GTEST_SKIP() << "no C++ compiler";
  check_accuracy(b.fn, "kernel flags (-O3 -march=native)");
}

TEST(ExpfAccuracy, ScalarWithoutAvx) {
#if defined(__x86_64__)
  const std::vector<std::string> flags{
      "-O2", "-march=x86-64", "-mno-avx", "-fno-tree-vectorize", "-shared", "-fPIC"};
#else
  const std::vector<std::string> flags{"-O2", "-fno-tree-vectorize", "-shared", "-fPIC"};
#endif
  ExpBuild b = build(flags, "expf_scalar");
  if (!b.fn) GTEST_SKIP() << "no C++ compiler";
  check_accuracy(b.fn, "scalar, no AVX");
}

TEST(ExpfAccuracy, Avx512RowPrimitiveExp) {
  CompilerOptions co;
  co.cache_dir = testing::test_cache_dir("expf");
  KernelCompiler cc(co);
  if (!cc.compiler()) GTEST_SKIP() << "no C++ compiler";
  auto lib = cc.build(exp16_source(), "expf_exp16");
  if (!lib->symbol<int (*)()>("fx_test_has_exp16")()) GTEST_SKIP() << "no AVX-512 here";
  auto fn = lib->symbol<void (*)(const float*, float*, int64_t)>("fx_test_exp16");
  // Its domain: x - rowmax <= 0, down to the clamp (a count that is no multiple of 16:
  // the masked tail too).
  std::vector<float> x = sweep(-87.3f, 0.f);
  x.push_back(-1.f);
  ASSERT_GT(x.size(), 100000u);
  std::vector<float> y(x.size());
  fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
  const Error e = max_error(x, y);
  EXPECT_LE(e.rel, 2e-7);
  EXPECT_LE(e.ulp, 2.5) << "worst at x = " << e.worst;
  std::printf("fx_exp16_le0: max relative error %.3g, %.2f ulp (x = %.9g)\n", e.rel, e.ulp,
              e.worst);

  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> edge{0.f, -0.f, -INFINITY, -1000.f, -87.3f, nan, -1e-30f, -0.5f};
  std::vector<float> ye(edge.size());
  fn(edge.data(), ye.data(), static_cast<int64_t>(edge.size()));
  EXPECT_EQ(ye[0], 1.f);
  EXPECT_EQ(ye[1], 1.f);
  for (int k : {2, 3, 4}) {  // below the clamp: ~1e-38, never NaN or negative
    EXPECT_GE(ye[k], 0.f) << edge[k];
    EXPECT_LT(ye[k], 1.3e-38f) << edge[k];
  }
  EXPECT_TRUE(std::isnan(ye[5]));
  EXPECT_EQ(ye[6], 1.f);
  EXPECT_NEAR(ye[7], std::exp(-0.5), 2e-7);
}

}  // namespace
}  // namespace fx
