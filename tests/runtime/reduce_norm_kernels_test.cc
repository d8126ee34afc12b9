#include <cmath>

#include "runtime_test_util.h"

namespace fx {
namespace {

using test::floats;
using test::FloatsNear;
using test::int64s;
using test::run_op;

Tensor x23() { return floats({2, 3}, {1, 2, 3, 4, 5, 6}); }

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
  auto y = run_op("ReduceMin", {x}, {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", int64_t{0}}});
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
  auto y = run_op("BatchNormalization",
                  {x, floats({2}, {2, 1}), floats({2}, {0, 1}), floats({2}, {2, 10}),
                   floats({2}, {1, 4})},
                  {{"epsilon", 0.0f}}, 1, {1, 2, 3, 4});
  // channel 0: (x-2)/1*2+0; channel 1: (x-10)/2*1+1
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{-2, 2, 1, 6}));
}

TEST(Normalization, LayerNormOverLastAxis) {
  auto y = run_op("LayerNormalization", {floats({2, 2}, {1, 3, 5, 5}), floats({2}, {1, 2}),
                                         floats({2}, {0, 1})},
                  {{"epsilon", 0.0f}});
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{-1, 3, 0, 1}));
}

TEST(Pooling, MaxAverageGlobal) {
  Tensor x = floats({1, 1, 2, 3}, {1, 5, 2, 4, 3, 6});
  auto m = run_op("MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}});
  EXPECT_EQ(m[0].dims(), (std::vector<int64_t>{1, 1, 1, 2}));
  EXPECT_THAT(m[0], FloatsNear(std::vector<float>{5, 6}));
  auto a = run_op("AveragePool", {x}, {{"kernel_shape", std::vector<int64_t>{1, 2}},
                                       {"pads", std::vector<int64_t>{0, 1, 0, 0}}});
  // count_include_pad = 0: the padded position is not counted.
  EXPECT_THAT(a[0], FloatsNear(std::vector<float>{1, 3, 3.5f, 4, 3.5f, 4.5f}));
  auto g = run_op("GlobalAveragePool", {x});
  EXPECT_THAT(g[0], FloatsNear(std::vector<float>{3.5f}));
}

}  // namespace
}  // namespace fx
