// SPDX-License-Identifier: Apache-2.0
// Each canonical pass on a small graph built here: node counts before and after, what
// the record says, and that disabling a pass by name leaves its nodes.

#include <gtest/gtest.h>

#include <cstring>

#include "ir/graph_builder.h"
#include "transforms/canonical.h"
#include "transforms/constant_folding.h"
#include "util/error.h"

namespace fx::transforms {
namespace {

std::shared_ptr<TensorData> weights(std::vector<int64_t> dims, float start = 0) {
  int64_t n = 1;
  for (auto d : dims) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + float(i);
  return TensorData::from_floats(std::move(dims), v);
}

CanonicalOptions only(const std::string& pass) {
  CanonicalOptions o;
  for (const auto& p : canonical_pass_names())
    if (p != pass) o.disabled.insert(p);
  return o;
}

const PassRecord& record_of(const CanonicalRecord& r, const std::string& pass) {
  for (const auto& p : r.passes)
    if (p.pass == pass) return p;
  throw Error("no pass " + pass);
}

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node.op_type == op;
  return n;
}

// x -> Conv(W from a Constant node, B through an Identity) -> Relu -> y
Graph conv_with_habits() {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto w = b.op("Constant", {}, {{"value", weights({4, 3, 3, 3})}}, "w_const",
                Shape::of({4, 3, 3, 3}), DType::Float32);
  auto bias = b.constant("bias", weights({4}));
  auto bias_id = b.op("Identity", {bias}, {}, "bias_identity");
  auto c = b.op("Conv", {x, w, bias_id}, {}, "conv", Shape::of({1, 4, 6, 6}));
  b.output(b.op("Relu", {c}, {}, "relu"));
  return b.build();
}

TEST(ConstantToInitializer, ConstantNodeBecomesAWeight) {
  Graph g = conv_with_habits();
  EXPECT_EQ(g.node_count(), 4u);
  const int64_t before_params = g.parameter_bytes();
  CanonicalRecord rec;
  Graph c = canonicalize(g, only("constant-to-initializer"), &rec);
  EXPECT_EQ(c.node_count(), 3u);
  EXPECT_EQ(count_op(c, "Constant"), 0);
  const ValueId w = c.find_value("w_const:0");
  ASSERT_NE(w, kNoValue);
  EXPECT_TRUE(c.value(w).is_constant());
  EXPECT_EQ(c.parameter_bytes(), before_params + 4 * 3 * 3 * 3 * 4);
  const auto& p = record_of(rec, "constant-to-initializer");
  EXPECT_EQ(p.nodes_removed, 1);
  EXPECT_EQ(p.weights, std::vector<std::string>{"w_const:0"});
  EXPECT_EQ(p.weight_bytes, 4 * 3 * 3 * 3 * 4);
}

// float16 bits of small integers and halves (exact in both types).
std::shared_ptr<TensorData> half_weights(std::vector<int64_t> dims,
                                         const std::vector<uint16_t>& h) {
  std::vector<std::byte> bytes(h.size() * 2);
  std::memcpy(bytes.data(), h.data(), bytes.size());
  return TensorData::owned(DType::Float16, std::move(dims), std::move(bytes));
}

// x (float32) -> Cast(fp16) -> Add(W fp16) -> Relu -> Cast(fp32) -> y: the export
// habit of onnxconverter-common's keep_io_types.
Graph half_inside(DType in = DType::Float32, DType out = DType::Float32) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4}, in);
  auto h = b.op("Cast", {x}, {{"to", int64_t{10}}}, "to_half", Shape::of({1, 4}), DType::Float16);
  // 1.0, -2.0, 0.5, 65504 (the largest float16)
  auto w = b.constant("w", half_weights({1, 4}, {0x3c00, 0xc000, 0x3800, 0x7bff}));
  auto a = b.op("Add", {h, w}, {}, "add");
  auto r = b.op("Relu", {a}, {}, "relu");
  b.output(b.op("Cast", {r}, {{"to", int64_t{1}}}, "to_float", Shape::of({1, 4}), out));
  return b.build();
}

