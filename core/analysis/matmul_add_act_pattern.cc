// SPDX-License-Identifier: Apache-2.0
// MatMul/Gemm + bias Add (+ activation): a Linear layer with its epilogue (ORT's
// MatMulAdd -> Gemm, GemmActivation, BiasGelu; the seeds' Linear+Activation).
#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

class MatMulAddActPattern : public FusionPattern {
 public:
  std::string_view name() const override { return "matmul_add_act"; }
  std::vector<std::string_view> target_ops() const override { return {"MatMul", "Gemm"}; }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId mm) const override {
    PatternMatch m;
    m.pattern = "matmul_add_act";
    m.nodes = {mm};
    ValueId y = ctx.output(mm);
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

std::unique_ptr<FusionPattern> make_matmul_add_act_pattern() {
  return std::make_unique<MatMulAddActPattern>();
}

}  // namespace fx
