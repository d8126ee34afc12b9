// SPDX-License-Identifier: Apache-2.0
#include "runtime/dead_steps.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"

namespace fx {
namespace {

std::vector<std::string> names(const std::vector<Step>& steps) {
  std::vector<std::string> out;
  for (const Step& s : steps) out.push_back(s.name);
  return out;
}

// A chain of unread steps goes as a whole (the Constant feeds only a dead Mul);
// what the output needs stays, and so does a Constant that a live step reads.
TEST(DeadSteps, RemovesUnreadChainsAndKeepsWhatOutputsNeed) {
  GraphBuilder b;
  auto x = b.input("x", {4});
  auto k = b.op("Constant", {}, {{"value_float", 2.f}}, "k", Shape::scalar());
  auto unused = b.op("Constant", {}, {{"value_float", 3.f}}, "unused", Shape::scalar());
  b.op("Mul", {x, unused}, {}, "dead_mul");
  b.output(b.op("Add", {x, k}, {}, "add"));
  Graph g = b.build();
  std::vector<Step> steps = make_steps(g);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(remove_dead_steps(g, steps), 2);
  EXPECT_EQ(names(steps), (std::vector<std::string>{"k", "add"}));
  EXPECT_EQ(remove_dead_steps(g, steps), 0);

  Executor ex(g, steps);
  auto out = ex.run({{"x", Tensor::from_floats({4}, {1, 2, 3, 4})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], 3.f);
  EXPECT_FLOAT_EQ(out[0].data<float>()[3], 6.f);
}

// A step that writes a graph output stays even when no step reads it.
TEST(DeadSteps, KeepsGraphOutputs) {
  GraphBuilder b;
  auto x = b.input("x", {2});
  auto r = b.op("Relu", {x}, {}, "relu");
  b.output(r);
  b.output(b.op("Neg", {r}, {}, "neg"));
  Graph g = b.build();
  std::vector<Step> steps = make_steps(g);
  EXPECT_EQ(remove_dead_steps(g, steps), 0);
  EXPECT_EQ(steps.size(), 2u);
}

}  // namespace
}  // namespace fx