TEST(HalfToFloat, HalfInsideAFloatInterfaceComputesInFloat) {
  CanonicalRecord rec;
  Graph c = canonicalize(half_inside(), CanonicalOptions{}, &rec);
  for (const auto& v : c.values()) EXPECT_NE(v.dtype, DType::Float16) << v.name;
  EXPECT_EQ(count_op(c, "Cast"), 0);
  // The input's Cast is gone; the output's stays as an Identity (its name is the model's).
  EXPECT_EQ(count_op(c, "Identity"), 1);
  EXPECT_EQ(c.node_count(), 3u);
  const auto w = c.value(c.find_value("w")).data;
  ASSERT_EQ(w->dtype(), DType::Float32);
  EXPECT_EQ(w->to_floats(), (std::vector<float>{1.f, -2.f, 0.5f, 65504.f}));
  EXPECT_EQ(record_of(rec, "half-to-float").widened, 4);  // cast, w, add, relu
  EXPECT_NE(rec.summary().find("4 float16 tensors computed as float32"), std::string::npos);
}

TEST(HalfToFloat, AHalfInterfaceOrDisablingKeepsTheHalfGraph) {
  CanonicalRecord rec;
  Graph c = canonicalize(half_inside(DType::Float32, DType::Float16), CanonicalOptions{}, &rec);
  EXPECT_EQ(record_of(rec, "half-to-float").skipped_because, "float16 graph output");
  EXPECT_EQ(c.value(c.find_value("w")).data->dtype(), DType::Float16);
  c = canonicalize(half_inside(DType::Float16, DType::Float32), CanonicalOptions{}, &rec);
  EXPECT_EQ(record_of(rec, "half-to-float").skipped_because, "float16 graph input");
  EXPECT_EQ(c.value(c.find_value("w")).data->dtype(), DType::Float16);
  CanonicalOptions off;
  off.disabled.insert("half-to-float");
  Graph d = canonicalize(half_inside(), off, &rec);
  EXPECT_EQ(d.value(d.find_value("w")).dtype, DType::Float16);
  EXPECT_EQ(count_op(d, "Cast"), 2);
}

TEST(IdentityElimination, ReadersReadTheInput) {
  Graph g = conv_with_habits();
  CanonicalRecord rec;
  Graph c = canonicalize(g, only("identity-elimination"), &rec);
  EXPECT_EQ(c.node_count(), 3u);
  EXPECT_EQ(count_op(c, "Identity"), 0);
  const Node& conv = c.node(c.find_node("conv"));
  EXPECT_EQ(c.value(conv.inputs[2]).name, "bias");
  EXPECT_EQ(record_of(rec, "identity-elimination").weights.size(), 1u);
}

TEST(IdentityElimination, KeepsAGraphOutputsName) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4});
  auto r = b.op("Relu", {x}, {}, "relu");
  auto id = b.op("Identity", {r}, {}, "out_identity");
  b.output(id);
  Graph g = b.build();
  Graph c = canonicalize(g, {}, nullptr);
  EXPECT_EQ(c.node_count(), 2u);  // the Identity names the output: it stays
  ASSERT_EQ(c.outputs().size(), 1u);
  EXPECT_EQ(c.value(c.outputs()[0]).name, g.value(g.outputs()[0]).name);
}

TEST(IdentityElimination, NodesWithSubgraphsMakeItStepAside) {
  GraphBuilder b;
  auto x = b.input("x", {1});
  auto i = b.op("Identity", {x}, {}, "id");
  b.output(b.op("If", {i}, {{"then_branch", SubgraphRef{"then", 1}}}, "if"));
  Graph with_if = b.build();
  CanonicalRecord rec;
  Graph c = canonicalize(with_if, {}, &rec);
  EXPECT_EQ(c.node_count(), 2u);
  EXPECT_EQ(record_of(rec, "identity-elimination").skipped_because, "graph has subgraphs");
}

