// SPDX-License-Identifier: Apache-2.0
// A quantized Conv / MatMul / Gemm in QDQ form, as one int8 kernel (ONNX Runtime's
// QDQ selectors: QDQ Conv, QDQ MatMul, QDQ Gemm):
//
//   DequantizeLinear(x) ─┐
//   DequantizeLinear(W) ─┼─ Conv | MatMul | Gemm ─ [Relu] ─ QuantizeLinear
//   [DequantizeLinear(B)]┘
//
// W (and B) are initializers, every scale and zero point is an initializer, x's and
// the output's are per tensor; each DequantizeLinear feeds only the anchor (quantizers
// emit one per consumer, and ORT's selectors require it). The group reads the 8-bit
// activation and weights and writes the 8-bit output: the float tensors between them
// disappear, which the cost model sees from the values' real element sizes.
//
// Between such groups, the ops ONNX Runtime's QDQ transformer also keeps on 8 bits:
//
//   DequantizeLinear(a) ─┐
//   DequantizeLinear(b) ─┴─ Add ─ [Relu] ─ QuantizeLinear     (its QLinearAdd)
//   DequantizeLinear(x) ─ MaxPool ─ QuantizeLinear           (its Q/DQ dropped)
//
// Add's operands and result have one shape (no broadcasting); the MaxPool's
// DequantizeLinear and QuantizeLinear share scale, zero point and type, so that the
// pool on the 8-bit values is exactly the float one (the dequantization is monotonic).
#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

bool initializer(const PatternContext& ctx, ValueId v) {
  return v != kNoValue && ctx.graph().value(v).is_constant() && ctx.producer(v) == kNoNode;
}

int64_t numel(const PatternContext& ctx, ValueId v) {
  const auto& d = ctx.graph().value(v).data;
  return d ? d->numel() : -1;
}

// A (De)QuantizeLinear whose scale and zero point are initializers (per tensor when
// `per_tensor`).
bool constant_params(const PatternContext& ctx, NodeId q, bool per_tensor) {
  ValueId scale = ctx.input(q, 1), zp = ctx.input(q, 2);
  if (!initializer(ctx, scale) || (zp != kNoValue && !initializer(ctx, zp))) return false;
  return !per_tensor || numel(ctx, scale) == 1;
}

// The DequantizeLinear producing input i of `anchor`, fed by an initializer when
// `constant`, and read by nothing else.
NodeId dequantize_of(const PatternContext& ctx, NodeId anchor, std::size_t i, bool constant) {
  ValueId v = ctx.input(anchor, i);
  NodeId dq = ctx.producer(v);
  if (!ctx.is(dq, "DequantizeLinear") || ctx.sole_consumer(v) != anchor) return kNoNode;
  if (initializer(ctx, ctx.input(dq, 0)) != constant) return kNoNode;
  if (!constant_params(ctx, dq, !constant)) return kNoNode;
  return dq;
}

// The value's constant element (scale or zero point), nullopt when absent or not one.
std::optional<double> scalar(const PatternContext& ctx, ValueId v) {
  if (v == kNoValue || !ctx.graph().value(v).data) return std::nullopt;
  const auto& d = *ctx.graph().value(v).data;
  if (d.numel() != 1) return std::nullopt;
  return d.dtype() == DType::Float32 ? double(d.to_floats()[0]) : double(d.to_int64s()[0]);
}

// The same per-tensor quantization (scale, zero point and its type) on both nodes.
bool same_params(const PatternContext& ctx, NodeId a, NodeId b) {
  const auto za = ctx.input(a, 2), zb = ctx.input(b, 2);
  const DType ta = za != kNoValue ? ctx.graph().value(za).dtype : DType::UInt8;
  const DType tb = zb != kNoValue ? ctx.graph().value(zb).dtype : DType::UInt8;
  auto zp = [&](ValueId z) { return z == kNoValue ? std::optional<double>(0) : scalar(ctx, z); };
  return ta == tb && scalar(ctx, ctx.input(a, 1)) == scalar(ctx, ctx.input(b, 1)) && zp(za) &&
         zp(za) == zp(zb);
}

