// SPDX-License-Identifier: Apache-2.0
// Custom activations after an anchor: the largest cluster of elementwise/broadcast ops
// fed only by the anchor's output (and constants), e.g. Swish(x) = x * Sigmoid(beta * x)
// or x * Tanh(Softplus(x)) written out, which fixed pattern lists miss. It runs last,
// on anchors no other pattern claimed.
#include <algorithm>

#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

constexpr std::size_t kMaxEpilogue = 16;

class AnchorEpiloguePattern : public FusionPattern {
 public:
  std::string_view name() const override { return "anchor_epilogue"; }
  std::vector<std::string_view> target_ops() const override {
    return {"Conv", "ConvTranspose", "MatMul", "Gemm"};
  }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId anchor) const override {
    std::vector<NodeId> nodes{anchor};
    auto inside = [&](NodeId n) { return std::find(nodes.begin(), nodes.end(), n) != nodes.end(); };
    // Grow in waves: a consumer joins when every non-constant input comes from inside.
    for (bool grew = true; grew && nodes.size() <= kMaxEpilogue;) {
      grew = false;
      for (std::size_t i = 0; i < nodes.size() && nodes.size() <= kMaxEpilogue; ++i) {
        for (ValueId out : ctx.node(nodes[i]).outputs) {
          for (NodeId c : ctx.consumers(out)) {
            if (inside(c) || ctx.claimed(c) || ctx.kind(c) > OpKind::Broadcast) continue;
            if (!ctx.node(c).domain.empty()) continue;
            bool fed = true;
            for (ValueId in : ctx.node(c).inputs)
              fed &= in == kNoValue || ctx.is_constant(in) || inside(ctx.producer(in));
            if (!fed) continue;
            nodes.push_back(c);
            grew = true;
          }
        }
      }
    }
    if (nodes.size() < 2) return std::nullopt;
    // The result is the last node added whose output leaves the cluster.
    NodeId sink = nodes.back();
    PatternMatch m;
    m.pattern = "anchor_epilogue";
    m.nodes = nodes;
    m.escaping = ctx.escaping_values(nodes, {sink});
    return m;
  }
};

}  // namespace

std::unique_ptr<FusionPattern> make_anchor_epilogue_pattern() {
  return std::make_unique<AnchorEpiloguePattern>();
}

}  // namespace fx
