// SPDX-License-Identifier: Apache-2.0
#include "ir/graph.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "util/error.h"

namespace fx {
namespace {

// A Value with its name alone, a Node with one input and one output (a designated
// initializer would have GCC 12 warn about each member it leaves out).
Value named(std::string name) {
  Value v;
  v.name = std::move(name);
  return v;
}

Node op_node(std::string name, std::string op, ValueId in, ValueId out) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = {in};
  n.outputs = {out};
  return n;
}

TEST(Graph, RecordsProducersAndConsumers) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4});
  auto y = b.op("Relu", {x}, {}, "relu");
  auto z = b.op("Add", {y, y}, {}, "add");
  b.output(z);
  Graph g = b.build();
  EXPECT_EQ(g.value(y).producer, g.find_node("relu"));
  ASSERT_EQ(g.value(y).consumers.size(), 2u);  // one entry per use
  EXPECT_EQ(g.value(y).consumers[0], g.find_node("add"));
  EXPECT_TRUE(g.value(z).is_graph_output);
  EXPECT_EQ(g.value(z).shape.str(), "[1,4]");
  EXPECT_NO_THROW(g.validate());
}

// The name index grows many times over, keeps the first id of a repeated name, answers
// for names that are absent, and stays valid in a copy and after a move.
TEST(Graph, FindsEveryNameAmongManyAndKeepsTheFirstOfADuplicate) {
  Graph g;
  constexpr int kCount = 5000;
  for (int i = 0; i < kCount; ++i) g.add_value(named("/block." + std::to_string(i) + "/x"));
  const ValueId dup = g.add_value(named("/block.7/x"));
  EXPECT_EQ(g.value_count(), std::size_t(kCount + 1));
  for (int i = 0; i < kCount; i += 37)
    EXPECT_EQ(g.find_value("/block." + std::to_string(i) + "/x"), ValueId(i));
  EXPECT_EQ(g.find_value("/block.7/x"), ValueId(7));  // not dup
  EXPECT_NE(dup, ValueId(7));
  EXPECT_EQ(g.find_value("/block.5000/x"), kNoValue);
  EXPECT_EQ(g.find_value(""), kNoValue);
  EXPECT_EQ(g.find_node("/block.1/x"), kNoNode);  // values and nodes are apart
  EXPECT_EQ(g.value_by_name_or_add("/block.42/x"), ValueId(42));
  const ValueId added = g.value_by_name_or_add("fresh");
  EXPECT_EQ(added, ValueId(kCount + 1));
  Graph copy = g;
  Graph moved = std::move(g);
  EXPECT_EQ(copy.find_value("/block.4999/x"), ValueId(4999));
  EXPECT_EQ(moved.find_value("fresh"), added);
  EXPECT_EQ(moved.find_value("/block.0/x"), ValueId(0));
}

TEST(Graph, TopologicalOrderFollowsDataNotInsertion) {
  Graph g;
  ValueId x = g.add_value(named("x"));
  g.add_input(x);
  ValueId a = g.add_value(named("a"));
  ValueId b = g.add_value(named("b"));
  // Inserted consumer-first: b = Neg(a) before a = Relu(x).
  g.add_node(op_node("neg", "Neg", a, b));
  g.add_node(op_node("relu", "Relu", x, a));
  auto order = g.topological_order();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(g.node(order[0]).name, "relu");
  EXPECT_EQ(g.node(order[1]).name, "neg");
}

TEST(Graph, ValidateRejectsCycle) {
  Graph g;
  ValueId a = g.add_value(named("a"));
  ValueId b = g.add_value(named("b"));
  g.add_node(op_node("n1", "Relu", b, a));
  g.add_node(op_node("n2", "Relu", a, b));
  try {
    g.validate();
    FAIL() << "cycle not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
  }
}

TEST(Graph, ValidateRejectsUndefinedInput) {
  Graph g;
  ValueId ghost = g.add_value(named("ghost"));
  ValueId out = g.add_value(named("out"));
  g.add_node(op_node("n", "Relu", ghost, out));
  g.add_output(out);
  try {
    g.validate();
    FAIL() << "undefined input not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("undefined tensor 'ghost'"), std::string::npos)
        << e.what();
  }
}

TEST(Graph, ValidateRejectsDuplicateOutputs) {
  Graph g;
  ValueId x = g.add_value(named("x"));
  g.add_input(x);
  ValueId y = g.add_value(named("y"));
  g.add_node(op_node("a", "Relu", x, y));
  g.add_node(op_node("b", "Neg", x, y));
  EXPECT_THROW(g.validate(), Error);
}

TEST(Graph, ScopesDropOpAndLeafModule) {
  GraphBuilder b;
  auto x = b.input("x", {1});
  auto c = b.op("Conv", {x}, {}, "/layer1/0/conv1/Conv");
  auto r = b.op("Relu", {c}, {}, "/layer1/0/relu/Relu");
  auto a = b.op("Add", {r, x}, {}, "/layer1/0/Add");
  auto top = b.op("Relu", {a}, {}, "/Relu");
  auto stem = b.op("Relu", {top}, {}, "/conv1/Conv");
  b.output(stem);
  Graph g = b.build();
  g.derive_scopes();
  EXPECT_EQ(g.node(g.find_node("/layer1/0/conv1/Conv")).scope, "layer1/0");
  EXPECT_EQ(g.node(g.find_node("/layer1/0/relu/Relu")).scope, "layer1/0");
  EXPECT_EQ(g.node(g.find_node("/layer1/0/Add")).scope, "layer1/0");
  EXPECT_EQ(g.node(g.find_node("/Relu")).scope, "");
  EXPECT_EQ(g.node(g.find_node("/conv1/Conv")).scope, "");
}

TEST(Graph, ByteCounts) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto w = b.constant("w", TensorData::from_floats({2, 3}, std::vector<float>(6, 1.f)));
  b.output(b.op("Add", {x, w}));
  Graph g = b.build();
  EXPECT_EQ(g.parameter_bytes(), 24);
  EXPECT_EQ(g.activation_bytes(), 48);  // x and the Add output
}

TEST(Shape, RendersSymbolicAndUnknown) {
  Shape s({Dim::named("batch"), Dim::fixed(768), Dim{}});
  EXPECT_EQ(s.str(), "[batch,768,?]");
  EXPECT_FALSE(s.is_static());
  EXPECT_FALSE(s.numel().has_value());
  EXPECT_EQ(Shape().str(), "?");
  EXPECT_EQ(Shape::of({2, 3, 4}).numel(), 24);
  EXPECT_EQ(Shape::scalar().numel(), 1);
}

TEST(Shape, NumelSaturatesOnAbsurdDims) {
  auto n = Shape::of({1LL << 40, 1LL << 40, 1LL << 40}).numel();
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, std::numeric_limits<int64_t>::max());
}

TEST(TensorData, ConvertsElements) {
  auto t = TensorData::from_int64s({3}, {1, -2, 3});
  EXPECT_EQ(t->to_floats(), (std::vector<float>{1.f, -2.f, 3.f}));
  EXPECT_EQ(t->byte_size(), 24u);
  EXPECT_FALSE(t->is_file_backed());
}

}  // namespace
}  // namespace fx
