// SPDX-License-Identifier: Apache-2.0
#include "runtime/kernel_registry.h"
#include "runtime/strided_copy.h"
#include "runtime_test_util.h"
#include "util/error.h"

namespace fx {
namespace {

using test::floats;
using test::FloatsNear;
using test::int64s;
using test::run_op;

Tensor iota(std::vector<int64_t> dims) {
  Tensor t(DType::Float32, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(Gather, NegativeIndicesAlongAxis0) {
  auto y = run_op("Gather", {iota({3, 2}), int64s({2}, {-1, 0})});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{4, 5, 0, 1}));
}

TEST(Gather, AxisOneWithMatrixOfIndices) {
  // data [2,3]; indices [2,2] along axis 1 -> [2,2,2].
  auto y = run_op("Gather", {iota({2, 3}), int64s({2, 2}, {0, 2, 1, 1})}, {{"axis", int64_t{1}}});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{0, 2, 1, 1, 3, 5, 4, 4}));
}

TEST(Gather, OutOfRangeIndexIsAnError) {
  EXPECT_THROW(run_op("Gather", {iota({3}), int64s({1}, {3})}), Error);
}

TEST(Slice, StepsAndNegativeStarts) {
  // x = 0..9; start 1, end 8, step 3 -> 1,4,7.
  auto y = run_op("Slice", {iota({10}), int64s({1}, {1}), int64s({1}, {8}), int64s({1}, {0}),
                            int64s({1}, {3})});
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{1, 4, 7}));
  // Negative step from the end: start -1, end -11 (clamped), step -4 -> 9,5,1.
  auto z = run_op("Slice", {iota({10}), int64s({1}, {-1}), int64s({1}, {-11}), int64s({1}, {0}),
                            int64s({1}, {-4})});
  EXPECT_THAT(z[0], FloatsNear(std::vector<float>{9, 5, 1}));
}

TEST(Slice, InnerAxisOfMatrixWithNegativeAxis) {
  auto y = run_op("Slice", {iota({2, 4}), int64s({1}, {1}), int64s({1}, {3}), int64s({1}, {-1})});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{1, 2, 5, 6}));
}

// A channel range of one image is whole planes: one run, not one per row of W.
TEST(StridedCopy, ChannelRangeOfOneImageIsOneRun) {
  // [1, 116, 28, 28] sliced to channels 58..115: dims [1, 58, 28, 28], strides of x.
  CopyRuns r = merge_copy_dims({1, 58, 28, 28}, {116 * 784, 784, 28, 1});
  EXPECT_EQ(r.dims, (std::vector<int64_t>{58 * 784}));
  EXPECT_EQ(r.strides, (std::vector<int64_t>{1}));
  // Two images: one run per image, 116 planes apart.
  r = merge_copy_dims({2, 58, 28, 28}, {116 * 784, 784, 28, 1});
  EXPECT_EQ(r.dims, (std::vector<int64_t>{2, 58 * 784}));
  EXPECT_EQ(r.strides, (std::vector<int64_t>{116 * 784, 1}));
  // A column range stays one run per row; a negative step merges with its outer dim
  // only where the two walk the input as one.
  r = merge_copy_dims({4, 3}, {8, 1});
  EXPECT_EQ(r.dims, (std::vector<int64_t>{4, 3}));
  r = merge_copy_dims({2, 3}, {-3, -1});
  EXPECT_EQ(r.dims, (std::vector<int64_t>{6}));
  EXPECT_EQ(r.strides, (std::vector<int64_t>{-1}));
  // Tile's repeats (stride 0) next to each other are one dim; a zero dim is nothing.
  r = merge_copy_dims({2, 3, 5}, {0, 0, 1});
  EXPECT_EQ(r.dims, (std::vector<int64_t>{6, 5}));
  EXPECT_EQ(merge_copy_dims({3, 0, 2}, {2, 2, 1}).dims, (std::vector<int64_t>{0}));
}

// Slices of whole planes, of rows and reversed, against element-by-element indexing.
TEST(Slice, ChannelAndReversedRangesOfImagesMatchIndexing) {
  for (int64_t n : {1, 2}) {
    const int64_t c = 6, h = 3, w = 4;
    Tensor x = iota({n, c, h, w});
    auto y = run_op("Slice", {x, int64s({1}, {3}), int64s({1}, {6}), int64s({1}, {1})});
    ASSERT_EQ(y[0].dims(), (std::vector<int64_t>{n, 3, h, w}));
    std::vector<float> want;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 3; ch < 6; ++ch)
        for (int64_t i = 0; i < h * w; ++i)
          want.push_back(static_cast<float>((b * c + ch) * h * w + i));
    EXPECT_THAT(y[0], FloatsNear(want));
    // Every channel reversed, rows 1..2: [n, 6, 2, 4].
    auto z = run_op("Slice", {x, int64s({2}, {-1, 1}), int64s({2}, {-7, 3}), int64s({2}, {1, 2}),
                              int64s({2}, {-1, 1})});
    ASSERT_EQ(z[0].dims(), (std::vector<int64_t>{n, c, 2, w}));
    want.clear();
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = c; ch-- > 0;)
        for (int64_t row = 1; row < 3; ++row)
          for (int64_t col = 0; col < w; ++col)
            want.push_back(static_cast<float>(((b * c + ch) * h + row) * w + col));
    EXPECT_THAT(z[0], FloatsNear(want));
  }
}

