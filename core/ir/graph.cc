// SPDX-License-Identifier: Apache-2.0
#include "ir/graph.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

#include "util/error.h"
#include "util/saturating.h"

namespace fx {

std::optional<int64_t> Value::byte_size() const {
  // A string's size is its length: known only for a constant.
  if (dtype == DType::String)
    return data ? std::optional<int64_t>(static_cast<int64_t>(data->byte_size())) : std::nullopt;
  auto n = shape.numel();
  std::size_t es = dtype_size(dtype);
  if (!n || es == 0) return std::nullopt;
  return sat_mul(*n, static_cast<int64_t>(es));
}

std::string Node::qualified_op() const {
  if (domain.empty() || domain == "ai.onnx") return op_type;
  return domain + "::" + op_type;
}

namespace detail {

uint32_t NameIndex::hash(std::string_view s) {
  // FNV-1a, folded: names are short and mostly differ in their last characters.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return uint32_t(h ^ (h >> 32));
}

void NameIndex::grow(std::size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  // Placement needs only the stored hash: no name is read again.
  for (const Slot& s : old) {
    if (s.id < 0) continue;
    std::size_t i = s.hash & mask_;
    while (slots_[i].id >= 0) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

void NameIndex::reserve(std::size_t n) {
  std::size_t capacity = 16;
  while (capacity * 3 < n * 4) capacity *= 2;
  if (capacity > slots_.size()) grow(capacity);
}

}  // namespace detail

void Graph::reserve(std::size_t nodes, std::size_t values) {
  nodes_.reserve(nodes);
  values_.reserve(values);
  node_index_.reserve(nodes);
  value_index_.reserve(values);
}

ValueId Graph::add_value(Value v) {
  auto id = static_cast<ValueId>(values_.size());
  values_.push_back(std::move(v));
  const std::string& name = values_.back().name;
  if (!name.empty())
    value_index_.insert(
        name, id, [this](int32_t i) -> const std::string& { return values_[std::size_t(i)].name; });
  return id;
}

ValueId Graph::value_by_name_or_add(std::string_view name) {
  const ValueId found = find_value(name);
  if (found != kNoValue) return found;
  Value v;
  v.name = std::string(name);
  return add_value(std::move(v));
}

NodeId Graph::add_node(Node n) {
  auto id = static_cast<NodeId>(nodes_.size());
  for (ValueId in : n.inputs)
    if (in != kNoValue) value(in).consumers.push_back(id);
  for (ValueId out : n.outputs)
    if (out != kNoValue && value(out).producer == kNoNode) value(out).producer = id;
  nodes_.push_back(std::move(n));
  const std::string& name = nodes_.back().name;
  if (!name.empty())
    node_index_.insert(
        name, id, [this](int32_t i) -> const std::string& { return nodes_[std::size_t(i)].name; });
  return id;
}

void Graph::add_input(ValueId v) {
  value(v).is_graph_input = true;
  inputs_.push_back(v);
}

void Graph::add_output(ValueId v) {
  value(v).is_graph_output = true;
  outputs_.push_back(v);
}

void Graph::add_outer_ref(ValueId v) {
  if (value(v).is_outer_ref) return;
  value(v).is_outer_ref = true;
  outer_refs_.push_back(v);
}

ValueId Graph::find_value(std::string_view name) const {
  const int32_t id = value_index_.find(
      name, [this](int32_t i) -> const std::string& { return values_[std::size_t(i)].name; });
  return id < 0 ? kNoValue : id;
}

NodeId Graph::find_node(std::string_view name) const {
  const int32_t id = node_index_.find(
      name, [this](int32_t i) -> const std::string& { return nodes_[std::size_t(i)].name; });
  return id < 0 ? kNoNode : id;
}

std::vector<ValueId> Graph::runtime_inputs() const {
  std::vector<ValueId> out;
  for (ValueId v : inputs_)
    if (!value(v).is_constant()) out.push_back(v);
  return out;
}

std::vector<NodeId> Graph::topological_order() const {
  const std::size_t n = nodes_.size();
  std::vector<int32_t> indegree(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (ValueId in : nodes_[i].inputs)
      if (in != kNoValue && value(in).producer != kNoNode) ++indegree[i];
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(static_cast<NodeId>(i));
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (ValueId out : node(id).outputs) {
      if (out == kNoValue || value(out).producer != id) continue;
      for (NodeId c : value(out).consumers)
        if (--indegree[static_cast<std::size_t>(c)] == 0) ready.push(c);
    }
  }
  if (order.size() != n) {
    for (std::size_t i = 0; i < n; ++i)
      if (indegree[i] > 0)
        throw Error("graph has a cycle through node '" + nodes_[i].name + "' (" +
                    nodes_[i].op_type + ")");
  }
  return order;
}

void Graph::validate() const {
  std::vector<int> produced(values_.size(), 0);
  for (const auto& n : nodes_)
    for (ValueId out : n.outputs)
      if (out != kNoValue && ++produced[static_cast<std::size_t>(out)] > 1)
        throw Error("value '" + value(out).name + "' is produced twice (again by node '" + n.name +
                    "')");
  for (const auto& n : nodes_) {
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      const Value& v = value(in);
      if (v.producer == kNoNode && !v.is_graph_input && !v.is_constant() && !v.is_outer_ref)
        throw Error("node '" + n.name + "' (" + n.op_type + ") uses undefined tensor '" + v.name +
                    "'");
      if (produced[static_cast<std::size_t>(in)] && v.is_graph_input && !v.is_constant())
        throw Error("graph input '" + v.name + "' is also produced by a node");
    }
  }
  for (ValueId out : outputs_) {
    const Value& v = value(out);
    if (v.producer == kNoNode && !v.is_graph_input && !v.is_constant() && !v.is_outer_ref)
      throw Error("graph output '" + v.name + "' is not produced by any node");
  }
  (void)topological_order();
}

namespace {
// "/layer1/0/conv1/Conv" -> "layer1/0/conv1"; "" when the name has no scope. A view
// into the name.
std::string_view module_path(std::string_view name) {
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  auto slash = name.rfind('/');
  if (slash == std::string_view::npos) return {};
  return name.substr(0, slash);
}

std::string_view parent_path(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}
}  // namespace

void Graph::derive_scopes() {
  // Views into the node names, which do not change here: no string is built but the
  // scopes themselves.
  std::vector<std::string_view> paths(nodes_.size());
  std::unordered_set<std::string_view> has_children;  // modules that contain sub-modules
  has_children.reserve(nodes_.size() / 4 + 16);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    paths[i] = module_path(nodes_[i].name);
    for (std::string_view p = parent_path(paths[i]); !p.empty(); p = parent_path(p))
      if (!has_children.insert(p).second) break;
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const std::string_view p = paths[i];
    nodes_[i].scope = std::string((p.empty() || has_children.count(p)) ? p : parent_path(p));
  }
}

int64_t Graph::parameter_bytes() const {
  int64_t total = 0;
  for (const auto& v : values_)
    if (v.data) total = sat_add(total, static_cast<int64_t>(v.data->byte_size()));
  return total;
}

int64_t Graph::activation_bytes() const {
  int64_t total = 0;
  for (const auto& v : values_)
    if (!v.data)
      if (auto b = v.byte_size()) total = sat_add(total, *b);
  return total;
}

}  // namespace fx
