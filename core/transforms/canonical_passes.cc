// SPDX-License-Identifier: Apache-2.0
#include "transforms/canonical_passes.h"

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

#include "transforms/constant_folding.h"
#include "transforms/graph_edit.h"

namespace fx::transforms {
namespace {

bool default_domain(const Node& n) {
  return n.domain.empty() || n.domain == "ai.onnx";
}

void removed(PassRecord& r, const Node& n) {
  ++r.nodes_removed;
  ++r.removed_ops[n.op_type];
}

void weight(PassRecord& r, const Value& v, const TensorData& d) {
  r.weights.push_back(v.name);
  r.weight_bytes += int64_t(d.byte_size());
}

// ONNX shape inference leaves a Reshape's output unknown when its target shape came
// from arithmetic its data propagation does not follow; once folding made the target a
// constant, the output shape is known. Fills those in (and what only copies a shape on).
void complete_shapes(Graph& g) {
  for (NodeId id : g.topological_order()) {
    Node& n = g.node(id);
    if (!n.shape_unknown || n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] == kNoValue ||
        !default_domain(n))
      continue;
    const Value& x = g.value(n.inputs[0]);
    Value& out = g.value(n.outputs[0]);
    if (out.shape.rank_known() || !x.shape.is_static()) continue;
    std::shared_ptr<TensorData> data;
    if (n.op_type == "Reshape" && n.inputs.size() > 1 && n.inputs[1] != kNoValue &&
        g.value(n.inputs[1]).is_constant()) {
      // fold_node computes the output from a stand-in of the input's size.
      auto stand_in =
          TensorData::owned(DType::UInt8, x.shape.static_dims(),
                            std::vector<std::byte>(std::size_t(x.shape.numel().value_or(0))));
      if (x.shape.numel().value_or(0) <= int64_t(kFoldLimitBytes))
        data = fold_node(n, {stand_in, g.value(n.inputs[1]).data});
    }
    if (data) {
      out.shape = Shape::of(data->dims());
      if (out.dtype == DType::Undefined) out.dtype = x.dtype;
    } else if (n.op_type == "Relu" || n.op_type == "Sigmoid" || n.op_type == "Tanh" ||
               n.op_type == "Identity" || n.op_type == "Neg" || n.op_type == "Abs") {
      out.shape = x.shape;
      if (out.dtype == DType::Undefined) out.dtype = x.dtype;
    } else {
      continue;
    }
    n.shape_unknown = false;
    for (ValueId v : n.outputs)
      if (v != kNoValue && !g.value(v).shape.rank_known()) n.shape_unknown = true;
  }
}

}  // namespace

Graph constant_to_initializer(const Graph& g, PassRecord& r) {
  GraphEdit e(g);
  for (std::size_t i = 0; i < g.node_count(); ++i) {
    const Node& n = g.node(NodeId(i));
    if (n.op_type != "Constant" || !default_domain(n) || n.outputs.size() != 1) continue;
    const ValueId out = n.outputs[0];
    // A constant graph output stays a node: the runtime produces outputs from kernels.
    if (out == kNoValue || g.value(out).is_graph_output) continue;
    auto data = constant_node_data(n);
    if (!data) continue;  // sparse or string values stay
    e.set_constant(out, data);
    e.drop(NodeId(i));
    removed(r, n);
    weight(r, g.value(out), *data);
  }
  return e.empty() ? g : e.commit();
}

Graph identity_elimination(const Graph& g, PassRecord& r) {
  GraphEdit e(g);
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (n.op_type != "Identity" || !default_domain(n) || n.inputs.size() != 1 ||
        n.outputs.size() != 1 || n.inputs[0] == kNoValue)
      continue;
    const ValueId in = n.inputs[0], out = n.outputs[0];
    auto data = e.constant(in);
    if (e.can_alias(out)) {
      e.alias(out, in);
    } else if (data) {
      e.set_constant(out, data);  // a graph output keeps its name, now as a weight
    } else {
      continue;  // renaming the producer's output would rename the model's output
    }
    e.drop(id);
    removed(r, n);
    // Recorded under the name its readers read now (the explorer marks it there).
    if (data) weight(r, g.value(e.can_alias(out) ? in : out), *data);
  }
  return e.empty() ? g : e.commit();
}