// ShuffleNet's channel split: x [1, 6, 2, 2] (a Relu's output), its channels 0..2 and
// 3..5 as two Slices with constant parameters. Both are views of x (no copy), x stays
// alive while they are read, and the Neg over the low half may not take x's memory;
// the same Slice of two images (not one run) copies.
TEST(Slice, ContiguousChannelRangeOfStaticShapeIsAViewOfItsInput) {
  for (int64_t n : {1, 2}) {
    GraphBuilder b;
    ValueId x = b.input("x", {n, 6, 2, 2});
    ValueId r = b.op("Relu", {x}, {}, "relu");
    auto slice = [&](int64_t from, int64_t to, const std::string& name) {
      return b.op("Slice",
                  {r, b.constant(name + "_s", int64s({1}, {from}).to_tensor_data()),
                   b.constant(name + "_e", int64s({1}, {to}).to_tensor_data()),
                   b.constant(name + "_a", int64s({1}, {1}).to_tensor_data())},
                  {}, name, Shape::of({n, to - from, 2, 2}));
    };
    ValueId lo = slice(0, 3, "lo"), hi = slice(3, 6, "hi");
    ValueId neg = b.op("Neg", {lo}, {}, "neg");
    b.output(b.op("Add", {neg, hi}, {}, "add"));
    b.output(hi);
    Graph g = b.build();
    for (NodeId id = 0; id < static_cast<NodeId>(g.node_count()); ++id) {
      if (g.node(id).op_type == "Slice")
        EXPECT_EQ(make_kernel(g, g.node(id))->aliases_input(), n == 1) << "images " << n;
    }
    std::vector<float> xv(static_cast<std::size_t>(n * 24));
    for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 7) - 2.0f;
    Executor ex(g, ExecutorOptions{2});
    for (int run = 0; run < 2; ++run) {  // the second run reuses the planned memory
      auto out = ex.run({{"x", Tensor::from_floats({n, 6, 2, 2}, xv)}});
      std::vector<float> want_add, want_hi;
      for (int64_t img = 0; img < n; ++img) {
        for (int64_t i = 0; i < 12; ++i) {
          const float l = std::max(0.0f, xv[static_cast<std::size_t>(img * 24 + i)]);
          const float h = std::max(0.0f, xv[static_cast<std::size_t>(img * 24 + 12 + i)]);
          want_add.push_back(h - l);
          want_hi.push_back(h);
        }
      }
      EXPECT_THAT(out[0], FloatsNear(want_add)) << "images " << n;
      EXPECT_THAT(out[1], FloatsNear(want_hi)) << "images " << n;
    }
  }
}

// Starts that are not constants, or a row range, keep the copy.
TEST(Slice, RuntimeParametersOrRowRangesAreCopies) {
  GraphBuilder b;
  ValueId x = b.input("x", {1, 6, 2, 2});
  ValueId st = b.input("st", {1}, DType::Int64);
  ValueId c1 = b.constant("one", int64s({1}, {1}).to_tensor_data());
  ValueId c2 = b.constant("two", int64s({1}, {2}).to_tensor_data());
  ValueId runtime_start =
      b.op("Slice", {x, st, b.constant("e", int64s({1}, {6}).to_tensor_data()), c1}, {},
           "runtime_start", Shape::of({1, 5, 2, 2}));
  ValueId rows = b.op("Slice", {x, c1, c2, c2}, {}, "rows", Shape::of({1, 6, 1, 2}));
  b.output(runtime_start);
  b.output(rows);
  Graph g = b.build();
  for (NodeId id = 0; id < static_cast<NodeId>(g.node_count()); ++id)
    EXPECT_FALSE(make_kernel(g, g.node(id))->aliases_input()) << g.node(id).name;
  Executor ex(g, ExecutorOptions{2});
  auto out = ex.run({{"x", iota({1, 6, 2, 2})}, {"st", int64s({1}, {1})}});
  std::vector<float> want;
  for (int i = 4; i < 24; ++i) want.push_back(static_cast<float>(i));
  EXPECT_THAT(out[0], FloatsNear(want));
  want.clear();
  for (int c = 0; c < 6; ++c) want.insert(want.end(), {c * 4 + 2.0f, c * 4 + 3.0f});
  EXPECT_THAT(out[1], FloatsNear(want));
}

TEST(Transpose, PermutesAndDefaultsToReverse) {
  auto y = run_op("Transpose", {iota({2, 3})});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{0, 3, 1, 4, 2, 5}));
  auto z = run_op("Transpose", {iota({2, 2, 2})}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  EXPECT_THAT(z[0], FloatsNear(std::vector<float>{0, 1, 4, 5, 2, 3, 6, 7}));
}

