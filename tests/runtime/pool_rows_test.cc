// SPDX-License-Identifier: Apache-2.0
// Float 2-D MaxPool / AveragePool (the row-reduction path of runtime/pool_kernels.cc)
// against the same op on float64 (the generic per-tap loop): ceil_mode, asymmetric and
// wide pads, count_include_pad, strides 1-3, kernels 2-5.

#include "runtime_test_util.h"

namespace fx {
namespace {

struct PoolCase {
  int64_t h, w, k, s;
  std::vector<int64_t> pads;
  int64_t ceil, include_pad;
};

void check(const std::string& op, const PoolCase& c) {
  const std::vector<int64_t> dims{2, 3, c.h, c.w};
  auto v = test::random_floats(dims_numel(dims), 7);
  Tensor xd(DType::Float64, dims);
  for (std::size_t i = 0; i < v.size(); ++i) xd.data<double>()[i] = v[i];
  GraphBuilder::AttrList attrs{{"kernel_shape", std::vector<int64_t>{c.k, c.k}},
                               {"strides", std::vector<int64_t>{c.s, c.s}},
                               {"pads", c.pads},
                               {"ceil_mode", c.ceil}};
  if (op == "AveragePool") attrs.push_back({"count_include_pad", c.include_pad});
  auto got = test::run_op(op, {test::floats(dims, v)}, attrs);
  auto want = test::run_op(op, {xd}, attrs);
  ASSERT_EQ(got[0].dims(), want[0].dims());
  std::vector<float> expected(static_cast<std::size_t>(want[0].numel()));
  for (std::size_t i = 0; i < expected.size(); ++i)
    expected[i] = static_cast<float>(want[0].data<double>()[i]);
  EXPECT_THAT(got[0], test::FloatsNear(expected))
      << op << " " << c.h << "x" << c.w << " k" << c.k << " s" << c.s << " ceil " << c.ceil;
}

const std::vector<PoolCase> kCases{
    {111, 111, 3, 2, {0, 0, 0, 0}, 1, 0},  // SqueezeNet / GoogLeNet: ceil_mode, no pads
    {112, 112, 3, 2, {1, 1, 1, 1}, 0, 0},  // ResNet stem
    {14, 14, 3, 1, {1, 1, 1, 1}, 1, 1},    // Inception branch pool
    {13, 9, 2, 2, {0, 0, 0, 0}, 1, 0},     // odd sizes, ceil: a window past the edge
    {10, 11, 5, 3, {2, 1, 0, 2}, 1, 1},    // asymmetric pads
    {7, 7, 3, 2, {2, 2, 2, 2}, 0, 1},      // pads wider than half the kernel
};

TEST(PoolRows, MaxPoolMatchesTheGenericLoop) {
  for (const auto& c : kCases) check("MaxPool", c);
}

TEST(PoolRows, AveragePoolMatchesTheGenericLoop) {
  for (const auto& c : kCases) check("AveragePool", c);
  for (auto c : kCases) {
    c.include_pad = 1 - c.include_pad;
    check("AveragePool", c);
  }
}

}  // namespace
}  // namespace fx
