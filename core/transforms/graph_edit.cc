// SPDX-License-Identifier: Apache-2.0
#include "transforms/graph_edit.h"

#include "ir/graph_queries.h"

namespace fx::transforms {

GraphEdit::GraphEdit(const Graph& g)
    : g_(g),
      dropped_(g.node_count(), 0),
      alias_(g.value_count(), kNoValue),
      data_(g.value_count()),
      rewritten_(g.node_count()) {}

ValueId GraphEdit::add_constant(const std::string& name, std::shared_ptr<TensorData> data) {
  added_.emplace_back(name, std::move(data));
  alias_.push_back(kNoValue);
  data_.push_back(added_.back().second);
  ++changes_;
  return ValueId(g_.value_count() + added_.size() - 1);
}

void GraphEdit::set_constant(ValueId v, std::shared_ptr<TensorData> data) {
  data_[std::size_t(v)] = std::move(data);
  ++changes_;
}

std::shared_ptr<TensorData> GraphEdit::constant(ValueId v) const {
  if (v == kNoValue) return nullptr;
  v = resolve(v);
  if (data_[std::size_t(v)]) return data_[std::size_t(v)];
  return constant_data(g_, v);
}

ValueId GraphEdit::resolve(ValueId v) const {
  // Chains are short (Identity of Identity); a cycle cannot arise because an alias
  // always points at a value produced earlier in topological order.
  while (v != kNoValue && alias_[std::size_t(v)] != kNoValue) v = alias_[std::size_t(v)];
  return v;
}

Graph GraphEdit::commit() const {
  const std::size_t nv = g_.value_count() + added_.size();
  auto node_at = [&](std::size_t i) -> const Node& {
    return rewritten_[i] ? *rewritten_[i] : g_.node(NodeId(i));
  };
  // Which values the result holds: read or written by a kept node, or an output, or a
  // graph input that is not an initializer.
  std::vector<char> keep(nv, 0);
  for (std::size_t i = 0; i < g_.node_count(); ++i) {
    if (dropped_[i]) continue;
    const Node& n = node_at(i);
    for (ValueId v : n.inputs)
      if (v != kNoValue) keep[std::size_t(resolve(v))] = 1;
    for (ValueId v : n.outputs)
      if (v != kNoValue) keep[std::size_t(v)] = 1;
  }
  for (ValueId v : g_.outputs()) keep[std::size_t(v)] = 1;
  for (ValueId v : g_.inputs())
    if (!g_.value(v).is_constant()) keep[std::size_t(v)] = 1;

  Graph out;
  out.reserve(g_.node_count(), nv);
  std::vector<ValueId> id(nv, kNoValue);
  for (std::size_t v = 0; v < nv; ++v) {
    if (!keep[v]) continue;
    Value val;
    if (v < g_.value_count()) {
      val = g_.value(ValueId(v));
    } else {
      val.name = added_[v - g_.value_count()].first;
    }
    val.producer = kNoNode;
    val.consumers.clear();
    val.is_graph_input = val.is_graph_output = false;
    if (data_[v]) {
      val.data = data_[v];
      val.dtype = data_[v]->dtype();
      val.shape = Shape::of(data_[v]->dims());
    }
    id[v] = out.add_value(std::move(val));
  }
  for (std::size_t i = 0; i < g_.node_count(); ++i) {
    if (dropped_[i]) continue;
    Node n = node_at(i);
    for (ValueId& v : n.inputs)
      if (v != kNoValue) v = id[std::size_t(resolve(v))];
    for (ValueId& v : n.outputs)
      if (v != kNoValue) v = id[std::size_t(v)];
    out.add_node(std::move(n));
  }
  for (ValueId v : g_.inputs())
    if (id[std::size_t(v)] != kNoValue) out.add_input(id[std::size_t(v)]);
  for (ValueId v : g_.outputs()) out.add_output(id[std::size_t(v)]);
  return out;
}

}  // namespace fx::transforms
