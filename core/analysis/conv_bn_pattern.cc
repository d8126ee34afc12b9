// SPDX-License-Identifier: Apache-2.0
// Conv + BatchNormalization (+ activation): BN folds into the conv weights
// (W' = W * gamma / sqrt(var + eps), b' = (b - mean) * gamma / sqrt(var + eps) + beta),
// the activation becomes the conv's epilogue. A conv output also used elsewhere is
// reported as escaping (level 1 then refuses, like ORT's ConvBNFusion guard).
#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

class ConvBnPattern : public FusionPattern {
 public:
  std::string_view name() const override { return "conv_bn_act"; }
  std::vector<std::string_view> target_ops() const override { return {"Conv"}; }
  bool is_rewrite() const override { return true; }
  bool condition(const PatternContext& ctx, NodeId conv) const override {
    return !ctx.node(conv).outputs.empty() && !ctx.graph().value(ctx.output(conv)).is_graph_output;
  }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId conv) const override {
    ValueId y = ctx.output(conv);
    for (NodeId bn : ctx.consumers(y)) {
      if (!ctx.is(bn, "BatchNormalization") || ctx.node(bn).inputs.size() < 5) continue;
      bool params_constant = true;
      for (std::size_t i = 1; i < 5; ++i)
        params_constant &= ctx.is_constant(ctx.node(bn).inputs[i]);
      if (!params_constant) continue;  // training-mode BN: statistics are not constants
      PatternMatch m;
      m.pattern = "conv_bn_act";
      m.nodes = {conv, bn};
      NodeId sink = bn;
      if (auto act = match_activation(ctx, ctx.output(bn))) {
        m.nodes.insert(m.nodes.end(), act->nodes.begin(), act->nodes.end());
        sink = ctx.producer(act->output);
      }
      m.escaping = ctx.escaping_values(m.nodes, {sink});
      return m;
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<FusionPattern> make_conv_bn_pattern() {
  return std::make_unique<ConvBnPattern>();
}

}  // namespace fx