Graph shape_folding(const Graph& g, PassRecord& r) {
  GraphEdit e(g);
  for (std::size_t i = 0; i < g.node_count(); ++i) {
    const Node& n = g.node(NodeId(i));
    if ((n.op_type != "Shape" && n.op_type != "Size") || !default_domain(n) || n.inputs.empty() ||
        n.inputs[0] == kNoValue || n.outputs.size() != 1)
      continue;
    const Shape& s = g.value(n.inputs[0]).shape;
    if (!s.is_static() || g.value(n.outputs[0]).is_graph_output) continue;
    // Shape and Size read only the dims, which fold_node takes from a stand-in.
    auto dims_only = TensorData::owned(DType::UInt8, s.static_dims(), {});
    auto data = fold_node(n, {dims_only});
    if (!data) continue;
    e.set_constant(n.outputs[0], data);
    e.drop(NodeId(i));
    removed(r, n);
  }
  return e.empty() ? g : e.commit();
}

Graph constant_folding(const Graph& g, PassRecord& r) {
  GraphEdit e(g);
  // In topological order a folded output is known before its readers are visited, so
  // one sweep carries a whole chain.
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (!default_domain(n) || n.outputs.size() != 1 || n.outputs[0] == kNoValue ||
        n.op_type == "Constant" || n.op_type == "Shape" || n.op_type == "Size" || has_subgraph(n) ||
        g.value(n.outputs[0]).is_graph_output || n.inputs.empty())
      continue;
    std::vector<std::shared_ptr<TensorData>> in;
    bool all = true;
    for (ValueId v : n.inputs) {
      in.push_back(v == kNoValue ? nullptr : e.constant(v));
      all = all && (v == kNoValue || in.back());
    }
    if (!all) continue;
    auto data = fold_node(n, in);
    if (!data) continue;
    e.set_constant(n.outputs[0], data);
    e.drop(id);
    removed(r, n);
  }
  if (e.empty()) return g;
  Graph out = e.commit();
  complete_shapes(out);
  return out;
}

Graph conv_bn_folding(const Graph& g, PassRecord& r) {
  GraphEdit e(g);
  auto floats = [&](ValueId v, int64_t n) -> std::optional<std::vector<float>> {
    if (v == kNoValue || !g.value(v).is_constant() || g.value(v).data->dtype() != DType::Float32 ||
        g.value(v).data->numel() != n)
      return std::nullopt;
    return g.value(v).data->to_floats();
  };
  for (std::size_t i = 0; i < g.node_count(); ++i) {
    const Node& bn = g.node(NodeId(i));
    if (bn.op_type != "BatchNormalization" || !default_domain(bn) || bn.inputs.size() != 5 ||
        bn.name.empty() || bn.attrs.get_int("training_mode", 0) != 0)
      continue;
    bool extra_outputs = false;
    for (std::size_t k = 1; k < bn.outputs.size(); ++k)
      extra_outputs = extra_outputs || bn.outputs[k] != kNoValue;
    const ValueId x = bn.inputs[0];
    if (extra_outputs || x == kNoValue || g.value(x).producer == kNoNode ||
        g.value(x).consumers.size() != 1 || g.value(x).is_graph_output)
      continue;
    const NodeId cid = g.value(x).producer;
    const Node& conv = g.node(cid);
    if (conv.op_type != "Conv" || !default_domain(conv) || conv.name.empty() ||
        conv.inputs.size() < 2 || conv.outputs.size() != 1 || e.dropped(cid))
      continue;
    const ValueId wv = conv.inputs[1];
    if (wv == kNoValue || !g.value(wv).is_constant() || g.value(wv).data->dims().empty() ||
        g.value(wv).data->dtype() != DType::Float32)
      continue;
    const int64_t m = g.value(wv).data->dims()[0];
    auto scale = floats(bn.inputs[1], m), bias = floats(bn.inputs[2], m),
         mean = floats(bn.inputs[3], m), var = floats(bn.inputs[4], m);
    const bool has_b = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
    auto b = has_b ? floats(conv.inputs[2], m)
                   : std::optional<std::vector<float>>(std::vector<float>(std::size_t(m), 0.f));
    if (!scale || !bias || !mean || !var || !b) continue;
    if (g.find_value(conv.name + ".folded_W") != kNoValue ||
        g.find_value(conv.name + ".folded_B") != kNoValue)
      continue;  // already a folded export of ours: leave its names alone
    const float eps = bn.attrs.get_float("epsilon", 1e-5f);
    std::vector<float> w = g.value(wv).data->to_floats();
    const std::size_t per = w.size() / std::size_t(m);
    std::vector<float> nb(static_cast<std::size_t>(m));
    for (std::size_t oc = 0; oc < std::size_t(m); ++oc) {
      const float f = (*scale)[oc] / std::sqrt((*var)[oc] + eps);
      for (std::size_t k = 0; k < per; ++k) w[oc * per + k] *= f;
      nb[oc] = ((*b)[oc] - (*mean)[oc]) * f + (*bias)[oc];
    }
    Node folded = conv;
    folded.inputs.resize(3);
    folded.inputs[1] = e.add_constant(conv.name + ".folded_W",
                                      TensorData::from_floats(g.value(wv).data->dims(), w));
    folded.inputs[2] = e.add_constant(conv.name + ".folded_B", TensorData::from_floats({m}, nb));
    folded.outputs[0] = bn.outputs[0];
    e.rewrite(cid, std::move(folded));
    e.drop(NodeId(i));
    removed(r, bn);
    r.folded_into[bn.name] = conv.name;
  }
  return e.empty() ? g : e.commit();
}

