// SPDX-License-Identifier: Apache-2.0
#include "analysis/op_kind.h"

#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include "ir/graph_builder.h"

namespace fx {
namespace {

TEST(OpKind, EveryStandardOnnxOpHasAKind) {
  int checked = 0;
  std::vector<std::string> missing;
  for (const auto& s : ONNX_NAMESPACE::OpSchemaRegistry::get_all_schemas()) {
    if (!s.domain().empty() && s.domain() != "ai.onnx") continue;
    ++checked;
    if (!classify_op("", s.Name()).known) missing.push_back(s.Name());
  }
  EXPECT_GT(checked, 150);
  EXPECT_TRUE(missing.empty()) << "unclassified: " << ::testing::PrintToString(missing);
}

TEST(OpKind, KindsFollowTvmTaxonomy) {
  EXPECT_EQ(classify_op("", "Relu").kind, OpKind::Elementwise);
  EXPECT_EQ(classify_op("", "Add").kind, OpKind::Broadcast);
  EXPECT_EQ(classify_op("", "Transpose").kind, OpKind::Injective);
  EXPECT_EQ(classify_op("", "Gather").kind, OpKind::Injective);
  EXPECT_EQ(classify_op("", "ReduceMean").kind, OpKind::Reduction);
  EXPECT_EQ(classify_op("", "Softmax").kind, OpKind::Reduction);
  for (const char* a : {"Conv", "ConvTranspose", "MatMul", "Gemm"})
    EXPECT_EQ(classify_op("", a).kind, OpKind::Anchor) << a;
  EXPECT_EQ(classify_op("", "NonZero").kind, OpKind::Opaque);
  EXPECT_LT(OpKind::Elementwise, OpKind::Broadcast);
  EXPECT_LT(OpKind::Reduction, OpKind::Anchor);
  EXPECT_EQ(combine(OpKind::Injective, OpKind::Broadcast), OpKind::Injective);
  EXPECT_EQ(op_kind_name(OpKind::Anchor), "anchor");
}

TEST(OpKind, ControlFlowIsOpaqueWithFlag) {
  for (const char* op : {"If", "Loop", "Scan"}) {
    OpClass c = classify_op("", op);
    EXPECT_EQ(c.kind, OpKind::Opaque) << op;
    EXPECT_TRUE(c.control_flow) << op;
    EXPECT_TRUE(c.known) << op;
  }
  EXPECT_FALSE(classify_op("", "Relu").control_flow);
}

TEST(OpKind, UnknownAndCustomDomainOpsAreOpaqueNotErrors) {
  OpClass unknown = classify_op("", "NoSuchOp");
  EXPECT_EQ(unknown.kind, OpKind::Opaque);
  EXPECT_FALSE(unknown.known);
  OpClass custom = classify_op("com.microsoft", "Relu");
  EXPECT_EQ(custom.kind, OpKind::Opaque);
  EXPECT_FALSE(custom.known);
  EXPECT_TRUE(classify_op("ai.onnx", "Relu").known);
}

TEST(OpKind, BinaryOpWithSameShapesIsElementwise) {
  GraphBuilder b;
  auto x = b.input("x", {2, 8});
  auto y = b.input("y", {2, 8});
  auto bias = b.input("bias", {8});
  auto same = b.op("Add", {x, y}, {}, "same");
  auto bc = b.op("Add", {same, bias}, {}, "bcast");
  auto scaled = b.op("Mul", {bc, b.constant("k", TensorData::from_floats({}, {2.f}))}, {}, "k");
  b.output(scaled);
  Graph g = b.build();
  EXPECT_EQ(classify(g, g.node(g.find_node("same"))), OpKind::Elementwise);
  EXPECT_EQ(classify(g, g.node(g.find_node("bcast"))), OpKind::Broadcast);
  EXPECT_EQ(classify(g, g.node(g.find_node("k"))), OpKind::Elementwise);  // scalar constant
}

TEST(OpKind, ConstantHasNoKernel) {
  EXPECT_TRUE(classify_op("", "Constant").no_kernel);
}

}  // namespace
}  // namespace fx