// Reference: out[i] = in[sum of out index d times the input stride of perm[d]].
std::vector<float> transposed(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  const std::size_t r = dims.size();
  std::vector<int64_t> in_stride(r, 1), out_dims(r);
  for (std::size_t d = r - 1; d-- > 0;) in_stride[d] = in_stride[d + 1] * dims[d + 1];
  int64_t n = 1;
  for (std::size_t d = 0; d < r; ++d) n *= (out_dims[d] = dims[static_cast<std::size_t>(perm[d])]);
  std::vector<float> out(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, off = 0;
    for (std::size_t d = r; d-- > 0;) {
      off += rem % out_dims[d] * in_stride[static_cast<std::size_t>(perm[d])];
      rem /= out_dims[d];
    }
    out[static_cast<std::size_t>(i)] = static_cast<float>(off);
  }
  return out;
}

// NCHW <-> NHWC and plain 2-D transposes: over 256 columns through 8x8 register tiles,
// sizes that are and are not multiples of 8, one and several images.
TEST(Transpose, TiledPermutesMatchTheIndexRule) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{1, 96, 9, 9}, {0, 2, 3, 1}},
      {{1, 9, 9, 96}, {0, 3, 1, 2}},
      {{2, 19, 5, 7}, {0, 2, 3, 1}},
      {{3, 5, 7, 19}, {0, 3, 1, 2}},
      {{17, 33}, {1, 0}},
      {{16, 8}, {1, 0}},
      {{4, 8, 16}, {0, 2, 1}},
      {{1, 300, 9}, {0, 2, 1}},
      {{2, 300, 3, 5}, {0, 2, 3, 1}},
      {{1, 257, 13}, {0, 2, 1}},
      {{3, 511, 16}, {0, 2, 1}}};
  for (const auto& [dims, perm] : cases) {
    auto y = run_op("Transpose", {iota(dims)}, {{"perm", perm}});
    EXPECT_THAT(y[0], FloatsNear(transposed(dims, perm)))
        << dims_str(dims) << " " << dims_str(perm);
  }
}

TEST(Concat, NegativeAxis) {
  auto y = run_op("Concat", {iota({2, 1}), floats({2, 2}, {9, 8, 7, 6})}, {{"axis", int64_t{-1}}});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{0, 9, 8, 1, 7, 6}));
}

TEST(Split, SizesFromInputAndEqualParts) {
  auto y = run_op("Split", {iota({5}), int64s({2}, {2, 3})}, {}, 2);
  EXPECT_THAT(y[0], FloatsNear(std::vector<float>{0, 1}));
  EXPECT_THAT(y[1], FloatsNear(std::vector<float>{2, 3, 4}));
  auto z = run_op("Split", {iota({2, 4})}, {{"axis", int64_t{1}}}, 2);
  EXPECT_THAT(z[1], FloatsNear(std::vector<float>{2, 3, 6, 7}));
}

TEST(ShapeOps, ReshapeWithZeroAndMinusOneIsAView) {
  auto y = run_op("Reshape", {iota({2, 3, 4}), int64s({2}, {0, -1})});
  EXPECT_EQ(y[0].dims(), (std::vector<int64_t>{2, 12}));
  EXPECT_THROW(run_op("Reshape", {iota({2, 3}), int64s({1}, {4})}), Error);
}

TEST(ShapeOps, SqueezeUnsqueezeNegativeAxes) {
  auto u = run_op("Unsqueeze", {iota({3}), int64s({2}, {0, -1})});
  EXPECT_EQ(u[0].dims(), (std::vector<int64_t>{1, 3, 1}));
  auto s = run_op("Squeeze", {iota({1, 3, 1}), int64s({1}, {-1})});
  EXPECT_EQ(s[0].dims(), (std::vector<int64_t>{1, 3}));
}

TEST(ShapeOps, ExpandRangeConstantOfShapeCast) {
  auto e = run_op("Expand", {floats({2, 1}, {1, 2}), int64s({3}, {2, 2, 3})});
  EXPECT_EQ(e[0].dims(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_THAT(e[0], FloatsNear(std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
  auto r = run_op("Range", {int64s({}, {10}), int64s({}, {1}), int64s({}, {-3})});
  EXPECT_EQ(r[0].to_int64s(), (std::vector<int64_t>{10, 7, 4}));
  auto c = run_op("ConstantOfShape", {int64s({2}, {2, 2})});
  EXPECT_THAT(c[0], FloatsNear(std::vector<float>{0, 0, 0, 0}));
  auto k = run_op("Cast", {floats({3}, {1.7f, -2.2f, 0})}, {{"to", int64_t{7}}});
  EXPECT_EQ(k[0].to_int64s(), (std::vector<int64_t>{1, -2, 0}));
}

}  // namespace
}  // namespace fx
