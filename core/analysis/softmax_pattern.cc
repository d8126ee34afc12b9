// SPDX-License-Identifier: Apache-2.0
// Scale + mask + Softmax, the attention-score epilogue (ORT's BiasSoftmax; the
// reduction + elementwise UB fusion of the seeds): Softmax(x * s + mask) or
// Softmax(x / s + mask), with either the scale or the mask optional but not both. The
// mask may also be boolean: Softmax(Where(mask, x * s, fill)).
#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

// Where(mask, scores, fill) or Where(mask, fill, scores) with a constant fill: the
// boolean form of the mask (GPT-2's causal mask, -1e4 or -inf where masked).
bool is_where_mask(const PatternContext& ctx, NodeId n) {
  if (!ctx.is(n, "Where")) return false;
  const Node& w = ctx.node(n);
  if (w.inputs.size() != 3) return false;
  const bool fill1 = ctx.is_constant(w.inputs[1]), fill2 = ctx.is_constant(w.inputs[2]);
  return fill1 != fill2;
}

class SoftmaxPattern : public FusionPattern {
 public:
  std::string_view name() const override { return "scale_mask_softmax"; }
  std::vector<std::string_view> target_ops() const override { return {"Softmax"}; }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId sm) const override {
    PatternMatch m;
    m.pattern = "scale_mask_softmax";
    m.nodes = {sm};
    ValueId in = ctx.input(sm, 0);
    NodeId p = ctx.producer(in);
    if ((ctx.is(p, "Add") || is_where_mask(ctx, p)) && ctx.sole_consumer(in) == sm) {
      m.nodes.push_back(p);  // the mask (constant or computed)
      const Node& add = ctx.node(p);
      // The scaled scores are the Add input produced by a Mul/Div with a constant.
      for (ValueId v : add.inputs) {
        NodeId s = ctx.producer(v);
        if ((ctx.is(s, "Mul") || ctx.is(s, "Div")) && ctx.non_constant_input(s) != kNoValue &&
            ctx.sole_consumer(v) == p) {
          m.nodes.push_back(s);
          break;
        }
      }
    } else if ((ctx.is(p, "Mul") || ctx.is(p, "Div")) && ctx.non_constant_input(p) != kNoValue &&
               ctx.sole_consumer(in) == sm) {
      m.nodes.push_back(p);
    }
    if (m.nodes.size() < 2) return std::nullopt;
    m.escaping = ctx.escaping_values(m.nodes, {sm});
    return m;
  }
};

}  // namespace

std::unique_ptr<FusionPattern> make_softmax_pattern() {
  return std::make_unique<SoftmaxPattern>();
}

}  // namespace fx
