// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include "runtime_test_util.h"

namespace fx {
namespace {

using test::floats;
using test::FloatsNear;
using test::int64s;
using test::run_op;

Tensor x23() {
  return floats({2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(Reduce, AxesAttributeAndInputKeepdims) {
  auto m = run_op("ReduceMean", {x23()}, {{"axes", std::vector<int64_t>{-1}}});
  EXPECT_EQ(m[0].dims(), (std::vector<int64_t>{2, 1}));
  EXPECT_THAT(m[0], FloatsNear(std::vector<float>{2, 5}));
  auto s = run_op("ReduceSum", {x23(), int64s({1}, {0})}, {{"keepdims", int64_t{0}}});
  EXPECT_EQ(s[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_THAT(s[0], FloatsNear(std::vector<float>{5, 7, 9}));
  auto all = run_op("ReduceMax", {x23()}, {{"keepdims", int64_t{0}}});
  EXPECT_EQ(all[0].rank(), 0u);
  EXPECT_THAT(all[0], FloatsNear(std::vector<float>{6}));
}

TEST(Reduce, NonAdjacentAxes) {
  Tensor x(DType::Float32, {2, 2, 2});
  for (int i = 0; i < 8; ++i) x.data<float>()[i] = static_cast<float>(i);
  auto y =
      run_op("ReduceMin", {x}, {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", int64_t{0}}});
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{0, 2}));
}

TEST(Softmax, LastAxisAndNegativeAxisInTheMiddle) {
  auto y = run_op("Softmax", {floats({1, 3}, {0, 0, std::log(2.0f)})});
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{0.25f, 0.25f, 0.5f}));
  // axis -2 of [2,2]: softmax down the columns.
  auto z = run_op("Softmax", {floats({2, 2}, {0, 1, 0, 1})}, {{"axis", int64_t{-2}}});
  EXPECT_THAT(z[0], FloatsNear(std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}));
  auto l = run_op("LogSoftmax", {floats({2}, {0, 0})});
  EXPECT_THAT(l[0], FloatsNear(std::vector<float>{-std::log(2.0f), -std::log(2.0f)}));
}

TEST(Normalization, BatchNormPerChannel) {
  Tensor x = floats({1, 2, 1, 2}, {1, 3, 10, 20});
  auto y = run_op(
      "BatchNormalization",
      {x, floats({2}, {2, 1}), floats({2}, {0, 1}), floats({2}, {2, 10}), floats({2}, {1, 4})},
      {{"epsilon", 0.0f}}, 1, {1, 2, 3, 4});
  // channel 0: (x-2)/1*2+0; channel 1: (x-10)/2*1+1
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{-2, 2, 1, 6}));
}

TEST(Normalization, LayerNormOverLastAxis) {
  auto y = run_op("LayerNormalization",
                  {floats({2, 2}, {1, 3, 5, 5}), floats({2}, {1, 2}), floats({2}, {0, 1})},
                  {{"epsilon", 0.0f}});
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{-1, 3, 0, 1}));
}

TEST(Pooling, MaxAverageGlobal) {
  Tensor x = floats({1, 1, 2, 3}, {1, 5, 2, 4, 3, 6});
  auto m = run_op("MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(m[0].dims(), (std::vector<int64_t>{1, 1, 1, 2}));
  EXPECT_THAT(m[0], FloatsNear(std::vector<float>{5, 6}));
  auto a = run_op(
      "AveragePool", {x},
      {{"kernel_shape", std::vector<int64_t>{1, 2}}, {"pads", std::vector<int64_t>{0, 1, 0, 0}}});
  // count_include_pad = 0: the padded position is not counted.
  EXPECT_THAT(a[0], FloatsNear(std::vector<float>{1, 3, 3.5f, 4, 3.5f, 4.5f}));
  auto g = run_op("GlobalAveragePool", {x});
  EXPECT_THAT(g[0], FloatsNear(std::vector<float>{3.5f}));
}

// Rows of every length (lane blocks of 32 and 8, scalar tails): Softmax, LogSoftmax and
// LayerNormalization against a double-precision reference.
TEST(Normalization, RowsOfEveryLengthMatchADoubleReference) {
  for (int64_t len : {1, 7, 8, 33, 100, 1000}) {
    const int64_t rows = 3;
    std::vector<float> x(static_cast<std::size_t>(rows * len)), g(len), b(len);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i)) * 4.f;
    for (int64_t i = 0; i < len; ++i)
      g[i] = 0.5f + 0.01f * float(i % 7), b[i] = 0.1f * float(i % 3);
    std::vector<float> sm(x.size()), lsm(x.size()), ln(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * len;
      double mx = -INFINITY, sum = 0, mean = 0, sq = 0;
      for (int64_t i = 0; i < len; ++i) mx = std::max(mx, double(row[i]));
      for (int64_t i = 0; i < len; ++i) sum += std::exp(double(row[i]) - mx);
      for (int64_t i = 0; i < len; ++i) mean += row[i];
      mean /= double(len);
      for (int64_t i = 0; i < len; ++i) sq += (row[i] - mean) * (row[i] - mean);
      const double inv = 1.0 / std::sqrt(sq / double(len) + 1e-5);
      for (int64_t i = 0; i < len; ++i) {
        const std::size_t k = static_cast<std::size_t>(r * len + i);
        sm[k] = float(std::exp(double(row[i]) - mx) / sum);
        lsm[k] = float(double(row[i]) - mx - std::log(sum));
        ln[k] = float((row[i] - mean) * inv * g[i] + b[i]);
      }
    }
    const std::vector<int64_t> dims{rows, len};
    EXPECT_THAT(run_op("Softmax", {floats(dims, x)})[0], FloatsNear(sm)) << len;
    EXPECT_THAT(run_op("LogSoftmax", {floats(dims, x)})[0], FloatsNear(lsm)) << len;
    EXPECT_THAT(run_op("LayerNormalization", {floats(dims, x), floats({len}, g), floats({len}, b)},
                       {{"axis", int64_t{-1}}})[0],
                FloatsNear(ln))
        << len;
  }
}

}  // namespace
}  // namespace fx
