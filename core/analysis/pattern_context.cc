// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include "analysis/fusion_pattern.h"

namespace fx {

bool PatternContext::is(NodeId id, std::string_view op) const {
  if (id == kNoNode) return false;
  const Node& n = g_.node(id);
  return (n.domain.empty() || n.domain == "ai.onnx") && n.op_type == op;
}

ValueId PatternContext::input(NodeId id, std::size_t i) const {
  if (id == kNoNode) return kNoValue;
  const auto& in = node(id).inputs;
  return i < in.size() ? in[i] : kNoValue;
}

ValueId PatternContext::output(NodeId id) const {
  if (id == kNoNode) return kNoValue;
  const auto& out = node(id).outputs;
  return out.empty() ? kNoValue : out[0];
}

NodeId PatternContext::producer(ValueId v) const {
  return v == kNoValue ? kNoNode : g_.value(v).producer;
}

std::vector<NodeId> PatternContext::consumers(ValueId v) const {
  if (v == kNoValue) return {};
  // Keeps first-use order (patterns rely on it) but stays linear for small fan-outs,
  // and sort-based for large ones.
  const auto& all = g_.value(v).consumers;
  std::vector<NodeId> out;
  if (all.size() > 16) {
    out = all;
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  for (NodeId c : all)
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  return out;
}

NodeId PatternContext::sole_consumer(ValueId v) const {
  if (v == kNoValue || g_.value(v).is_graph_output) return kNoNode;
  auto c = consumers(v);
  return c.size() == 1 ? c[0] : kNoNode;
}

bool PatternContext::is_constant(ValueId v) const {
  if (v == kNoValue) return false;
  return g_.value(v).is_constant() || is(producer(v), "Constant");
}

std::optional<float> PatternContext::scalar_constant(ValueId v) const {
  if (v == kNoValue) return std::nullopt;
  std::shared_ptr<TensorData> data = g_.value(v).data;
  if (!data && is(producer(v), "Constant")) data = node(producer(v)).attrs.get_tensor("value");
  if (!data || data->numel() != 1) return std::nullopt;
  auto f = data->to_floats();
  if (f.empty()) return std::nullopt;
  return f[0];
}

ValueId PatternContext::non_constant_input(NodeId id) const {
  const Node& n = node(id);
  if (n.inputs.size() != 2) return kNoValue;
  bool c0 = is_constant(n.inputs[0]), c1 = is_constant(n.inputs[1]);
  if (c0 == c1) return kNoValue;
  return c0 ? n.inputs[1] : n.inputs[0];
}

std::vector<ValueId> PatternContext::escaping_values(const std::vector<NodeId>& members,
                                                     const std::vector<NodeId>& sinks) const {
  auto in = [](const std::vector<NodeId>& s, NodeId n) {
    return std::find(s.begin(), s.end(), n) != s.end();
  };
  std::vector<ValueId> out;
  for (NodeId m : members) {
    if (in(sinks, m)) continue;
    for (ValueId v : node(m).outputs) {
      if (v == kNoValue) continue;
      bool leaves = g_.value(v).is_graph_output;
      for (NodeId c : g_.value(v).consumers) leaves = leaves || !in(members, c);
      if (leaves) out.push_back(v);
    }
  }
  return out;
}

std::vector<std::unique_ptr<FusionPattern>> seed_patterns() {
  std::vector<std::unique_ptr<FusionPattern>> p;
  // Anchors first so that their epilogues are claimed with them; LayerNorm then joins
  // a following MatMul group; the generic anchor epilogue catches what is left.
  // A quantized anchor with its (De)QuantizeLinear nodes is one int8 kernel; before
  // conv_bias_act, which would take the Conv and its Relu alone.
  p.push_back(make_qdq_pattern());
  p.push_back(make_qdq_between_pattern());
  p.push_back(make_conv_bn_pattern());
  // Before conv_bias_act, which would claim the pointwise Conv and its activation alone.
  p.push_back(make_pointwise_depthwise_pattern());
  p.push_back(make_conv_bias_act_pattern());
  p.push_back(make_matmul_add_act_pattern());
  p.push_back(make_layer_norm_pattern());
  p.push_back(make_gelu_pattern());
  p.push_back(make_softmax_pattern());
  p.push_back(make_anchor_epilogue_pattern());
  return p;
}

}  // namespace fx
