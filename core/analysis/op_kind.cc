// SPDX-License-Identifier: Apache-2.0
#include "analysis/op_kind.h"

#include <string>
#include <unordered_map>

namespace fx {
namespace {

struct Entry {
  OpKind kind;
  bool control_flow = false;
  bool no_kernel = false;
  bool binary = false;  // elementwise with several inputs that may broadcast
};

using Table = std::unordered_map<std::string_view, Entry>;

void add(Table& t, OpKind k, std::initializer_list<std::string_view> ops, bool binary = false) {
  for (auto op : ops) t[op] = Entry{k, false, false, binary};
}

// Every op of the default ONNX domain (opset 17) has an entry; the coverage test checks
// this against libonnx's schema registry.
const Table& table() {
  static const Table t = [] {
    Table t;
    add(t, OpKind::Elementwise,
        {"Abs",
         "Acos",
         "Acosh",
         "Asin",
         "Asinh",
         "Atan",
         "Atanh",
         "Cast",
         "Ceil",
         "Celu",
         "Cos",
         "Cosh",
         "Dropout",
         "Elu",
         "Erf",
         "Exp",
         "Floor",
         "Gelu",
         "HardSigmoid",
         "HardSwish",
         "Identity",
         "IsInf",
         "IsNaN",
         "LeakyRelu",
         "Log",
         "Mish",
         "Neg",
         "Not",
         "Reciprocal",
         "Relu",
         "Round",
         "Selu",
         "Shrink",
         "Sigmoid",
         "Sign",
         "Sin",
         "Sinh",
         "Softplus",
         "Softsign",
         "Sqrt",
         "Tan",
         "Tanh",
         "ThresholdedRelu"});
    add(t, OpKind::Broadcast,
        {"Add",
         "And",
         "BitShift",
         "Clip",
         "Div",
         "Equal",
         "Greater",
         "GreaterOrEqual",
         "Less",
         "LessOrEqual",
         "Max",
         "Mean",
         "Min",
         "Mod",
         "Mul",
         "Or",
         "Pow",
         "PRelu",
         "Sub",
         "Sum",
         "Where",
         "Xor",
         "CastLike",
         "QuantizeLinear",
         "DequantizeLinear"},
        /*binary=*/true);
    // Per-channel affine at inference: broadcast, not a reduction.
    add(t, OpKind::Broadcast, {"BatchNormalization"});
    add(t, OpKind::Injective,
        {"Concat",       "DepthToSpace",    "Expand",          "Flatten",
         "Gather",       "GatherElements",  "GatherND",        "OneHot",
         "Pad",          "Reshape",         "Resize",          "ReverseSequence",
         "Scatter",      "ScatterElements", "ScatterND",       "Slice",
         "SpaceToDepth", "Split",           "Squeeze",         "Tile",
         "Transpose",    "Trilu",           "Unsqueeze",       "Upsample",
         "EyeLike",      "Range",           "ConstantOfShape", "Shape",
         "Size",         "GridSample",      "Col2Im",          "CenterCropPad"});
    add(t, OpKind::Reduction,
        {"ArgMax",
         "ArgMin",
         "CumSum",
         "GlobalAveragePool",
         "GlobalLpPool",
         "GlobalMaxPool",
         "Hardmax",
         "InstanceNormalization",
         "LayerNormalization",
         "LogSoftmax",
         "LpNormalization",
         "LRN",
         "MeanVarianceNormalization",
         "ReduceL1",
         "ReduceL2",
         "ReduceLogSum",
         "ReduceLogSumExp",
         "ReduceMax",
         "ReduceMean",
         "ReduceMin",
         "ReduceProd",
         "ReduceSum",
         "ReduceSumSquare",
         "Softmax",
         "GroupNormalization",
         "NegativeLogLikelihoodLoss",
         "SoftmaxCrossEntropyLoss"});
    // Out-elementwise-fusable compute (TVM's kOutEWiseFusable), pools included as TVM does.
    add(t, OpKind::Anchor,
        {"Conv", "ConvTranspose", "MatMul", "Gemm", "ConvInteger", "MatMulInteger", "QLinearConv",
         "QLinearMatMul", "Einsum", "AveragePool", "MaxPool", "LpPool", "MaxRoiPool", "RoiAlign",
         "MaxUnpool", "DFT", "STFT", "Det"});
    // Data-dependent output shapes, randomness, recurrences, sequences, strings.
    add(t, OpKind::Opaque,
        {"Compress",
         "NonZero",
         "NonMaxSuppression",
         "TopK",
         "Unique",
         "GRU",
         "LSTM",
         "RNN",
         "Bernoulli",
         "Multinomial",
         "RandomNormal",
         "RandomNormalLike",
         "RandomUniform",
         "RandomUniformLike",
         "ConcatFromSequence",
         "SequenceAt",
         "SequenceConstruct",
         "SequenceEmpty",
         "SequenceErase",
         "SequenceInsert",
         "SequenceLength",
         "SplitToSequence",
         "Optional",
         "OptionalGetElement",
         "OptionalHasElement",
         "StringNormalizer",
         "TfIdfVectorizer",
         "DynamicQuantizeLinear",
         "BlackmanWindow",
         "HammingWindow",
         "HannWindow",
         "MelWeightMatrix"});
    for (auto op : {"If", "Loop", "Scan", "SequenceMap"})
      t[op] = Entry{OpKind::Opaque, /*control_flow=*/true};
    t["Constant"] = Entry{OpKind::Injective, false, /*no_kernel=*/true};
    // An Identity the canonical form keeps (its output is a graph output) is an alias
    // of its input in any runtime that plans memory: no launch.
    t["Identity"] = Entry{OpKind::Injective, false, /*no_kernel=*/true};
    return t;
  }();
  return t;
}

}  // namespace

OpClass classify_op(std::string_view domain, std::string_view op_type) {
  OpClass c;
  if (!domain.empty() && domain != "ai.onnx") return c;  // custom domain: opaque
  auto it = table().find(op_type);
  if (it == table().end()) return c;
  c.kind = it->second.kind;
  c.control_flow = it->second.control_flow;
  c.no_kernel = it->second.no_kernel;
  c.known = true;
  return c;
}

OpClass classify_node(const Graph& g, const Node& n) {
  OpClass c = classify_op(n.domain, n.op_type);
  if (c.kind != OpKind::Broadcast || n.outputs.empty() || n.op_type == "BatchNormalization")
    return c;
  auto it = table().find(n.op_type);
  if (it == table().end() || !it->second.binary) return c;
  // A binary op whose non-constant inputs all have the output's static shape does not
  // broadcast: it is plain elementwise. Constants (biases, scales) may still broadcast.
  const Shape& out = g.value(n.outputs[0]).shape;
  if (!out.is_static()) return c;
  for (ValueId in : n.inputs) {
    if (in == kNoValue) continue;
    const Value& v = g.value(in);
    if (v.is_constant()) {
      if (!(v.shape == out) && v.shape.numel().value_or(0) != 1) return c;
      continue;
    }
    if (!(v.shape == out)) return c;
  }
  c.kind = OpKind::Elementwise;
  return c;
}

std::string_view op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::Elementwise: return "elementwise";
    case OpKind::Broadcast: return "broadcast";
    case OpKind::Injective: return "injective";
    case OpKind::Reduction: return "reduction";
    case OpKind::Anchor: return "anchor";
    case OpKind::Opaque: return "opaque";
  }
  return "opaque";
}

}  // namespace fx
