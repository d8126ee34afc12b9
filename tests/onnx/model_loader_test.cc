// SPDX-License-Identifier: Apache-2.0
#include "onnx/model_loader.h"

#include <gtest/gtest.h>

#include "model_factory.h"
#include "onnx/onnx_source.h"

namespace fx {
namespace {

using testing::TempDir;

TEST(ModelLoader, ImportsStructureShapesAndScopes) {
  TempDir dir;
  testing::save(testing::relu_add_model(4), dir.file("m.onnx"));
  auto m = load_onnx(dir.file("m.onnx"));
  const Graph& g = m.graph;
  ASSERT_EQ(g.node_count(), 2u);
  EXPECT_EQ(g.node(0).op_type, "Relu");
  EXPECT_EQ(g.node(0).scope, "block");
  EXPECT_EQ(g.node(1).scope, "block");
  ValueId r = g.find_value("r");
  ASSERT_NE(r, kNoValue);
  EXPECT_EQ(g.value(r).shape.str(), "[1,4]");  // from shape inference
  EXPECT_EQ(g.value(r).dtype, DType::Float32);
  EXPECT_EQ(g.runtime_inputs().size(), 1u);
  EXPECT_EQ(g.parameter_bytes(), 16);
  EXPECT_EQ(m.info.ir_version, 8);
  EXPECT_EQ(m.info.unknown_shape_nodes, 0);
}

TEST(ModelLoader, LargeWeightsStayInTheFile) {
  TempDir dir;
  testing::save(testing::relu_add_model(4096), dir.file("big.onnx"));
  auto m = load_onnx(dir.file("big.onnx"));
  const Value& w = m.graph.value(m.graph.find_value("w"));
  ASSERT_TRUE(w.data);
  EXPECT_TRUE(w.data->is_file_backed());
  auto f = w.data->to_floats();  // not as<float>(): raw_data in the file is not 4-aligned
  ASSERT_EQ(f.size(), 4096u);
  EXPECT_EQ(f[0], 0.f);
  EXPECT_EQ(f[4095], 4095.f);
  // The parsed proto holds the structure, not the weights.
  EXPECT_LT(m.source->proto.ByteSizeLong(), 2048u);
}

TEST(ModelLoader, ExternalDataIsReferencedNotCopied) {
  TempDir dir;
  auto m = testing::relu_add_model(4);
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  kv = w->add_external_data();
  kv->set_key("offset");
  kv->set_value("8");
  float vals[6] = {-1, -1, 10, 20, 30, 40};
  testing::write_bytes(dir.file("w.bin"), std::string(reinterpret_cast<char*>(vals), sizeof vals));
  testing::save(m, dir.file("ext.onnx"));
  auto loaded = load_onnx(dir.file("ext.onnx"));
  const Value& v = loaded.graph.value(loaded.graph.find_value("w"));
  EXPECT_TRUE(v.data->is_file_backed());
  EXPECT_EQ(v.data->to_floats(), (std::vector<float>{10, 20, 30, 40}));
}

TEST(ModelLoader, BindsSymbolicDims) {
  TempDir dir;
  auto m = testing::relu_add_model(4);
  testing::add_float_io(m.mutable_graph()->mutable_input(0), "x", {0, 4}, {"batch", ""});
  testing::add_float_io(m.mutable_graph()->mutable_output(0), "y", {0, 4}, {"batch", ""});
  testing::save(m, dir.file("sym.onnx"));

  auto symbolic = load_onnx(dir.file("sym.onnx"));
  EXPECT_EQ(symbolic.graph.value(symbolic.graph.find_value("r")).shape.str(), "[batch,4]");

  LoadOptions o;
  o.dims["batch"] = 8;
  auto bound = load_onnx(dir.file("sym.onnx"), o);
  EXPECT_EQ(bound.graph.value(bound.graph.find_value("r")).shape.str(), "[8,4]");
  EXPECT_EQ(bound.graph.value(bound.graph.find_value("y")).shape.str(), "[8,4]");
}

TEST(ModelLoader, UnknownOpIsKeptAndMarked) {
  TempDir dir;
  auto m = testing::relu_add_model(4);
  auto* n = testing::add_node(m.mutable_graph(), "MysteryOp", "mystery", {"y"}, {"z"});
  n->set_domain("com.example");
  auto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  testing::add_float_io(m.mutable_graph()->add_output(), "z", {});
  m.mutable_graph()->mutable_output(1)->mutable_type()->mutable_tensor_type()->clear_shape();
  testing::save(m, dir.file("custom.onnx"));
  auto loaded = load_onnx(dir.file("custom.onnx"));
  ASSERT_EQ(loaded.graph.node_count(), 3u);
  const Node& mystery = loaded.graph.node(loaded.graph.find_node("mystery"));
  EXPECT_EQ(mystery.qualified_op(), "com.example::MysteryOp");
  EXPECT_TRUE(mystery.shape_unknown);
  EXPECT_EQ(loaded.info.unknown_shape_nodes, 1);
}

// Shapes in a second step (the explorer paints first) end where one step ends.
TEST(ModelLoader, TypesInferredLaterMatchALoadWithShapes) {
  TempDir dir;
  auto m = testing::relu_add_model(4);
  auto* n = testing::add_node(m.mutable_graph(), "MysteryOp", "mystery", {"y"}, {"z"});
  n->set_domain("com.example");
  auto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  testing::add_float_io(m.mutable_graph()->add_output(), "z", {});
  m.mutable_graph()->mutable_output(1)->mutable_type()->mutable_tensor_type()->clear_shape();
  testing::save(m, dir.file("m.onnx"));
  const auto full = load_onnx(dir.file("m.onnx"));
  LoadOptions later;
  later.infer_shapes = false;
  auto model = load_onnx(dir.file("m.onnx"), later);
  const ValueId r = model.graph.find_value("r");
  ASSERT_NE(r, kNoValue);
  EXPECT_FALSE(model.graph.value(r).shape.rank_known());  // not inferred yet
  InferredTypes types = infer_value_types(model);
  EXPECT_FALSE(types.entries.empty());
  apply_value_types(model, std::move(types));
  ASSERT_EQ(model.graph.node_count(), full.graph.node_count());
  for (std::size_t i = 0; i < full.graph.value_count(); ++i) {
    const Value& want = full.graph.value(ValueId(i));
    const ValueId id = model.graph.find_value(want.name);
    ASSERT_NE(id, kNoValue) << want.name;
    EXPECT_EQ(model.graph.value(id).shape.str(), want.shape.str()) << want.name;
    EXPECT_EQ(model.graph.value(id).dtype, want.dtype) << want.name;
  }
  for (std::size_t i = 0; i < full.graph.node_count(); ++i)
    EXPECT_EQ(model.graph.node(NodeId(i)).shape_unknown, full.graph.node(NodeId(i)).shape_unknown)
        << full.graph.node(NodeId(i)).name;
  EXPECT_EQ(model.info.unknown_shape_nodes, 1);
  EXPECT_EQ(model.graph.value(r).shape.str(), "[1,4]");
}

TEST(ModelLoader, ConstantNodeAttributeDecoded) {
  TempDir dir;
  auto m = testing::relu_add_model(4);
  auto* g = m.mutable_graph();
  g->clear_initializer();
  auto* c = testing::add_node(g, "Constant", "const_w", {}, {"w"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  for (float f : {1.f, 2.f, 3.f, 4.f}) t->add_float_data(f);
  // Constant must precede its consumer for a sorted file, but import sorts anyway.
  testing::save(m, dir.file("const.onnx"));
  auto loaded = load_onnx(dir.file("const.onnx"));
  auto data = loaded.graph.node(loaded.graph.find_node("const_w")).attrs.get_tensor("value");
  ASSERT_TRUE(data);
  EXPECT_EQ(data->to_floats(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_NO_THROW(loaded.graph.topological_order());
}

}  // namespace
}  // namespace fx
