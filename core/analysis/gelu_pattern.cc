// SPDX-License-Identifier: Apache-2.0
// GELU written out by exporters (erf form: Div, Erf, Add, Mul, Mul; tanh form: Pow, Mul,
// Add, Mul, Tanh, Add, Mul, Mul) recognized as one elementwise kernel (ORT's Gelu and
// FastGelu fusions). Anchored at the Erf/Tanh; x is found by walking back.
#include <algorithm>

#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

class GeluPattern : public FusionPattern {
 public:
  std::string_view name() const override { return "gelu"; }
  std::vector<std::string_view> target_ops() const override { return {"Erf", "Tanh"}; }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId t) const override {
    // Erf(x / sqrt2): x is the scaling node's non-constant input. Tanh(c * (x + k x^3)):
    // x is the Add's input that is not the cubic term.
    NodeId scale = ctx.producer(ctx.input(t, 0));
    if (scale == kNoNode) return std::nullopt;
    ValueId x = ctx.non_constant_input(scale);
    if (ctx.is(t, "Tanh")) {
      NodeId add = ctx.producer(x);
      if (!ctx.is(add, "Add")) return std::nullopt;
      NodeId p0 = ctx.producer(ctx.input(add, 0));
      x = ctx.is(p0, "Mul") ? ctx.input(add, 1) : ctx.input(add, 0);
    }
    if (x == kNoValue) return std::nullopt;
    auto act = match_decomposed_gelu(ctx, x);
    if (!act || std::find(act->nodes.begin(), act->nodes.end(), t) == act->nodes.end())
      return std::nullopt;
    PatternMatch m;
    m.pattern = act->name;
    m.nodes = act->nodes;
    m.escaping = ctx.escaping_values(m.nodes, {ctx.producer(act->output)});
    return m;
  }
};

}  // namespace

std::unique_ptr<FusionPattern> make_gelu_pattern() {
  return std::make_unique<GeluPattern>();
}

}  // namespace fx
