// SPDX-License-Identifier: Apache-2.0
#include "profile/random_inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ir/graph_builder.h"
#include "util/error.h"

namespace fx {
namespace {

TEST(RandomInputs, SeededFloatsInRangeAndIndicesWithinTheGatheredAxis) {
  GraphBuilder b;
  auto x = b.input("x", {4, 100});
  auto ids = b.input("ids", {1, 50}, DType::Int64);
  auto table = b.constant("table", TensorData::from_floats({7, 3}, std::vector<float>(21, 1.0f)));
  b.output(b.op("Gather", {table, ids}, {}, "gather", Shape::of({1, 50, 3})));
  b.output(b.op("Relu", {x}));
  Graph g = b.build();

  auto a = random_inputs(g, 42);
  ASSERT_EQ(a.size(), 2u);
  auto xs = a.at("x").to_floats();
  float lo = 1, hi = -1;
  for (float v : xs) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_GE(lo, -1.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_LT(lo, -0.5f);  // 400 values spread over the range
  EXPECT_GT(hi, 0.5f);
  auto is = a.at("ids").to_int64s();
  for (int64_t v : is) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 7);
  }
  EXPECT_EQ(random_inputs(g, 42).at("x").to_floats(), xs);
  EXPECT_NE(random_inputs(g, 43).at("x").to_floats(), xs);
}

TEST(RandomInputs, UnboundSymbolicDimIsAnErrorNamingIt) {
  Graph g;
  Value v;
  v.name = "tokens";
  v.dtype = DType::Int64;
  v.shape = Shape({Dim::named("batch"), Dim::fixed(8)});
  g.add_input(g.add_value(v));
  try {
    random_inputs(g, 0);
    FAIL() << "accepted an unbound dim";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("tokens"), std::string::npos) << m;
    EXPECT_NE(m.find("--dim batch="), std::string::npos) << m;
  }
}

TEST(RandomInputs, EveryNumericTypeAndIndicesThroughACast) {
  GraphBuilder b;
  std::vector<DType> types{DType::Float64, DType::Float16, DType::BFloat16, DType::Int8,
                           DType::UInt8,   DType::Int16,   DType::UInt16,   DType::UInt32,
                           DType::UInt64,  DType::Bool};
  for (std::size_t i = 0; i < types.size(); ++i) {
    b.output(b.op("Identity", {b.input("t" + std::to_string(i), {64}, types[i])}));
  }
  // int32 ids, cast to int64, then gather rows of a 5-row table.
  auto ids = b.input("ids", {200}, DType::Int32);
  auto cast =
      b.op("Cast", {ids}, {{"to", static_cast<int64_t>(DType::Int64)}}, "cast", Shape::of({200}));
  auto table = b.constant("table", TensorData::from_floats({5, 2}, std::vector<float>(10, 1.0f)));
  b.output(b.op("Gather", {table, cast}, {}, "gather", Shape::of({200, 2})));
  auto other = b.input("other", {200}, DType::Int64);
  b.output(b.op("Identity", {other}));
  Graph g = b.build();

  auto in = random_inputs(g, 7);
  for (std::size_t i = 0; i < types.size(); ++i) {
    const Tensor& t = in.at("t" + std::to_string(i));
    EXPECT_EQ(t.dtype(), types[i]);
    EXPECT_EQ(t.byte_size(), 64 * dtype_size(types[i]));
    auto v = t.to_floats();
    const bool is_float = dtype_is_float(types[i]);
    float lo = v[0], hi = v[0];
    for (float x : v) {
      lo = std::min(lo, x), hi = std::max(hi, x);
      if (!is_float) EXPECT_EQ(x, std::floor(x));
    }
    EXPECT_LT(lo, hi) << dtype_name(types[i]);  // not constant
    EXPECT_GE(lo, is_float ? -1.0f : 0.0f);
    EXPECT_LT(hi, is_float ? 1.0f : static_cast<float>(kRandomIntRange));
  }
  auto idv = in.at("ids").to_int64s();
  EXPECT_EQ(*std::max_element(idv.begin(), idv.end()), 4);  // 200 draws cover [0, 5)
  EXPECT_EQ(*std::min_element(idv.begin(), idv.end()), 0);
  EXPECT_EQ(random_int_bound(g, g.find_value("ids")), 5);
  EXPECT_EQ(random_int_bound(g, g.find_value("other")), kRandomIntRange);
}

TEST(RandomInputs, AStringInputAsksForAnInputFile) {
  GraphBuilder b;
  b.output(b.op("Identity", {b.input("words", {3}, DType::String)}));
  Graph g = b.build();
  try {
    random_inputs(g, 0);
    FAIL() << "invented strings";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("words"), std::string::npos) << m;
    EXPECT_NE(m.find("--input words="), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace fx
