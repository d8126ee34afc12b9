// SPDX-License-Identifier: Apache-2.0
// Control flow end to end: If, Loop and Scan models built here are imported (subgraphs
// with their outer-scope references), run by the runtime and checked against values
// worked out by hand; sequence ops inside a loop; the fused export keeps subgraphs.

#include <gtest/gtest.h>

#include "ir/subgraph.h"
#include "onnx/fused_model_export.h"
#include "onnx/model_factory.h"
#include "onnx/model_loader.h"
#include "runtime/executor.h"
#include "util/error.h"

namespace fx {
namespace {

using testing::add_float_io;
using testing::add_node;

void add_io(onnx::ValueInfoProto* vi, const std::string& name, int elem,
            const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* s = t->mutable_shape();
  for (int64_t d : dims) s->add_dim()->set_dim_value(d);
}

void add_floats(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<float>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

void add_int64s(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

onnx::GraphProto* graph_attr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

void int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void ints_attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

onnx::ModelProto new_model(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  return m;
}

LoadedModel load(const onnx::ModelProto& m, const testing::TempDir& dir) {
  const std::string path = dir.file("model.onnx");
  testing::save(m, path);
  return load_onnx(path);
}

// x[3], cond -> If(then: x + one, else: x * two); `one` and `two` are outer initializers
// read by name from inside the branches.
onnx::ModelProto if_model() {
  auto m = new_model(13);
  auto* g = m.mutable_graph();
  g->set_name("if_model");
  add_io(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  add_float_io(g->add_input(), "x", {3});
  add_float_io(g->add_output(), "y", {3});
  add_floats(g, "one", {3}, {1, 1, 1});
  add_floats(g, "two", {3}, {2, 2, 2});
  auto* n = add_node(g, "If", "the_if", {"cond"}, {"y"});
  auto* then_g = graph_attr(n, "then_branch");
  add_node(then_g, "Add", "then_add", {"x", "one"}, {"t"});
  add_float_io(then_g->add_output(), "t", {3});
  auto* else_g = graph_attr(n, "else_branch");
  add_node(else_g, "Mul", "else_mul", {"x", "two"}, {"e"});
  add_float_io(else_g->add_output(), "e", {3});
  return m;
}

std::vector<float> run1(const LoadedModel& lm, const std::map<std::string, Tensor>& in,
                        std::size_t output = 0) {
  Executor ex(lm.graph, ExecutorOptions{1, 0});
  return ex.run(in).at(output).to_floats();
}

TEST(ControlFlow, IfImportsBranchesWithOuterReferences) {
  testing::TempDir dir;
  auto lm = load(if_model(), dir);
  const Node& n = lm.graph.node(lm.graph.find_node("the_if"));
  ASSERT_TRUE(has_subgraphs(n));
  auto subs = subgraphs_of(n);
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[1].first, "then_branch");
  // then reads x and one, else x and two: three implicit inputs after cond.
  EXPECT_EQ(explicit_input_count(n), 1);
  EXPECT_EQ(n.implicit_inputs, 3);
  const Graph& then_g = *subs[1].second;
  ASSERT_EQ(then_g.outer_refs().size(), 2u);
  EXPECT_EQ(then_g.value(then_g.outer_refs()[1]).name, "one");
  // A value read only inside a branch is used: the If consumes it.
  const Value& two = lm.graph.value(lm.graph.find_value("two"));
  ASSERT_EQ(two.consumers.size(), 1u);
  EXPECT_EQ(lm.graph.node(two.consumers[0]).name, "the_if");
  EXPECT_EQ(total_node_count(lm.graph), 3);
}

TEST(ControlFlow, IfRunsTheBranchTheConditionPicks) {
  testing::TempDir dir;
  auto lm = load(if_model(), dir);
  const Tensor x = Tensor::from_floats({3}, {1, 2, 3});
  EXPECT_EQ(run1(lm, {{"cond", Tensor::from_bools({}, {true})}, {"x", x}}),
            (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(run1(lm, {{"cond", Tensor::from_bools({}, {false})}, {"x", x}}),
            (std::vector<float>{2, 4, 6}));
}

// An opset-11 If whose branch holds Softmax(axis=1) over x[1,2,2]: before opset 13 Softmax
// flattens to [1, 4] and normalises all four values; from 13 it normalises along axis 1.
onnx::ModelProto if_softmax_model(int opset) {
  auto m = new_model(opset);
  auto* g = m.mutable_graph();
  g->set_name("if_softmax");
  add_io(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  add_float_io(g->add_input(), "x", {1, 2, 2});
  add_float_io(g->add_output(), "y", {1, 2, 2});
  auto* n = add_node(g, "If", "the_if", {"cond"}, {"y"});
  auto* then_g = graph_attr(n, "then_branch");
  int_attr(add_node(then_g, "Softmax", "then_softmax", {"x"}, {"t"}), "axis", 1);
  add_float_io(then_g->add_output(), "t", {1, 2, 2});
  auto* else_g = graph_attr(n, "else_branch");
  add_node(else_g, "Identity", "else_id", {"x"}, {"e"});
  add_float_io(else_g->add_output(), "e", {1, 2, 2});
  return m;
}

TEST(ControlFlow, ABranchRunsAtTheOpsetOfItsModel) {
  const Tensor x = Tensor::from_floats({1, 2, 2}, {0, 0, 0, 0});
  for (int opset : {11, 13}) {
    testing::TempDir dir;
    auto lm = load(if_softmax_model(opset), dir);
    Executor ex(lm.graph, ExecutorOptions{1, opset});
    const auto y = ex.run({{"cond", Tensor::from_bools({}, {true})}, {"x", x}}).at(0).to_floats();
    const float want = opset < 13 ? 0.25f : 0.5f;
    for (float v : y) EXPECT_FLOAT_EQ(v, want) << "opset " << opset;
  }
}

// Loop(M, cond=true, s0=[0,0]): body s = s_in + x (x outer), scan = s + i, and
// cond_out = i < 2, so the loop stops after iteration 2 even when M is larger.
onnx::ModelProto loop_model() {
  auto m = new_model(13);
  auto* g = m.mutable_graph();
  g->set_name("loop_model");
  add_io(g->add_input(), "M", onnx::TensorProto::INT64, {});
  add_float_io(g->add_input(), "x", {2});
  add_float_io(g->add_output(), "s_final", {2});
  add_io(g->add_output(), "scan", onnx::TensorProto::FLOAT, {});
  g->mutable_output(1)->mutable_type()->mutable_tensor_type()->clear_shape();
  add_floats(g, "s0", {2}, {0, 0});
  add_int64s(g, "two_i", {}, {2});
  auto* cond = g->add_initializer();
  cond->set_name("true_c");
  cond->set_data_type(onnx::TensorProto::BOOL);
  cond->add_int32_data(1);
  auto* n = add_node(g, "Loop", "the_loop", {"M", "true_c", "s0"}, {"s_final", "scan"});
  auto* b = graph_attr(n, "body");
  add_io(b->add_input(), "i", onnx::TensorProto::INT64, {});
  add_io(b->add_input(), "c_in", onnx::TensorProto::BOOL, {});
  add_float_io(b->add_input(), "s_in", {2});
  add_node(b, "Add", "b_add", {"s_in", "x"}, {"s_out"});
  add_node(b, "Cast", "b_cast", {"i"}, {"i_f"});
  int_attr(b->mutable_node(1), "to", onnx::TensorProto::FLOAT);
  add_node(b, "Add", "b_scan", {"s_out", "i_f"}, {"scan_out"});
  add_node(b, "Less", "b_less", {"i", "two_i"}, {"c_out"});
  add_io(b->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  add_float_io(b->add_output(), "s_out", {2});
  add_float_io(b->add_output(), "scan_out", {2});
  return m;
}

TEST(ControlFlow, LoopCarriesValuesStacksScanOutputsAndStopsOnCond) {
  testing::TempDir dir;
  auto lm = load(loop_model(), dir);
  Executor ex(lm.graph, ExecutorOptions{1, 0});
  const Tensor x = Tensor::from_floats({2}, {1, 10});
  // M = 10, cond_out false after iteration 2: three iterations.
  auto out = ex.run({{"M", Tensor::from_int64s({}, {10})}, {"x", x}});
  EXPECT_EQ(out[0].to_floats(), (std::vector<float>{3, 30}));
  EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(out[1].to_floats(), (std::vector<float>{1, 10, 3, 21, 5, 32}));
  // M = 1: one iteration; M = 0: none, the carried value passes through.
  out = ex.run({{"M", Tensor::from_int64s({}, {1})}, {"x", x}});
  EXPECT_EQ(out[0].to_floats(), (std::vector<float>{1, 10}));
  EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{1, 2}));
  out = ex.run({{"M", Tensor::from_int64s({}, {0})}, {"x", x}});
  EXPECT_EQ(out[0].to_floats(), (std::vector<float>{0, 0}));
  EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{0, 2}));
}

// Scan (opset 11): state s[2] += row; each step's sum is the scan output.
onnx::ModelProto scan_model(int64_t input_direction, int64_t output_direction) {
  auto m = new_model(11);
  auto* g = m.mutable_graph();
  g->set_name("scan_model");
  add_float_io(g->add_input(), "X", {3, 2});
  add_float_io(g->add_output(), "s_final", {2});
  add_float_io(g->add_output(), "Y", {3, 2});
  add_floats(g, "s0", {2}, {0, 0});
  auto* n = add_node(g, "Scan", "the_scan", {"s0", "X"}, {"s_final", "Y"});
  int_attr(n, "num_scan_inputs", 1);
  ints_attr(n, "scan_input_directions", {input_direction});
  ints_attr(n, "scan_output_directions", {output_direction});
  auto* b = graph_attr(n, "body");
  add_float_io(b->add_input(), "s_in", {2});
  add_float_io(b->add_input(), "row", {2});
  add_node(b, "Add", "b_add", {"s_in", "row"}, {"s_out"});
  add_node(b, "Identity", "b_id", {"s_out"}, {"y"});
  add_float_io(b->add_output(), "s_out", {2});
  add_float_io(b->add_output(), "y", {2});
  return m;
}

TEST(ControlFlow, ScanRunsForwardAndReverse) {
  testing::TempDir dir;
  const Tensor X = Tensor::from_floats({3, 2}, {1, 2, 3, 4, 5, 6});
  {
    auto lm = load(scan_model(0, 0), dir);
    Executor ex(lm.graph, ExecutorOptions{1, 0});
    auto out = ex.run({{"X", X}});
    EXPECT_EQ(out[0].to_floats(), (std::vector<float>{9, 12}));
    EXPECT_EQ(out[1].to_floats(), (std::vector<float>{1, 2, 4, 6, 9, 12}));
  }
  {
    // Rows read last to first; outputs written last to first.
    auto lm = load(scan_model(1, 1), dir);
    Executor ex(lm.graph, ExecutorOptions{1, 0});
    auto out = ex.run({{"X", X}});
    EXPECT_EQ(out[0].to_floats(), (std::vector<float>{9, 12}));
    EXPECT_EQ(out[1].to_floats(), (std::vector<float>{9, 12, 8, 10, 5, 6}));
  }
}

// A sequence grown by a loop: SequenceEmpty, then per iteration SequenceInsert of
// the iteration number (as float, times x); ConcatFromSequence stacks them. Beside it
// SplitToSequence / SequenceErase / SequenceAt / SequenceLength on x.
onnx::ModelProto sequence_model() {
  auto m = new_model(13);
  auto* g = m.mutable_graph();
  g->set_name("sequence_model");
  add_float_io(g->add_input(), "x", {2});
  add_io(g->add_output(), "stacked", onnx::TensorProto::FLOAT, {});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  add_io(g->add_output(), "count", onnx::TensorProto::INT64, {});
  add_io(g->add_output(), "last", onnx::TensorProto::FLOAT, {});
  g->mutable_output(2)->mutable_type()->mutable_tensor_type()->clear_shape();
  add_int64s(g, "M", {}, {3});
  add_int64s(g, "minus1", {}, {-1});
  auto* e = add_node(g, "SequenceEmpty", "seq_empty", {}, {"seq0"});
  int_attr(e, "dtype", onnx::TensorProto::FLOAT);
  auto* n = add_node(g, "Loop", "seq_loop", {"M", "", "seq0"}, {"seq_final"});
  auto* b = graph_attr(n, "body");
  add_io(b->add_input(), "i", onnx::TensorProto::INT64, {});
  add_io(b->add_input(), "c_in", onnx::TensorProto::BOOL, {});
  auto* sin = b->add_input();
  sin->set_name("seq_in");
  sin->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::FLOAT);
  add_node(b, "Cast", "b_cast", {"i"}, {"i_f"});
  int_attr(b->mutable_node(0), "to", onnx::TensorProto::FLOAT);
  add_node(b, "Mul", "b_mul", {"x", "i_f"}, {"item"});
  add_node(b, "SequenceInsert", "b_insert", {"seq_in", "item"}, {"seq_out"});
  add_node(b, "Identity", "b_cond", {"c_in"}, {"c_out"});
  add_io(b->add_output(), "c_out", onnx::TensorProto::BOOL, {});
  *b->add_output() = *sin;
  b->mutable_output(1)->set_name("seq_out");
  auto* c = add_node(g, "ConcatFromSequence", "concat", {"seq_final"}, {"stacked"});
  int_attr(c, "axis", 0);
  int_attr(c, "new_axis", 1);
  auto* s = add_node(g, "SplitToSequence", "split", {"x"}, {"parts"});
  int_attr(s, "keepdims", 0);
  add_node(g, "SequenceErase", "erase", {"parts", "minus1"}, {"first_only"});
  add_node(g, "SequenceLength", "length", {"first_only"}, {"count"});
  add_node(g, "SequenceAt", "at", {"parts", "minus1"}, {"last"});
  return m;
}

TEST(ControlFlow, SequencesThroughALoop) {
  testing::TempDir dir;
  auto lm = load(sequence_model(), dir);
  Executor ex(lm.graph, ExecutorOptions{1, 0});
  auto out = ex.run({{"x", Tensor::from_floats({2}, {1, 2})}});
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(out[0].to_floats(), (std::vector<float>{0, 0, 1, 2, 2, 4}));
  EXPECT_EQ(out[1].to_int64s(), (std::vector<int64_t>{1}));
  EXPECT_EQ(out[2].dims(), (std::vector<int64_t>{}));
  EXPECT_EQ(out[2].to_floats(), (std::vector<float>{2}));
}

// String tensors through a sequence: SequenceConstruct of two, SequenceInsert of a
// third, SequenceAt reads one back, SequenceLength counts them.
TEST(ControlFlow, SequencesHoldStringTensors) {
  auto m = new_model(13);
  auto* g = m.mutable_graph();
  g->set_name("string_sequence");
  add_io(g->add_input(), "a", onnx::TensorProto::STRING, {2});
  add_io(g->add_input(), "b", onnx::TensorProto::STRING, {1});
  add_io(g->add_output(), "picked", onnx::TensorProto::STRING, {});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  add_io(g->add_output(), "count", onnx::TensorProto::INT64, {});
  add_int64s(g, "one", {}, {1});
  add_node(g, "SequenceConstruct", "construct", {"a", "b"}, {"seq"});
  add_node(g, "SequenceInsert", "insert", {"seq", "a"}, {"seq3"});
  add_node(g, "SequenceAt", "at", {"seq3", "one"}, {"picked"});
  add_node(g, "SequenceLength", "length", {"seq3"}, {"count"});
  testing::TempDir dir;
  auto lm = load(m, dir);
  Executor ex(lm.graph, ExecutorOptions{1, 0});
  auto out = ex.run(
      {{"a", Tensor::from_strings({2}, {"x", "yy"})}, {"b", Tensor::from_strings({1}, {"zzz"})}});
  EXPECT_EQ(out[0].dtype(), DType::String);
  EXPECT_EQ(out[0].to_strings(), (std::vector<std::string>{"zzz"}));
  EXPECT_EQ(out[1].to_int64s(), (std::vector<int64_t>{3}));
}

TEST(ControlFlow, UnsupportedOpInABodyIsNamed) {
  auto m = if_model();
  m.mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(0)
      ->mutable_g()
      ->mutable_node(0)
      ->set_op_type("NoSuchOp");
  testing::TempDir dir;
  LoadedModel lm;
  try {
    lm = load(m, dir);
  } catch (const Error&) {
    GTEST_SKIP() << "shape inference rejects the unknown op first";
  }
  try {
    Executor ex(lm.graph);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NoSuchOp"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the_if"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fx
