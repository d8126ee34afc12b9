// MatMul and Gemm large enough to be split into oneDNN parts over the pool
// (columns for constant weights, rows or batches otherwise), against a direct
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

}  // namespace
}  // namespace fx
