// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include "runtime_test_util.h"
#include "util/error.h"

namespace fx {
namespace {

using test::floats;
using test::FloatsNear;
using test::run_op;

TEST(Elementwise, AddBroadcastsRowAgainstMatrix) {
  auto y = run_op("Add", {floats({2, 3}, {0, 1, 2, 3, 4, 5}), floats({3}, {10, 20, 30})});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{10, 21, 32, 13, 24, 35}));
}

TEST(Elementwise, SubBroadcastsColumnAgainstRowBothWays) {
  auto y = run_op("Sub", {floats({2, 1}, {1, 2}), floats({1, 3}, {10, 20, 30})});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{-9, -19, -29, -8, -18, -28}));
}

TEST(Elementwise, MulPerChannelScaleOnNCHW) {
  // [1,2,2,2] * [1,2,1,1]: channel 0 times 2, channel 1 times -1.
  auto y = run_op("Mul", {floats({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                          floats({1, 2, 1, 1}, {2, -1})});
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{2, 4, 6, 8, -5, -6, -7, -8}));
}

TEST(Elementwise, DivByScalarAndIncompatibleShapesFail) {
  auto y = run_op("Div", {floats({3}, {2, 4, 6}), floats({}, {2})});
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{1, 2, 3}));
  EXPECT_THROW(run_op("Add", {floats({2}, {1, 2}), floats({3}, {1, 2, 3})}), Error);
}

TEST(Elementwise, ActivationsMatchTheirFormulas) {
  Tensor x = floats({5}, {-3, -0.5f, 0, 0.5f, 3});
  std::vector<float> xs = x.to_floats(), sig, tanh_, erf_, hs, lr;
  for (float v : xs) {
    sig.push_back(1 / (1 + std::exp(-v)));
    tanh_.push_back(std::tanh(v));
    erf_.push_back(std::erf(v));
    hs.push_back(v * std::clamp(v / 6 + 0.5f, 0.0f, 1.0f));
    lr.push_back(v < 0 ? 0.1f * v : v);
  }
  EXPECT_THAT(run_op("Sigmoid", {x})[0], FloatsNear(sig));
  EXPECT_THAT(run_op("Tanh", {x})[0], FloatsNear(tanh_));
  EXPECT_THAT(run_op("Erf", {x})[0], FloatsNear(erf_));
  EXPECT_THAT(run_op("HardSwish", {x})[0], FloatsNear(hs));
  EXPECT_THAT(run_op("LeakyRelu", {x}, {{"alpha", 0.1f}})[0], FloatsNear(lr));
  EXPECT_THAT(run_op("Relu", {x})[0], FloatsNear(std::vector<float>{0, 0, 0, 0.5f, 3}));
}

TEST(Elementwise, FastExpIsAccurateOverItsRange) {
  std::vector<float> xs, want;
  for (float v = -80; v < 80; v += 0.37f) {
    xs.push_back(v);
    want.push_back(std::exp(v));
  }
  auto y = run_op("Exp", {floats({static_cast<int64_t>(xs.size())}, xs)})[0].to_floats();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    EXPECT_NEAR(y[i], want[i], 1e-6 * want[i]) << "exp(" << xs[i] << ")";
  }
}

TEST(Elementwise, ClipWithInputBoundsAndOmittedMin) {
  auto y = run_op("Clip", {floats({4}, {-2, 0.5f, 3, 9}), Tensor(), floats({}, {2})});
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{-2, 0.5f, 2, 2}));
  auto z = run_op("Clip", {floats({4}, {-2, 0.5f, 3, 9}), floats({}, {0}), floats({}, {6})});
  EXPECT_THAT(z[0], FloatsNear(std::vector<float>{0, 0.5f, 3, 6}));
}

TEST(Elementwise, ComparisonsGiveBoolAndWhereSelects) {
  auto less = run_op("Less", {floats({3}, {1, 5, 3}), floats({1}, {3})});
  EXPECT_EQ(less[0].dtype(), DType::Bool);
  EXPECT_EQ(less[0].to_int64s(), (std::vector<int64_t>{1, 0, 0}));
  auto w = run_op("Where", {less[0], floats({3}, {1, 2, 3}), floats({}, {-1})});
  EXPECT_THAT(w[0], FloatsNear(std::vector<float>{1, -1, -1}));
}

TEST(Elementwise, PowWithScalarAndIntegerExponent) {
  auto y = run_op("Pow", {floats({3}, {1, 2, 3}), floats({}, {2})});
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{1, 4, 9}));
  auto z = run_op("Pow", {floats({2}, {2, 3}), test::int64s({1}, {3})});
  EXPECT_THAT(z[0], FloatsNear(std::vector<float>{8, 27}));
}

TEST(Elementwise, VariadicMaxAndMeanBroadcast) {
  auto m = run_op("Max", {floats({2}, {1, 5}), floats({1}, {3}), floats({2}, {0, 9})});
  EXPECT_THAT(m[0], FloatsNear(std::vector<float>{3, 9}));
  auto mean = run_op("Mean", {floats({2}, {1, 5}), floats({2}, {3, 1})});
  EXPECT_THAT(mean[0], FloatsNear(std::vector<float>{2, 3}));
}

TEST(Elementwise, LargeTensorsSplitAcrossThreadsGiveTheSameResult) {
  const int64_t n = 1 << 18;
  std::vector<float> a(n), b(4);
  for (int64_t i = 0; i < n; ++i) a[i] = static_cast<float>(i % 97) - 48;
  b = {1, 2, 3, 4};
  Tensor ta = floats({n / 4, 4}, a), tb = floats({4}, b);
  auto one = run_op("Mul", {ta, tb}, {}, 1, {}, 1)[0].to_floats();
  auto two = run_op("Mul", {ta, tb}, {}, 1, {}, 2)[0].to_floats();
  EXPECT_EQ(one, two);
  EXPECT_EQ(one[7], a[7] * 4);
}

}  // namespace
}  // namespace fx
