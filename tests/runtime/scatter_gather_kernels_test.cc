// SPDX-License-Identifier: Apache-2.0
// GatherND, ScatterND, ScatterElements, OneHot, Compress, NonZero, Unique, EyeLike
// and ReverseSequence on the examples of the ONNX operator docs and a few more.

#include "runtime_test_util.h"
#include "util/error.h"

namespace fx::test {
namespace {

TEST(ScatterGatherKernels, GatherNDElementsSlicesAndBatchDims) {
  const Tensor d = floats({2, 2}, {0, 1, 2, 3});
  EXPECT_THAT(run_op("GatherND", {d, int64s({2, 2}, {0, 0, 1, 1})})[0],
              FloatsNear(std::vector<float>{0, 3}));
  auto rows = run_op("GatherND", {d, int64s({2, 1}, {1, 0})})[0];
  EXPECT_THAT(rows, FloatsNear(std::vector<float>{2, 3, 0, 1}));
  EXPECT_EQ(rows.dims(), (std::vector<int64_t>{2, 2}));
  auto batched =
      run_op("GatherND", {floats({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), int64s({2, 1}, {1, 0})},
             {{"batch_dims", int64_t{1}}})[0];
  EXPECT_THAT(batched, FloatsNear(std::vector<float>{2, 3, 4, 5}));
  EXPECT_THROW(run_op("GatherND", {d, int64s({1, 2}, {0, 2})}), Error);
}

TEST(ScatterGatherKernels, ScatterNDReplacesOrAccumulates) {
  const Tensor d = floats({4}, {1, 2, 3, 4});
  EXPECT_THAT(run_op("ScatterND", {d, int64s({2, 1}, {1, 3}), floats({2}, {10, 20})})[0],
              FloatsNear(std::vector<float>{1, 10, 3, 20}));
  EXPECT_THAT(run_op("ScatterND", {d, int64s({2, 1}, {1, 1}), floats({2}, {10, 20})},
                     {{"reduction", std::string("add")}})[0],
              FloatsNear(std::vector<float>{1, 32, 3, 4}));
  EXPECT_THAT(run_op("ScatterND", {d, int64s({1, 1}, {-1}), floats({1}, {0.5f})},
                     {{"reduction", std::string("min")}})[0],
              FloatsNear(std::vector<float>{1, 2, 3, 0.5f}));
}

TEST(ScatterGatherKernels, ScatterElementsAlongAxisZero) {
  auto out = run_op("ScatterElements", {floats({3, 3}, std::vector<float>(9, 0.0f)),
                                        int64s({2, 3}, {1, 0, 2, 0, 2, 1}),
                                        floats({2, 3}, {1, 1.1f, 1.2f, 2, 2.1f, 2.2f})})[0];
  EXPECT_THAT(out, FloatsNear(std::vector<float>{2, 1.1f, 0, 1, 0, 2.2f, 0, 2.1f, 1.2f}));
  auto old = run_op(
      "Scatter",
      {floats({1, 5}, {1, 2, 3, 4, 5}), int64s({1, 2}, {1, 3}), floats({1, 2}, {1.1f, 2.1f})},
      {{"axis", int64_t{1}}})[0];
  EXPECT_THAT(old, FloatsNear(std::vector<float>{1, 1.1f, 3, 2.1f, 5}));
}

// ScatterElements of a [2, 3, 4, 5] data tensor with indices smaller than it along
// every axis but the scattered one, checked element by element against the
// spec's rule: out[i with i[axis] = indices[i]] = updates[i] (added with "add").
TEST(ScatterGatherKernels, ScatterElementsOfEveryAxisOfA4DTensor) {
  const std::vector<int64_t> dd{2, 3, 4, 5}, id{2, 2, 3, 4};
  const int64_t dn = 2 * 3 * 4 * 5, in = 2 * 2 * 3 * 4;
  std::vector<float> data(dn), up(in);
  for (int64_t i = 0; i < dn; ++i) data[static_cast<std::size_t>(i)] = static_cast<float>(i);
  for (int64_t i = 0; i < in; ++i)
    up[static_cast<std::size_t>(i)] = 1000.0f + static_cast<float>(i);
  for (int64_t axis = 0; axis < 4; ++axis) {
    for (const bool add : {false, true}) {
      // Indices along the axis, some negative (counted from the end), with repeats
      // only when adding (replacing at one place twice has no defined winner).
      std::vector<int64_t> ix(static_cast<std::size_t>(in));
      for (int64_t i = 0; i < in; ++i) {
        int64_t rem = i, c[4];
        for (int d = 3; d >= 0; --d)
          c[d] = rem % id[static_cast<std::size_t>(d)], rem /= id[static_cast<std::size_t>(d)];
        const int64_t n = dd[static_cast<std::size_t>(axis)];
        const int64_t v = add ? (c[axis] * 2 + 1) % n : c[axis];
        ix[static_cast<std::size_t>(i)] = i % 3 == 0 ? v - n : v;
      }
      std::vector<float> want = data;
      for (int64_t i = 0; i < in; ++i) {
        int64_t rem = i, c[4];
        for (int d = 3; d >= 0; --d)
          c[d] = rem % id[static_cast<std::size_t>(d)], rem /= id[static_cast<std::size_t>(d)];
        int64_t a = ix[static_cast<std::size_t>(i)];
        c[axis] = a < 0 ? a + dd[static_cast<std::size_t>(axis)] : a;
        const int64_t off = ((c[0] * 3 + c[1]) * 4 + c[2]) * 5 + c[3];
        float& w = want[static_cast<std::size_t>(off)];
        w = add ? w + up[static_cast<std::size_t>(i)] : up[static_cast<std::size_t>(i)];
      }
      GraphBuilder::AttrList attrs{{"axis", axis}};
      if (add) attrs.push_back({"reduction", std::string("add")});
      auto out =
          run_op("ScatterElements", {floats(dd, data), int64s(id, ix), floats(id, up)}, attrs)[0];
      EXPECT_EQ(out.to_floats(), want) << "axis " << axis << (add ? ", add" : "");
    }
  }
  // An index past the axis, or indices longer than data on another axis, is an error.
  EXPECT_THROW(
      run_op("ScatterElements",
             {floats({2, 2}, {0, 0, 0, 0}), int64s({1, 2}, {0, 2}), floats({1, 2}, {1, 1})},
             {{"axis", int64_t{1}}}),
      Error);
  EXPECT_THROW(run_op("ScatterElements", {floats({2, 2}, {0, 0, 0, 0}), int64s({1, 3}, {0, 0, 0}),
                                          floats({1, 3}, {1, 1, 1})}),
               Error);
}

TEST(ScatterGatherKernels, OneHotWithNegativeIndexAndAxis) {
  auto last = run_op("OneHot", {int64s({3}, {0, 2, -1}), int64s({}, {3}), floats({2}, {0, 5})})[0];
  EXPECT_EQ(last.dims(), (std::vector<int64_t>{3, 3}));
  EXPECT_THAT(last, FloatsNear(std::vector<float>{5, 0, 0, 0, 0, 5, 0, 0, 5}));
  auto first = run_op("OneHot", {int64s({2}, {1, 7}), int64s({}, {2}), floats({2}, {0, 1})},
                      {{"axis", int64_t{0}}})[0];
  // Index 7 is out of range: its column stays all "off".
  EXPECT_THAT(first, FloatsNear(std::vector<float>{0, 0, 1, 0}));
}

TEST(ScatterGatherKernels, CompressAlongAxisAndFlattened) {
  const Tensor x = floats({3, 2}, {1, 2, 3, 4, 5, 6});
  auto rows = run_op("Compress", {x, Tensor::from_bools({3}, {false, true, true})},
                     {{"axis", int64_t{0}}})[0];
  EXPECT_EQ(rows.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(rows, FloatsNear(std::vector<float>{3, 4, 5, 6}));
  auto flat =
      run_op("Compress", {x, Tensor::from_bools({5}, {false, true, false, false, true})})[0];
  EXPECT_THAT(flat, FloatsNear(std::vector<float>{2, 5}));
}

TEST(ScatterGatherKernels, NonZeroListsCoordinatesPerDim) {
  auto out = run_op("NonZero", {floats({2, 2}, {1, 0, 1, 1})})[0];
  EXPECT_EQ(out.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out.to_int64s(), (std::vector<int64_t>{0, 1, 1, 0, 0, 1}));
}

TEST(ScatterGatherKernels, UniqueSortedAndInOrderOfFirstOccurrence) {
  const Tensor x = floats({6}, {2, 1, 1, 3, 4, 3});
  auto s = run_op("Unique", {x}, {}, 4);
  EXPECT_THAT(s[0], FloatsNear(std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(s[1].to_int64s(), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(s[2].to_int64s(), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(s[3].to_int64s(), (std::vector<int64_t>{2, 1, 2, 1}));
  auto u = run_op("Unique", {x}, {{"sorted", int64_t{0}}}, 4);
  EXPECT_THAT(u[0], FloatsNear(std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(u[1].to_int64s(), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(u[2].to_int64s(), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(u[3].to_int64s(), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(ScatterGatherKernels, UniqueRowsAlongAnAxis) {
  auto out = run_op("Unique", {floats({3, 2}, {1, 0, 1, 0, 0, 1})}, {{"axis", int64_t{0}}}, 4);
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(out[0], FloatsNear(std::vector<float>{0, 1, 1, 0}));
  EXPECT_EQ(out[3].to_int64s(), (std::vector<int64_t>{1, 2}));
}

TEST(ScatterGatherKernels, EyeLikeWithOffsetAndDtype) {
  auto out = run_op("EyeLike", {floats({2, 3}, std::vector<float>(6, 7.0f))},
                    {{"k", int64_t{1}}, {"dtype", int64_t{7}}})[0];
  EXPECT_EQ(out.dtype(), DType::Int64);
  EXPECT_EQ(out.to_int64s(), (std::vector<int64_t>{0, 1, 0, 0, 0, 1}));
}

TEST(ScatterGatherKernels, ReverseSequenceReversesEachPrefix) {
  // time_axis 0, batch_axis 1: column b is a sequence, its first lens[b] reversed.
  auto out =
      run_op("ReverseSequence", {floats({3, 2}, {0, 1, 2, 3, 4, 5}), int64s({2}, {3, 2})})[0];
  EXPECT_THAT(out, FloatsNear(std::vector<float>{4, 3, 2, 1, 0, 5}));
}

}  // namespace
}  // namespace fx::test
