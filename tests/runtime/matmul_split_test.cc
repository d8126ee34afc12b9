// SPDX-License-Identifier: Apache-2.0
// MatMul and Gemm large enough to be split into oneDNN parts over the pool
// (columns for constant weights, rows or batches otherwise), and the single-row
// GEMV, against a direct
// reference computed here.

#include <random>

#include "runtime_test_util.h"

namespace fx {
namespace {

using test::random_floats;

// y[b] = a[b] (m x k) * w[b or 0] (k x n); w_batched false: one w for all.
std::vector<float> reference(const std::vector<float>& a, const std::vector<float>& w,
                             int64_t batch, int64_t m, int64_t k, int64_t n, bool w_batched) {
  std::vector<float> y(static_cast<std::size_t>(batch * m * n));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += a[(b * m + i) * k + p] * w[((w_batched ? b : 0) * k + p) * n + j];
        y[(b * m + i) * n + j] = static_cast<float>(acc);
      }
  return y;
}

TEST(MatMulSplit, ConstantWeightsSplitByColumns) {
  const int64_t m = 64, k = 256, n = 320;
  auto a = random_floats(m * k, 1), w = random_floats(k * n, 2);
  for (int threads : {1, 2, 3}) {
    auto y = test::run_op("MatMul", {test::floats({1, m, k}, a), test::floats({k, n}, w)}, {}, 1,
                          {1}, threads);
    EXPECT_THAT(y[0], test::FloatsNear(reference(a, w, 1, m, k, n, false))) << threads;
  }
}

TEST(MatMulSplit, RuntimeWeightsSplitByRows) {
  const int64_t m = 96, k = 256, n = 160;
  auto a = random_floats(m * k, 3), w = random_floats(k * n, 4);
  auto y = test::run_op("MatMul", {test::floats({m, k}, a), test::floats({k, n}, w)}, {}, 1, {}, 2);
  EXPECT_THAT(y[0], test::FloatsNear(reference(a, w, 1, m, k, n, false)));
}

TEST(MatMulSplit, BatchedSplitByBatch) {
  const int64_t b = 6, m = 64, k = 64, n = 96;
  auto a = random_floats(b * m * k, 5), w = random_floats(b * k * n, 6);
  auto y = test::run_op("MatMul", {test::floats({2, 3, m, k}, a), test::floats({2, 3, k, n}, w)},
                        {}, 1, {}, 2);
  ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{2, 3, m, n}));
  EXPECT_THAT(y[0], test::FloatsNear(reference(a, w, b, m, k, n, true)));
}

TEST(GemmSplit, TransposedConstantWeightsWithBias) {
  const int64_t m = 32, k = 512, n = 384;
  auto a = random_floats(m * k, 7), wt = random_floats(n * k, 8), bias = random_floats(n, 9);
  std::vector<float> w(static_cast<std::size_t>(k * n));  // wt transposed, for the reference
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < k; ++p) w[p * n + i] = wt[i * k + p];
  auto want = reference(a, w, 1, m, k, n, false);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) want[i * n + j] += bias[j];
  auto y = test::run_op(
      "Gemm", {test::floats({m, k}, a), test::floats({n, k}, wt), test::floats({n}, bias)},
      {{"transB", int64_t{1}}}, 1, {1, 2}, 2);
  EXPECT_THAT(y[0], test::FloatsNear(want));
}

// A single row against constant weights runs our GEMV (runtime/gemv.h): transposed
// and plain weights, k with and without a tail past the vector loop (1280 is
// MobileNetV2's head, 37 a tail only), n not a multiple of the four-row block,
// alpha and the bias vector, one to three threads.
TEST(GemmSingleRow, MatchesReference) {
  struct Case {
    int64_t k, n;
    bool trans_b;
    float alpha;
    bool bias;
  };
  for (const Case& c : {Case{1280, 1000, true, 1.f, true}, Case{37, 7, true, 1.f, false},
                        Case{100, 33, false, 0.5f, true}, Case{64, 5, false, 1.f, false}}) {
    auto a = random_floats(c.k, 10), wt = random_floats(c.n * c.k, 11),
         bias = random_floats(c.n, 12);
    std::vector<float> w(static_cast<std::size_t>(c.k * c.n));  // [k, n]
    for (int64_t i = 0; i < c.n; ++i)
      for (int64_t p = 0; p < c.k; ++p) w[p * c.n + i] = wt[i * c.k + p];
    auto want = reference(a, w, 1, 1, c.k, c.n, false);
    for (int64_t j = 0; j < c.n; ++j) want[j] = c.alpha * want[j] + (c.bias ? bias[j] : 0.f);
    std::vector<Tensor> in{test::floats({1, c.k}, a),
                           c.trans_b ? test::floats({c.n, c.k}, wt) : test::floats({c.k, c.n}, w)};
    if (c.bias) in.push_back(test::floats({c.n}, bias));
    GraphBuilder::AttrList attrs{{"transB", int64_t{c.trans_b ? 1 : 0}}, {"alpha", c.alpha}};
    for (int threads : {1, 2, 3}) {
      auto y = test::run_op("Gemm", in, attrs, 1, {1, 2}, threads);
      ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{1, c.n}));
      EXPECT_THAT(y[0], test::FloatsNear(want)) << c.k << "x" << c.n << " threads " << threads;
    }
  }
}

// alpha with a bias on several rows (oneDNN's path): the bias is not scaled.
TEST(GemmSplit, AlphaDoesNotScaleBias) {
  const int64_t m = 3, k = 8, n = 4;
  auto a = random_floats(m * k, 13), w = random_floats(k * n, 14), bias = random_floats(n, 15);
  auto want = reference(a, w, 1, m, k, n, false);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) want[i * n + j] = 2.f * want[i * n + j] + bias[j];
  auto y = test::run_op("Gemm",
                        {test::floats({m, k}, a), test::floats({k, n}, w), test::floats({n}, bias)},
                        {{"alpha", 2.f}}, 1, {1, 2}, 2);
  EXPECT_THAT(y[0], test::FloatsNear(want));
}

}  // namespace
}  // namespace fx
