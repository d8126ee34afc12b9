// Scale + mask + Softmax, the attention-score epilogue (ORT's BiasSoftmax; the
// reduction + elementwise UB fusion of the seeds): Softmax(x * s + mask) or
// Softmax(x / s + mask), with either the scale or the mask optional but not both.
#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

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
    if (ctx.is(p, "Add") && ctx.sole_consumer(in) == sm) {
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
