// SPDX-License-Identifier: Apache-2.0
// LayerNorm, as the LayerNormalization op or decomposed the way exporters write it:
//   m = ReduceMean(x); d = x - m; v = ReduceMean(Pow(d, 2)); y = d / Sqrt(v + eps)
//   (then * gamma + beta)
// recognized as one op. A residual Add feeding only the LayerNorm joins it
// (SkipLayerNorm); a following MatMul that reads the normalized rows as its left operand
// (normalized axis = the contraction axis) is joined when legal (LayerNorm + Linear).
#include <algorithm>

#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

ValueId out0(const PatternContext& ctx, NodeId n) {
  return ctx.output(n);
}

bool is_last_axis(int64_t axis, std::size_t rank) {
  return axis == -1 || (rank > 0 && axis == static_cast<int64_t>(rank) - 1);
}

bool reduces_last_axis(const PatternContext& ctx, NodeId r) {
  const Node& n = ctx.node(r);
  std::vector<int64_t> axes = n.attrs.get_ints("axes");
  if (axes.empty() && n.inputs.size() > 1 && n.inputs[1] != kNoValue &&
      ctx.graph().value(n.inputs[1]).is_constant())
    axes = ctx.graph().value(n.inputs[1]).data->to_int64s();
  if (n.inputs.empty() || n.inputs[0] == kNoValue) return false;
  std::size_t rank = ctx.graph().value(n.inputs[0]).shape.rank();
  return axes.size() == 1 && is_last_axis(axes[0], rank);
}

class LayerNormPattern : public FusionPattern {
 public:
  std::string_view name() const override { return "layer_norm"; }
  std::vector<std::string_view> target_ops() const override {
    return {"ReduceMean", "LayerNormalization"};
  }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId target) const override {
    PatternMatch m;
    m.pattern = "layer_norm";
    ValueId x = ctx.input(target, 0);
    if (x == kNoValue || ctx.output(target) == kNoValue) return std::nullopt;
    ValueId y;
    bool last_axis;
    if (ctx.is(target, "LayerNormalization")) {
      m.nodes = {target};
      y = out0(ctx, target);
      last_axis = is_last_axis(ctx.node(target).attrs.get_int("axis", -1),
                               ctx.graph().value(x).shape.rank());
    } else {
      auto core = decomposed(ctx, target, x);
      if (!core) return std::nullopt;
      m.nodes = *core;
      y = out0(ctx, m.nodes.back());
      last_axis = reduces_last_axis(ctx, target);
    }
    // Residual Add whose sum feeds only this LayerNorm.
    NodeId res = ctx.producer(x);
    if (ctx.is(res, "Add") && !ctx.is_constant(ctx.input(res, 0)) &&
        !ctx.is_constant(ctx.input(res, 1)) && !ctx.graph().value(x).is_graph_output) {
      auto users = ctx.consumers(x);
      if (std::all_of(users.begin(), users.end(), [&](NodeId u) {
            return std::find(m.nodes.begin(), m.nodes.end(), u) != m.nodes.end();
          })) {
        m.nodes.push_back(res);
        m.pattern = "add_layer_norm";
      }
    }
    NodeId sink = ctx.producer(y);
    NodeId next = ctx.sole_consumer(y);
    if (last_axis && (ctx.is(next, "MatMul") || ctx.is(next, "Gemm")) && ctx.input(next, 0) == y &&
        ctx.node(next).attrs.get_int("transA", 0) == 0)
      m.join = next;
    m.escaping = ctx.escaping_values(m.nodes, {sink});
    return m;
  }

 private:
  // ReduceMean r1 -> Sub -> Pow(2) | Mul(d,d) -> ReduceMean -> Add(eps) -> Sqrt -> Div
  // (-> Mul(gamma) -> Add(beta)); returns the nodes, the last one producing the result.
  static std::optional<std::vector<NodeId>> decomposed(const PatternContext& ctx, NodeId r1,
                                                       ValueId x) {
    NodeId sub = ctx.sole_consumer(out0(ctx, r1));
    if (!ctx.is(sub, "Sub") || ctx.input(sub, 0) != x) return std::nullopt;
    ValueId d = out0(ctx, sub);
    NodeId sq = kNoNode, div = kNoNode;
    for (NodeId u : ctx.consumers(d)) {
      if (ctx.is(u, "Pow") && ctx.scalar_constant(ctx.input(u, 1)).value_or(0) == 2.f)
        sq = u;
      else if (ctx.is(u, "Mul") && ctx.input(u, 0) == d && ctx.input(u, 1) == d)
        sq = u;
      else if (ctx.is(u, "Div") && ctx.input(u, 0) == d)
        div = u;
    }
    if (sq == kNoNode || div == kNoNode) return std::nullopt;
    NodeId r2 = ctx.sole_consumer(out0(ctx, sq));
    if (!ctx.is(r2, "ReduceMean")) return std::nullopt;
    NodeId eps = ctx.sole_consumer(out0(ctx, r2));
    if (!ctx.is(eps, "Add") || ctx.non_constant_input(eps) != out0(ctx, r2)) return std::nullopt;
    NodeId sqrt = ctx.sole_consumer(out0(ctx, eps));
    if (!ctx.is(sqrt, "Sqrt") || ctx.sole_consumer(out0(ctx, sqrt)) != div) return std::nullopt;
    std::vector<NodeId> nodes{r1, sub, sq, r2, eps, sqrt, div};
    NodeId scale = ctx.sole_consumer(out0(ctx, div));
    if (ctx.is(scale, "Mul") && ctx.non_constant_input(scale) == out0(ctx, div)) {
      nodes.push_back(scale);
      NodeId shift = ctx.sole_consumer(out0(ctx, scale));
      if (ctx.is(shift, "Add") && ctx.non_constant_input(shift) == out0(ctx, scale))
        nodes.push_back(shift);
    }
    return nodes;
  }
};

}  // namespace

std::unique_ptr<FusionPattern> make_layer_norm_pattern() {
  return std::make_unique<LayerNormPattern>();
}

}  // namespace fx
