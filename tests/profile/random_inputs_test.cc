// SPDX-License-Identifier: Apache-2.0
#include "profile/random_inputs.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fx