Graph dead_node_elimination(const Graph& g, PassRecord& r) {
  GraphEdit e(g);
  std::vector<int> uses(g.value_count(), 0);
  for (std::size_t v = 0; v < g.value_count(); ++v)
    uses[v] = int(g.value(ValueId(v)).consumers.size()) + (g.value(ValueId(v)).is_graph_output);
  const auto order = g.topological_order();
  bool any = false;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& n = g.node(*it);
    if (n.outputs.empty()) continue;  // nothing to read: not ours to judge
    bool used = false;
    for (ValueId v : n.outputs) used = used || (v != kNoValue && uses[std::size_t(v)] > 0);
    if (used) continue;
    e.drop(*it);
    any = true;
    removed(r, n);
    for (ValueId v : n.inputs)
      if (v != kNoValue) --uses[std::size_t(v)];
  }
  return any ? e.commit() : g;
}

Graph merge_duplicate_initializers(const Graph& g, PassRecord& r) {
  GraphEdit e(g);
  // Candidates bucketed by type, dims and size; bytes compared only within a bucket.
  std::map<std::tuple<DType, std::vector<int64_t>, std::size_t>, std::vector<ValueId>> buckets;
  for (std::size_t v = 0; v < g.value_count(); ++v) {
    const Value& val = g.value(ValueId(v));
    // Only data held in memory: weights still in the model file keep their names, which
    // the fused export (which rewrites the file's own graph) looks them up by.
    if (!val.is_constant() || val.is_graph_output || val.consumers.empty() ||
        val.data->is_file_backed())
      continue;
    if (dtype_size(val.data->dtype()) == 0) continue;
    buckets[{val.data->dtype(), val.data->dims(), val.data->byte_size()}].push_back(ValueId(v));
  }
  bool any = false;
  for (auto& [key, ids] : buckets) {
    if (ids.size() < 2) continue;
    std::vector<ValueId> kept;
    for (ValueId v : ids) {
      auto b = g.value(v).data->bytes();
      ValueId same = kNoValue;
      for (ValueId k : kept) {
        auto kb = g.value(k).data->bytes();
        if (std::memcmp(b.data(), kb.data(), b.size()) == 0) {
          same = k;
          break;
        }
      }
      if (same == kNoValue) {
        kept.push_back(v);
        continue;
      }
      e.alias(v, same);
      ++r.merged;
      any = true;
    }
  }
  return any ? e.commit() : g;
}

}  // namespace fx::transforms
