// SPDX-License-Identifier: Apache-2.0
// The length of a Range whose limit comes from the input's shape (a transformer's
// causal mask), which ONNX shape inference alone leaves unknown.
#include "onnx/range_shape.h"

#include <gtest/gtest.h>

#include "model_factory.h"
#include "onnx/model_loader.h"

namespace fx {
namespace {

using testing::add_node;
using testing::TempDir;

void add_int64_scalar(onnx::GraphProto* g, const std::string& name, int64_t v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_int64_data(v);
}

// x[batch, seq, 4] -> the causal mask of GPT-2's export: n = Cast(Gather(Shape(x), 1)),
// r = Range(0, n, 1), mask = LessOrEqual(Unsqueeze(r, 0), Unsqueeze(r, 1)) [seq, seq],
// y = Where(mask, 1, 0) [seq, seq].
onnx::ModelProto causal_mask_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  testing::add_float_io(g->add_input(), "x", {0, 0, 4}, {"batch", "seq", ""});
  auto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_int64_scalar(g, "zero", 0);
  add_int64_scalar(g, "one", 1);
  add_int64_scalar(g, "seq_axis", 1);
  auto* ax0 = g->add_initializer();
  ax0->set_name("axes0");
  ax0->set_data_type(onnx::TensorProto::INT64);
  ax0->add_dims(1);
  ax0->add_int64_data(0);
  auto* ax1 = g->add_initializer();
  *ax1 = *ax0;
  ax1->set_name("axes1");
  ax1->set_int64_data(0, 1);
  auto* on = g->add_initializer();
  on->set_name("on");
  on->set_data_type(onnx::TensorProto::FLOAT);
  on->add_float_data(1.f);
  auto* off = g->add_initializer();
  *off = *on;
  off->set_name("off");
  off->set_float_data(0, 0.f);
  add_node(g, "Shape", "shape", {"x"}, {"s"});
  add_node(g, "Gather", "gather", {"s", "seq_axis"}, {"n64"});
  auto* cast = add_node(g, "Cast", "cast", {"n64"}, {"n"});
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::INT64);
  add_node(g, "Range", "range", {"zero", "n", "one"}, {"r"});
  add_node(g, "Unsqueeze", "row", {"r", "axes0"}, {"r0"});
  add_node(g, "Unsqueeze", "col", {"r", "axes1"}, {"r1"});
  add_node(g, "LessOrEqual", "le", {"r0", "r1"}, {"mask"});
  add_node(g, "Where", "where", {"mask", "on", "off"}, {"y"});
  return m;
}

std::string shape_of(const LoadedModel& m, const std::string& value) {
  return m.graph.value(m.graph.find_value(value)).shape.str();
}

TEST(RangeShape, LengthFromABoundSymbolReachesTheMask) {
  TempDir dir;
  testing::save(causal_mask_model(), dir.file("mask.onnx"));
  LoadOptions o;
  o.dims["batch"] = 1;
  o.dims["seq"] = 7;
  auto m = load_onnx(dir.file("mask.onnx"), o);
  EXPECT_EQ(shape_of(m, "r"), "[7]");
  EXPECT_EQ(shape_of(m, "mask"), "[7,7]");
  EXPECT_EQ(shape_of(m, "y"), "[7,7]");
  EXPECT_EQ(m.info.unknown_shape_nodes, 0);
}

TEST(RangeShape, LengthIsTheLimitsSymbolWhenUnbound) {
  TempDir dir;
  testing::save(causal_mask_model(), dir.file("mask.onnx"));
  auto m = load_onnx(dir.file("mask.onnx"));
  EXPECT_EQ(shape_of(m, "r"), "[seq]");
  EXPECT_EQ(shape_of(m, "mask"), "[seq,seq]");
}

TEST(RangeShape, ConstantOperandsGiveTheCeilOfTheSpanOverTheStep) {
  onnx::GraphProto g;
  add_int64_scalar(&g, "a", 2);
  add_int64_scalar(&g, "b", 11);
  add_int64_scalar(&g, "d", 3);
  add_int64_scalar(&g, "neg", -2);
  add_node(&g, "Range", "r1", {"a", "b", "d"}, {"r1"});    // 2, 5, 8: 3
  add_node(&g, "Range", "r2", {"a", "b", "neg"}, {"r2"});  // empty: 0
  add_node(&g, "Range", "r3", {"a", "n", "d"}, {"r3"});    // n unknown: left alone
  EXPECT_EQ(set_range_lengths(g, {}), 2);
  ASSERT_EQ(g.value_info_size(), 2);
  EXPECT_EQ(g.value_info(0).name(), "r1");
  EXPECT_EQ(g.value_info(0).type().tensor_type().shape().dim(0).dim_value(), 3);
  EXPECT_EQ(g.value_info(1).name(), "r2");
  EXPECT_EQ(g.value_info(1).type().tensor_type().shape().dim(0).dim_value(), 0);
}

}  // namespace
}  // namespace fx
