// SPDX-License-Identifier: Apache-2.0
#pragma once
// Seed fusion patterns (level 1), ONNX-Runtime style: each pattern names the op types it
// starts from, has a cheap condition on that node, and a match that returns the member
// nodes. Patterns do not check legality or benefit; the finder does (fusion_finder.h).
//
// The list is explicit and ordered (seed_patterns()); earlier patterns claim nodes first.
// One file per family: conv_bn_pattern.cc, pointwise_depthwise_pattern.cc,
// conv_bias_act_pattern.cc, matmul_add_act_pattern.cc, layer_norm_pattern.cc, gelu_pattern.cc,
// softmax_pattern.cc, anchor_epilogue_pattern.cc, qdq_pattern.cc; activation_matcher.cc holds the
// shared activation tails.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/op_kind.h"
#include "ir/graph.h"

namespace fx {

struct PatternMatch {
  std::string pattern;        // e.g. "conv_bn_act"
  std::vector<NodeId> nodes;  // members, any order
  // Level 1's guard: the values inside the match used outside it. A non-empty list
  // blocks the match at level 1 (reason OutsideConsumer).
  std::vector<ValueId> escaping;
  // When set, the match may join the existing group of this node (LayerNorm -> MatMul).
  NodeId join = kNoNode;
};

// Read-only helpers patterns share.
class PatternContext {
 public:
  PatternContext(const Graph& g, const std::vector<OpClass>& classes,
                 const std::vector<char>& claimed)
      : g_(g), classes_(classes), claimed_(claimed) {}
  const Graph& graph() const { return g_; }
  const Node& node(NodeId id) const { return g_.node(id); }
  OpKind kind(NodeId id) const { return classes_[static_cast<std::size_t>(id)].kind; }
  bool claimed(NodeId id) const { return claimed_[static_cast<std::size_t>(id)] != 0; }
  bool is(NodeId id, std::string_view op) const;  // default domain op type check
  // Input i / output 0 of a node, kNoValue when absent (malformed models must not crash).
  ValueId input(NodeId id, std::size_t i) const;
  ValueId output(NodeId id) const;
  NodeId producer(ValueId v) const;  // kNoNode for inputs/constants
  // The only distinct consumer of v, or kNoNode (also kNoNode when v is a graph output).
  NodeId sole_consumer(ValueId v) const;
  // Distinct consumers of v.
  std::vector<NodeId> consumers(ValueId v) const;
  bool is_constant(ValueId v) const;
  // A scalar (or one-element) constant's value.
  std::optional<float> scalar_constant(ValueId v) const;
  // For a binary node with exactly one constant input: the other input.
  ValueId non_constant_input(NodeId id) const;
  // Values produced by members and consumed by a non-member or graph outputs, excluding
  // the outputs of `sinks` (the match's final nodes).
  std::vector<ValueId> escaping_values(const std::vector<NodeId>& members,
                                       const std::vector<NodeId>& sinks) const;

 private:
  const Graph& g_;
  const std::vector<OpClass>& classes_;
  const std::vector<char>& claimed_;
};

class FusionPattern {
 public:
  virtual ~FusionPattern() = default;
  virtual std::string_view name() const = 0;
  virtual std::vector<std::string_view> target_ops() const = 0;
  // Cheap test on the target node before match().
  virtual bool condition(const PatternContext&, NodeId) const { return true; }
  // A graph rewrite (Conv+BN folding) removes ops outright: it needs a net saving but
  // not the buffer-fusion traffic threshold.
  virtual bool is_rewrite() const { return false; }
  virtual std::optional<PatternMatch> match(const PatternContext& ctx, NodeId target) const = 0;
};

// An activation (or activation-like elementwise tail) applied to `v`: Relu, LeakyRelu,
// Clip (Relu6), Sigmoid, Tanh, HardSwish, HardSigmoid, Elu, Gelu, SiLU (x * Sigmoid(x)),
// Swish (x * Sigmoid(beta x)), decomposed erf/tanh GELU. Returns its nodes and output.
struct ActivationMatch {
  std::string name;  // "relu", "silu", "gelu_erf", ...
  std::vector<NodeId> nodes;
  ValueId output = kNoValue;
};
std::optional<ActivationMatch> match_activation(const PatternContext& ctx, ValueId v);
// Decomposed GELU whose input is x (erf form: Div/Mul, Erf, Add, Mul, Mul; tanh form:
// Pow/Mul, Mul, Add, Mul, Tanh, Add, Mul, Mul).
std::optional<ActivationMatch> match_decomposed_gelu(const PatternContext& ctx, ValueId x);

std::unique_ptr<FusionPattern> make_conv_bn_pattern();
std::unique_ptr<FusionPattern> make_pointwise_depthwise_pattern();
std::unique_ptr<FusionPattern> make_conv_bias_act_pattern();
std::unique_ptr<FusionPattern> make_matmul_add_act_pattern();
std::unique_ptr<FusionPattern> make_layer_norm_pattern();
std::unique_ptr<FusionPattern> make_gelu_pattern();
std::unique_ptr<FusionPattern> make_softmax_pattern();
std::unique_ptr<FusionPattern> make_anchor_epilogue_pattern();
std::unique_ptr<FusionPattern> make_qdq_pattern();
std::unique_ptr<FusionPattern> make_qdq_between_pattern();

// The ordered seed list.
std::vector<std::unique_ptr<FusionPattern>> seed_patterns();

}  // namespace fx
