// SPDX-License-Identifier: Apache-2.0
// Conv + bias Add (+ activation), and Conv + activation: the bias and the activation
// become the conv's epilogue (ORT's ConvAdd/ConvActivation, CANN's Conv+BiasAdd+LeakyReLU).
#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

class ConvBiasActPattern : public FusionPattern {
 public:
  std::string_view name() const override { return "conv_bias_act"; }
  std::vector<std::string_view> target_ops() const override { return {"Conv", "ConvTranspose"}; }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId conv) const override {
    PatternMatch m;
    m.pattern = "conv_bias_act";
    m.nodes = {conv};
    ValueId y = ctx.output(conv);
    NodeId add = ctx.sole_consumer(y);
    if (ctx.is(add, "Add") && ctx.non_constant_input(add) == y) {
      m.nodes.push_back(add);
      y = ctx.output(add);
    }
    if (auto act = match_activation(ctx, y)) {
      m.nodes.insert(m.nodes.end(), act->nodes.begin(), act->nodes.end());
      y = act->output;
    }
    if (m.nodes.size() < 2) return std::nullopt;
    m.escaping = ctx.escaping_values(m.nodes, {ctx.producer(y)});
    return m;
  }
};

}  // namespace

std::unique_ptr<FusionPattern> make_conv_bias_act_pattern() {
  return std::make_unique<ConvBiasActPattern>();
}

}  // namespace fx
