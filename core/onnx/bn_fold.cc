// SPDX-License-Identifier: Apache-2.0
#include "onnx/bn_fold.h"

#include <cmath>
#include <unordered_map>

#include "util/error.h"

namespace fx {

namespace {

bool is_f32_constant(const Graph& g, ValueId v) {
  return v != kNoValue && g.value(v).is_constant() && g.value(v).data->dtype() == DType::Float32;
}

std::vector<float> floats_of(const Graph& g, ValueId v) {
  return g.value(v).data->to_floats();
}

}  // namespace

FoldedConv fold_bn_weights(const std::vector<float>& w, int64_t out_channels,
                           const std::vector<float>& bias, const std::vector<float>& gamma,
                           const std::vector<float>& beta, const std::vector<float>& mean,
                           const std::vector<float>& var, float epsilon) {
  auto o = static_cast<std::size_t>(out_channels);
  if (out_channels <= 0 || w.size() % o != 0 || gamma.size() != o || beta.size() != o ||
      mean.size() != o || var.size() != o || (!bias.empty() && bias.size() != o)) {
    throw Error("BN fold: parameters do not have " + std::to_string(out_channels) +
                " channels (weights " + std::to_string(w.size()) + ", scale " +
                std::to_string(gamma.size()) + ")");
  }
  FoldedConv f;
  f.weights.resize(w.size());
  f.bias.resize(o);
  const std::size_t per = w.size() / o;
  for (std::size_t c = 0; c < o; ++c) {
    // Double for the scale: var + eps can be tiny and the product is reused per weight.
    double s = double(gamma[c]) / std::sqrt(double(var[c]) + double(epsilon));
    for (std::size_t i = 0; i < per; ++i) f.weights[c * per + i] = float(w[c * per + i] * s);
    double b = bias.empty() ? 0.0 : bias[c];
    f.bias[c] = float((b - mean[c]) * s + beta[c]);
  }
  return f;
}

std::string conv_bn_fold_blocker(const Graph& g, NodeId conv, NodeId bn) {
  const Node& c = g.node(conv);
  const Node& b = g.node(bn);
  if (c.op_type != "Conv" || !c.domain.empty()) return "not a Conv";
  if (b.op_type != "BatchNormalization" || !b.domain.empty()) return "not a BatchNormalization";
  if (c.outputs.empty() || b.inputs.size() < 5 || b.inputs[0] != c.outputs[0]) {
    return "the BatchNormalization does not read the Conv's output";
  }
  if (b.outputs.size() != 1 && !(b.outputs.size() > 1 && b.outputs[1] == kNoValue)) {
    return "the BatchNormalization is in training form (several outputs)";
  }
  const Value& mid = g.value(c.outputs[0]);
  if (mid.consumers.size() != 1 || mid.is_graph_output) {
    return "the Conv output '" + mid.name + "' is used outside the pair";
  }
  if (c.inputs.size() < 2 || !is_f32_constant(g, c.inputs[1])) return "Conv weights not constant";
  if (c.inputs.size() > 2 && c.inputs[2] != kNoValue && !is_f32_constant(g, c.inputs[2])) {
    return "Conv bias not constant";
  }
  for (int i = 1; i < 5; ++i) {
    if (!is_f32_constant(g, b.inputs[static_cast<std::size_t>(i)])) {
      return "BatchNormalization parameter " + std::to_string(i) + " not constant";
    }
  }
  return {};
}

BnFoldResult fold_conv_bn(const Graph& g) {
  // conv node -> bn node, for pairs that fold.
  std::unordered_map<NodeId, NodeId> bn_of_conv, conv_of_bn;
  for (NodeId n = 0; n < static_cast<NodeId>(g.node_count()); ++n) {
    const Node& b = g.node(n);
    if (b.op_type != "BatchNormalization" || b.inputs.empty() || b.inputs[0] == kNoValue) continue;
    NodeId c = g.value(b.inputs[0]).producer;
    if (c == kNoNode || !conv_bn_fold_blocker(g, c, n).empty()) continue;
    bn_of_conv[c] = n;
    conv_of_bn[n] = c;
  }
  BnFoldResult r;
  Graph& out = r.graph;
  // Same value ids: every value copied (the Conv's old output stays, unused).
  for (const Value& v : g.values()) {
    Value copy = v;
    copy.producer = kNoNode;
    copy.consumers.clear();
    copy.is_graph_input = copy.is_graph_output = false;
    out.add_value(std::move(copy));
  }
  for (ValueId v : g.inputs()) out.add_input(v);
  for (NodeId n = 0; n < static_cast<NodeId>(g.node_count()); ++n) {
    if (conv_of_bn.count(n)) continue;
    Node node = g.node(n);
    auto it = bn_of_conv.find(n);
    if (it != bn_of_conv.end()) {
      const Node& bn = g.node(it->second);
      const Value& w = g.value(node.inputs[1]);
      bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
      int64_t oc = w.data->dims().at(0);
      auto f = fold_bn_weights(floats_of(g, node.inputs[1]), oc,
                               has_bias ? floats_of(g, node.inputs[2]) : std::vector<float>{},
                               floats_of(g, bn.inputs[1]), floats_of(g, bn.inputs[2]),
                               floats_of(g, bn.inputs[3]), floats_of(g, bn.inputs[4]),
                               bn.attrs.get_float("epsilon", 1e-5f));
      Value wv;
      wv.name = node.name + ".folded_W";
      wv.dtype = DType::Float32;
      wv.shape = Shape::of(w.data->dims());
      wv.data = TensorData::from_floats(w.data->dims(), f.weights);
      Value bv;
      bv.name = node.name + ".folded_B";
      bv.dtype = DType::Float32;
      bv.shape = Shape::of({oc});
      bv.data = TensorData::from_floats({oc}, f.bias);
      ValueId wid = out.add_value(std::move(wv));
      ValueId bid = out.add_value(std::move(bv));
      node.inputs.resize(3);
      node.inputs[1] = wid;
      node.inputs[2] = bid;
      node.outputs = {bn.outputs[0]};
      r.folded_bn.push_back(bn.name);
      r.into_conv.push_back(node.name);
    }
    out.add_node(std::move(node));
  }
  for (ValueId v : g.outputs()) out.add_output(v);
  return r;
}

}  // namespace fx
