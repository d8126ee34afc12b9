#include "ir/graph.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

#include "util/error.h"
#include "util/saturating.h"

namespace fx {

std::optional<int64_t> Value::byte_size() const {
  auto n = shape.numel();
  std::size_t es = dtype_size(dtype);
  if (!n || es == 0) return std::nullopt;
  return sat_mul(*n, static_cast<int64_t>(es));
}

std::string Node::qualified_op() const {
  if (domain.empty() || domain == "ai.onnx") return op_type;
  return domain + "::" + op_type;
}

ValueId Graph::add_value(Value v) {
  auto id = static_cast<ValueId>(values_.size());
  if (!v.name.empty()) value_index_.emplace(v.name, id);
  values_.push_back(std::move(v));
  return id;
}

ValueId Graph::value_by_name_or_add(const std::string& name) {
  auto it = value_index_.find(name);
  if (it != value_index_.end()) return it->second;
  Value v;
  v.name = name;
  return add_value(std::move(v));
}

NodeId Graph::add_node(Node n) {
  auto id = static_cast<NodeId>(nodes_.size());
  for (ValueId in : n.inputs)
    if (in != kNoValue) value(in).consumers.push_back(id);
  for (ValueId out : n.outputs)
    if (out != kNoValue && value(out).producer == kNoNode) value(out).producer = id;
  if (!n.name.empty()) node_index_.emplace(n.name, id);
  nodes_.push_back(std::move(n));
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

ValueId Graph::find_value(std::string_view name) const {
  auto it = value_index_.find(std::string(name));
  return it == value_index_.end() ? kNoValue : it->second;
}

NodeId Graph::find_node(std::string_view name) const {
  auto it = node_index_.find(std::string(name));
  return it == node_index_.end() ? kNoNode : it->second;
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
      if (v.producer == kNoNode && !v.is_graph_input && !v.is_constant())
        throw Error("node '" + n.name + "' (" + n.op_type + ") uses undefined tensor '" + v.name +
                    "'");
      if (produced[static_cast<std::size_t>(in)] && v.is_graph_input && !v.is_constant())
        throw Error("graph input '" + v.name + "' is also produced by a node");
    }
  }
  for (ValueId out : outputs_) {
    const Value& v = value(out);
    if (v.producer == kNoNode && !v.is_graph_input && !v.is_constant())
      throw Error("graph output '" + v.name + "' is not produced by any node");
  }
  (void)topological_order();
}

namespace {
// "/layer1/0/conv1/Conv" -> "layer1/0/conv1"; "" when the name has no scope.
std::string module_path(std::string_view name) {
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  auto slash = name.rfind('/');
  if (slash == std::string_view::npos) return {};
  return std::string(name.substr(0, slash));
}

std::string parent_path(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string{} : path.substr(0, slash);
}
}  // namespace

void Graph::derive_scopes() {
  std::vector<std::string> paths(nodes_.size());
  std::unordered_set<std::string> has_children;  // modules that contain sub-modules
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    paths[i] = module_path(nodes_[i].name);
    for (std::string p = parent_path(paths[i]); !p.empty(); p = parent_path(p))
      if (!has_children.insert(p).second) break;
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const std::string& p = paths[i];
    nodes_[i].scope = (p.empty() || has_children.count(p)) ? p : parent_path(p);
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