// The QuantizeLinear reading `y` (through a Relu that alone reads it when `relu`),
// appended to m.nodes; false when there is none.
bool quantized_result(const PatternContext& ctx, ValueId y, bool relu, PatternMatch& m) {
  NodeId next = ctx.sole_consumer(y);
  if (relu && ctx.is(next, "Relu")) {
    m.nodes.push_back(next);
    next = ctx.sole_consumer(ctx.output(next));
  }
  if (!ctx.is(next, "QuantizeLinear") || !constant_params(ctx, next, true)) return false;
  m.nodes.push_back(next);
  return true;
}

// Add and MaxPool between 8-bit tensors (the second diagram above).
class QdqBetweenPattern : public FusionPattern {
 public:
  std::string_view name() const override { return "qdq_between_int8"; }
  std::vector<std::string_view> target_ops() const override { return {"Add", "MaxPool"}; }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId anchor) const override {
    const Node& n = ctx.node(anchor);
    PatternMatch m;
    NodeId dq_x = dequantize_of(ctx, anchor, 0, false);
    if (dq_x == kNoNode) return std::nullopt;
    const Shape& out = ctx.graph().value(ctx.output(anchor)).shape;
    if (n.op_type == "Add") {
      NodeId dq_b = dequantize_of(ctx, anchor, 1, false);
      if (dq_b == kNoNode || !out.is_static() ||
          ctx.graph().value(ctx.input(anchor, 0)).shape != out ||
          ctx.graph().value(ctx.input(anchor, 1)).shape != out)
        return std::nullopt;
      m.nodes = {dq_x, dq_b, anchor};
      if (!quantized_result(ctx, ctx.output(anchor), true, m)) return std::nullopt;
      m.pattern = "qdq_add_int8";
    } else {
      if (n.outputs.size() > 1 && n.outputs[1] != kNoValue) return std::nullopt;  // Indices
      m.nodes = {dq_x, anchor};
      if (!quantized_result(ctx, ctx.output(anchor), false, m) ||
          !same_params(ctx, dq_x, m.nodes.back()))
        return std::nullopt;
      m.pattern = "qdq_maxpool_int8";
    }
    m.escaping = ctx.escaping_values(m.nodes, {m.nodes.back()});
    return m;
  }
};

class QdqPattern : public FusionPattern {
 public:
  std::string_view name() const override { return "qdq_int8"; }
  std::vector<std::string_view> target_ops() const override { return {"Conv", "MatMul", "Gemm"}; }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId anchor) const override {
    const Node& n = ctx.node(anchor);
    if (n.op_type == "Gemm" && n.attrs.get_int("transA", 0) != 0) return std::nullopt;
    NodeId dq_x = dequantize_of(ctx, anchor, 0, false);
    NodeId dq_w = dequantize_of(ctx, anchor, 1, true);
    if (dq_x == kNoNode || dq_w == kNoNode) return std::nullopt;
    if (n.op_type == "MatMul" && ctx.graph().value(ctx.input(dq_w, 0)).shape.rank() != 2)
      return std::nullopt;
    PatternMatch m;
    m.nodes = {dq_x, dq_w, anchor};
    ValueId bias = n.op_type == "MatMul" ? kNoValue : ctx.input(anchor, 2);
    if (bias != kNoValue && !initializer(ctx, bias)) {
      NodeId dq_b = dequantize_of(ctx, anchor, 2, true);
      if (dq_b == kNoNode) return std::nullopt;
      m.nodes.push_back(dq_b);
    }
    ValueId y = ctx.output(anchor);
    NodeId next = ctx.sole_consumer(y);
    if (ctx.is(next, "Relu")) {
      m.nodes.push_back(next);
      y = ctx.output(next);
      next = ctx.sole_consumer(y);
    }
    if (!ctx.is(next, "QuantizeLinear") || !constant_params(ctx, next, true)) return std::nullopt;
    m.nodes.push_back(next);
    m.pattern = n.op_type == "Conv"   ? "qdq_conv_int8"
                : n.op_type == "Gemm" ? "qdq_gemm_int8"
                                      : "qdq_matmul_int8";
    m.escaping = ctx.escaping_values(m.nodes, {next});
    return m;
  }
};

}  // namespace

std::unique_ptr<FusionPattern> make_qdq_pattern() {
  return std::make_unique<QdqPattern>();
}

std::unique_ptr<FusionPattern> make_qdq_between_pattern() {
  return std::make_unique<QdqBetweenPattern>();
}

}  // namespace fx