// x[2,3,4,4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) -> y: PyTorch's
// flatten without constant folding.
Graph shape_chain() {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 4, 4});
  auto s = b.op("Shape", {x}, {}, "shape", Shape::of({4}), DType::Int64);
  auto zero = b.constant("zero", TensorData::from_int64s({}, {0}));
  auto n =
      b.op("Gather", {s, zero}, {{"axis", int64_t(0)}}, "gather", Shape::scalar(), DType::Int64);
  auto axes = b.constant("axes", TensorData::from_int64s({1}, {0}));
  auto u = b.op("Unsqueeze", {n, axes}, {}, "unsqueeze", Shape::of({1}), DType::Int64);
  auto minus1 = b.constant("minus1", TensorData::from_int64s({1}, {-1}));
  auto cat =
      b.op("Concat", {u, minus1}, {{"axis", int64_t(0)}}, "concat", Shape::of({2}), DType::Int64);
  b.output(b.op("Reshape", {x, cat}, {}, "reshape", Shape::of({2, 48})));
  return b.build();
}

TEST(ShapeFolding, ShapeOfAStaticTensorIsAConstant) {
  CanonicalRecord rec;
  Graph c = canonicalize(shape_chain(), only("shape-folding"), &rec);
  EXPECT_EQ(c.node_count(), 4u);  // Shape went; Gather, Unsqueeze, Concat, Reshape stay
  EXPECT_EQ(count_op(c, "Shape"), 0);
  EXPECT_EQ(record_of(rec, "shape-folding").nodes_removed, 1);
}

TEST(ConstantFolding, ShapeChainFoldsDownToTheReshape) {
  Graph g = shape_chain();
  EXPECT_EQ(g.node_count(), 5u);
  CanonicalOptions o = only("shape-folding");
  o.disabled.erase("constant-folding");
  CanonicalRecord rec;
  Graph c = canonicalize(g, o, &rec);
  ASSERT_EQ(c.node_count(), 1u);
  const Node& r = c.node(0);
  EXPECT_EQ(r.op_type, "Reshape");
  auto shape = c.value(r.inputs[1]).data;
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->to_int64s(), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(record_of(rec, "constant-folding").nodes_removed, 3);
}

TEST(ConstantFolding, WithoutShapeFoldingTheChainStays) {
  CanonicalOptions o = only("constant-folding");
  Graph c = canonicalize(shape_chain(), o, nullptr);
  EXPECT_EQ(c.node_count(), 5u);  // Shape's input is not a constant: nothing to start from
}

