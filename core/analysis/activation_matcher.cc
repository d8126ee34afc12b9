// SPDX-License-Identifier: Apache-2.0
// Activation tails shared by the anchor patterns: single ops, SiLU/Swish built from
// Sigmoid and Mul, HardSwish built from HardSigmoid and Mul, and decomposed GELU.
#include <algorithm>

#include "analysis/fusion_pattern.h"

namespace fx {
namespace {

bool near(std::optional<float> v, float want, float tol = 1e-3f) {
  return v && std::abs(*v - want) <= tol * std::max(1.0f, std::abs(want));
}

ValueId other_input(const Node& n, ValueId v) {
  if (n.inputs.size() != 2) return kNoValue;
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return kNoValue;
}

ValueId out0(const PatternContext& ctx, NodeId n) {
  return ctx.output(n);
}

// The "x * (0.5 * (1 + f))" tail of both GELU forms, given the Add(1) node `one`.
std::optional<ActivationMatch> gelu_tail(const PatternContext& ctx, ValueId x, NodeId one,
                                         std::vector<NodeId> nodes, const char* name) {
  NodeId m1 = ctx.sole_consumer(out0(ctx, one));
  if (!ctx.is(m1, "Mul")) return std::nullopt;
  ValueId other = other_input(ctx.node(m1), out0(ctx, one));
  nodes.push_back(one);
  nodes.push_back(m1);
  NodeId half = ctx.producer(other);
  if (other == x || near(ctx.scalar_constant(other), 0.5f)) {
    // (A) m2 = (x * t) * 0.5   or   (C) m2 = x * (t * 0.5)
    NodeId m2 = ctx.sole_consumer(out0(ctx, m1));
    if (!ctx.is(m2, "Mul")) return std::nullopt;
    ValueId rest = other_input(ctx.node(m2), out0(ctx, m1));
    bool ok = other == x ? near(ctx.scalar_constant(rest), 0.5f) : rest == x;
    if (!ok) return std::nullopt;
    nodes.push_back(m2);
    return ActivationMatch{name, nodes, out0(ctx, m2)};
  }
  // (B) m1 = (x * 0.5) * t
  if (ctx.is(half, "Mul") && other_input(ctx.node(half), x) != kNoValue &&
      near(ctx.scalar_constant(other_input(ctx.node(half), x)), 0.5f)) {
    nodes.push_back(half);
    return ActivationMatch{name, nodes, out0(ctx, m1)};
  }
  return std::nullopt;
}

}  // namespace

std::optional<ActivationMatch> match_decomposed_gelu(const PatternContext& ctx, ValueId x) {
  for (NodeId c : ctx.consumers(x)) {
    // erf form: Erf(x / sqrt(2)) or Erf(x * (1/sqrt(2)))
    if ((ctx.is(c, "Div") && ctx.input(c, 0) == x &&
         near(ctx.scalar_constant(ctx.input(c, 1)), 1.41421f)) ||
        (ctx.is(c, "Mul") && near(ctx.scalar_constant(other_input(ctx.node(c), x)), 0.70711f))) {
      NodeId erf = ctx.sole_consumer(out0(ctx, c));
      NodeId one = ctx.is(erf, "Erf") ? ctx.sole_consumer(out0(ctx, erf)) : kNoNode;
      if (ctx.is(one, "Add") &&
          near(ctx.scalar_constant(other_input(ctx.node(one), out0(ctx, erf))), 1.f))
        if (auto m = gelu_tail(ctx, x, one, {c, erf}, "gelu_erf")) return m;
    }
    // tanh form: Tanh(0.79788 * (x + 0.044715 * x^3))
    if (ctx.is(c, "Pow") && near(ctx.scalar_constant(ctx.input(c, 1)), 3.f)) {
      NodeId k = ctx.sole_consumer(out0(ctx, c));
      if (!ctx.is(k, "Mul") ||
          !near(ctx.scalar_constant(other_input(ctx.node(k), out0(ctx, c))), 0.044715f))
        continue;
      NodeId add = ctx.sole_consumer(out0(ctx, k));
      if (!ctx.is(add, "Add") || other_input(ctx.node(add), out0(ctx, k)) != x) continue;
      NodeId s = ctx.sole_consumer(out0(ctx, add));
      if (!ctx.is(s, "Mul") ||
          !near(ctx.scalar_constant(other_input(ctx.node(s), out0(ctx, add))), 0.79788f))
        continue;
      NodeId t = ctx.sole_consumer(out0(ctx, s));
      NodeId one = ctx.is(t, "Tanh") ? ctx.sole_consumer(out0(ctx, t)) : kNoNode;
      if (ctx.is(one, "Add") &&
          near(ctx.scalar_constant(other_input(ctx.node(one), out0(ctx, t))), 1.f))
        if (auto m = gelu_tail(ctx, x, one, {c, k, add, s, t}, "gelu_tanh")) return m;
    }
  }
  return std::nullopt;
}

std::optional<ActivationMatch> match_activation(const PatternContext& ctx, ValueId v) {
  static const std::vector<std::pair<std::string_view, const char*>> single = {
      {"Relu", "relu"},
      {"LeakyRelu", "leaky_relu"},
      {"Clip", "clip"},
      {"Sigmoid", "sigmoid"},
      {"Tanh", "tanh"},
      {"HardSwish", "hard_swish"},
      {"HardSigmoid", "hard_sigmoid"},
      {"Elu", "elu"},
      {"Selu", "selu"},
      {"Gelu", "gelu"},
      {"Softplus", "softplus"},
      {"Mish", "mish"},
      {"Celu", "celu"},
      {"PRelu", "prelu"}};
  auto users = ctx.consumers(v);
  if (ctx.graph().value(v).is_graph_output) return std::nullopt;
  if (users.size() == 1) {
    for (const auto& [op, name] : single)
      if (ctx.is(users[0], op)) return ActivationMatch{name, {users[0]}, out0(ctx, users[0])};
  }
  if (users.size() == 2) {
    for (int i = 0; i < 2; ++i) {
      NodeId gate = users[i], mul = users[1 - i];
      if (!ctx.is(mul, "Mul")) continue;
      // SiLU: x * Sigmoid(x); HardSwish: x * HardSigmoid(x); Swish: x * Sigmoid(beta * x)
      std::vector<NodeId> nodes{gate};
      NodeId sig = gate;
      if (ctx.is(gate, "Mul") && ctx.scalar_constant(other_input(ctx.node(gate), v))) {
        sig = ctx.sole_consumer(out0(ctx, gate));
        nodes.push_back(sig);
      }
      bool sigmoid = ctx.is(sig, "Sigmoid"), hard = ctx.is(sig, "HardSigmoid");
      if (!(sigmoid || hard) || ctx.sole_consumer(out0(ctx, sig)) != mul) continue;
      if (other_input(ctx.node(mul), out0(ctx, sig)) != v) continue;
      nodes.push_back(mul);
      const char* name = hard ? "hard_swish" : nodes.size() == 3 ? "swish" : "silu";
      return ActivationMatch{name, nodes, out0(ctx, mul)};
    }
  }
  return match_decomposed_gelu(ctx, v);
}

}  // namespace fx