TEST(ConstantFolding, EvaluatesTheFixedOpSet) {
  auto i64 = [](std::vector<int64_t> d, std::vector<int64_t> v) {
    return TensorData::from_int64s(std::move(d), v);
  };
  Node add;
  add.op_type = "Add";
  add.outputs = {0};
  EXPECT_EQ(fold_node(add, {i64({2}, {1, 2}), i64({}, {10})})->to_int64s(),
            (std::vector<int64_t>{11, 12}));
  Node slice;
  slice.op_type = "Slice";
  slice.outputs = {0};
  auto s = fold_node(slice, {i64({5}, {0, 1, 2, 3, 4}), i64({1}, {-1}), i64({1}, {-6}),
                             i64({1}, {0}), i64({1}, {-2})});
  EXPECT_EQ(s->to_int64s(), (std::vector<int64_t>{4, 2, 0}));
  Node tr;
  tr.op_type = "Transpose";
  tr.outputs = {0};
  auto t = fold_node(tr, {i64({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(t->dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t->to_int64s(), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  Node conv;  // not in the set: never folded here
  conv.op_type = "Conv";
  conv.outputs = {0};
  EXPECT_EQ(fold_node(conv, {weights({1, 1, 3, 3}), weights({1, 1, 1, 1})}), nullptr);
  // Full reductions and float rounding: torchvision's detection transform computes its
  // Resize's output size from a constant image size this way.
  Node rmin;
  rmin.op_type = "ReduceMin";
  rmin.outputs = {0};
  rmin.attrs.set("keepdims", int64_t{0});
  auto mn = fold_node(rmin, {i64({2}, {320, 240})});
  ASSERT_TRUE(mn);
  EXPECT_TRUE(mn->dims().empty());
  EXPECT_EQ(mn->to_int64s(), (std::vector<int64_t>{240}));
  Node rmax;  // keepdims defaults to 1
  rmax.op_type = "ReduceMax";
  rmax.outputs = {0};
  auto mx = fold_node(rmax, {TensorData::from_floats({2, 2}, {1.f, 7.5f, -2.f, 3.f})});
  ASSERT_TRUE(mx);
  EXPECT_EQ(mx->dims(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(mx->to_floats(), (std::vector<float>{7.5f}));
  rmax.attrs.set("axes", std::vector<int64_t>{1});  // a partial reduction: the runtime's
  EXPECT_EQ(fold_node(rmax, {TensorData::from_floats({2, 2}, {1.f, 7.5f, -2.f, 3.f})}), nullptr);
  for (auto [op, want] : {std::pair{"Reciprocal", 0.25f}, {"Floor", 4.f}, {"Ceil", 5.f}}) {
    Node u;
    u.op_type = op;
    u.outputs = {0};
    const float x = std::string(op) == "Reciprocal" ? 4.f : 4.5f;
    auto r = fold_node(u, {TensorData::from_floats({1}, {x})});
    ASSERT_TRUE(r) << op;
    EXPECT_EQ(r->to_floats(), (std::vector<float>{want})) << op;
    EXPECT_EQ(fold_node(u, {i64({1}, {4})}), nullptr) << op << " of an integer";
  }
  Node div;  // integer division by zero is the runtime's to report
  div.op_type = "Div";
  div.outputs = {0};
  EXPECT_EQ(fold_node(div, {i64({}, {1}), i64({}, {0})}), nullptr);
  // Mod: the divisor's sign (fmod = 0, integers), the dividend's with fmod = 1 (swin's
  // window padding (7 - W % 7) % 7 on the input's shape).
  Node mod;
  mod.op_type = "Mod";
  mod.outputs = {0};
  EXPECT_EQ(fold_node(mod, {i64({4}, {56, -5, 5, 7}), i64({4}, {7, 3, -3, 7})})->to_int64s(),
            (std::vector<int64_t>{0, 1, -1, 0}));
  EXPECT_EQ(fold_node(mod, {i64({}, {1}), i64({}, {0})}), nullptr);
  mod.attrs.set("fmod", int64_t{1});
  EXPECT_EQ(fold_node(mod, {i64({2}, {-5, 5}), i64({}, {3})})->to_int64s(),
            (std::vector<int64_t>{-2, 2}));
  EXPECT_EQ(fold_node(mod, {TensorData::from_floats({2}, {-5.5f, 5.5f}),
                            TensorData::from_floats({}, {2.f})})
                ->to_floats(),
            (std::vector<float>{-1.5f, 1.5f}));
}

TEST(ConvBnFolding, BatchNormGoesIntoTheConvsWeights) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto w = b.constant("w", weights({2, 2, 1, 1}, 1));  // [[1,2],[3,4]]
  auto c = b.op("Conv", {x, w}, {}, "conv", Shape::of({1, 2, 4, 4}));
  auto scale = b.constant("scale", TensorData::from_floats({2}, {2.f, 0.5f}));
  auto bias = b.constant("bias", TensorData::from_floats({2}, {1.f, -1.f}));
  auto mean = b.constant("mean", TensorData::from_floats({2}, {0.5f, 2.f}));
  auto var = b.constant("var", TensorData::from_floats({2}, {4.f, 0.25f}));
  auto bn = b.op("BatchNormalization", {c, scale, bias, mean, var}, {{"epsilon", 0.f}}, "bn");
  b.output(b.op("Relu", {bn}, {}, "relu"));
  Graph g = b.build();
  CanonicalRecord rec;
  Graph out = canonicalize(g, only("conv-bn-folding"), &rec);
  ASSERT_EQ(out.node_count(), 2u);  // Conv, Relu
  const Node& conv = out.node(out.find_node("conv"));
  EXPECT_EQ(out.value(conv.outputs[0]).name, g.value(bn).name);  // the BN's output, kept
  // f = scale / sqrt(var): 1 and 1; W' = W * f; B' = (0 - mean) * f + bias.
  EXPECT_EQ(out.value(conv.inputs[1]).data->to_floats(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(out.value(conv.inputs[2]).data->to_floats(), (std::vector<float>{0.5f, -3.f}));
  EXPECT_EQ(out.value(conv.inputs[1]).name, "conv.folded_W");
  EXPECT_EQ(out.find_value("scale"), kNoValue);
  EXPECT_EQ(record_of(rec, "conv-bn-folding").nodes_removed, 1);
  EXPECT_EQ(record_of(rec, "conv-bn-folding").folded_into.at("bn"), "conv");
  EXPECT_NE(rec.summary().find("1 BatchNormalization folded into Conv"), std::string::npos);
}

TEST(ConvBnFolding, AConvOutputReadTwiceStays) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto c = b.op("Conv", {x, b.constant("w", weights({2, 2, 1, 1}))}, {}, "conv");
  std::vector<ValueId> p;
  for (const char* n : {"s", "b", "m", "v"}) p.push_back(b.constant(n, weights({2}, 1)));
  auto bn = b.op("BatchNormalization", {c, p[0], p[1], p[2], p[3]}, {}, "bn");
  b.output(b.op("Add", {bn, c}, {}, "add"));
  Graph out = canonicalize(b.build(), only("conv-bn-folding"), nullptr);
  EXPECT_EQ(out.node_count(), 3u);
}

TEST(DeadNodes, NodesNothingReadsGo) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4});
  auto r = b.op("Relu", {x}, {}, "relu");
  auto unused = b.op("Sigmoid", {x}, {}, "unused");
  b.op("Tanh", {unused}, {}, "unused_too");
  b.output(r);
  Graph g = b.build();
  CanonicalRecord rec;
  Graph c = canonicalize(g, only("dead-nodes"), &rec);
  EXPECT_EQ(g.node_count(), 3u);
  EXPECT_EQ(c.node_count(), 1u);
  EXPECT_EQ(record_of(rec, "dead-nodes").nodes_removed, 2);
}

TEST(DuplicateInitializers, EqualWeightsMerge) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4});
  auto w1 = b.constant("w1", weights({4}));
  auto w2 = b.constant("w2", weights({4}));
  auto w3 = b.constant("w3", weights({4}, 1));  // other values: stays
  auto a = b.op("Add", {x, w1}, {}, "a1");
  auto a2 = b.op("Add", {a, w2}, {}, "a2");
  b.output(b.op("Add", {a2, w3}, {}, "a3"));
  Graph g = b.build();
  CanonicalRecord rec;
  Graph c = canonicalize(g, only("duplicate-initializers"), &rec);
  EXPECT_EQ(c.node_count(), 3u);
  EXPECT_EQ(record_of(rec, "duplicate-initializers").merged, 1);
  EXPECT_EQ(c.find_value("w2"), kNoValue);
  EXPECT_EQ(c.parameter_bytes(), g.parameter_bytes() - 16);
}

TEST(Canonicalize, AllPassesAndTheSummary) {
  CanonicalRecord rec;
  Graph c = canonicalize(conv_with_habits(), {}, &rec);
  EXPECT_EQ(c.node_count(), 2u);  // Conv, Relu
  EXPECT_EQ(rec.nodes_before, 4);
  EXPECT_EQ(rec.nodes_after, 2);
  const std::string s = rec.summary();
  EXPECT_NE(s.find("1 Constant -> initializers"), std::string::npos) << s;
  EXPECT_NE(s.find("removed 1 Identity (1 on weights)"), std::string::npos) << s;
  EXPECT_NE(s.find("4 -> 2 nodes"), std::string::npos) << s;
}

TEST(Canonicalize, DisabledByNameAndOff) {
  CanonicalOptions o;
  o.disabled = {"identity-elimination"};
  CanonicalRecord rec;
  // An Identity of a weight is also a node with constant inputs: folding takes it.
  Graph c = canonicalize(conv_with_habits(), o, &rec);
  EXPECT_EQ(count_op(c, "Identity"), 0);
  EXPECT_EQ(record_of(rec, "constant-folding").removed_ops.at("Identity"), 1);
  o.disabled.insert("constant-folding");
  c = canonicalize(conv_with_habits(), o, &rec);
  EXPECT_EQ(count_op(c, "Identity"), 1);
  EXPECT_NE(rec.summary().find("(disabled: identity-elimination constant-folding)"),
            std::string::npos)
      << rec.summary();
  o.enabled = false;
  EXPECT_EQ(canonicalize(conv_with_habits(), o, nullptr).node_count(), 4u);
  o.disabled = {"no-such-pass"};
  EXPECT_THROW(canonicalize(conv_with_habits(), o, nullptr), Error);
}

}  // namespace
}  // namespace fx::transforms
