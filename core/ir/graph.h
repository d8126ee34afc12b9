// SPDX-License-Identifier: Apache-2.0
#pragma once
// The graph IR every layer shares: values (tensors) and nodes (ops), addressed by
// dense integer ids so analysis of a 100,000-node graph stays cache friendly.
//
//   Value   a tensor: dtype, shape, producer, consumers, optional constant data
//   Node    an op: type, domain, inputs/outputs (value ids), attributes, name scope
//   Graph   owns both; graph inputs/outputs; topological order; validation
//
// Ids are stable for the life of a Graph (nodes are never erased in place; rewrites
// build a new Graph).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/shape.h"
#include "ir/tensor_data.h"

namespace fx {

using NodeId = int32_t;
using ValueId = int32_t;
inline constexpr NodeId kNoNode = -1;
inline constexpr ValueId kNoValue = -1;  // an omitted optional input

// What a value holds: one tensor, or (control-flow models) an ONNX sequence of
// tensors or an optional.
enum class ValueKind : uint8_t { Tensor, Sequence, Optional };

struct Value {
  std::string name;
  ValueKind kind = ValueKind::Tensor;  // dtype: the element type for Sequence/Optional
  DType dtype = DType::Undefined;
  Shape shape;
  NodeId producer = kNoNode;         // kNoNode for graph inputs and initializers
  std::vector<NodeId> consumers;     // one entry per use (a node using it twice appears twice)
  std::shared_ptr<TensorData> data;  // set for initializers (constants)
  bool is_graph_input = false;
  bool is_graph_output = false;
  // In a subgraph: a value of an enclosing graph, read by name (ONNX's outer-scope
  // reference). Defined before the subgraph runs, like an input.
  bool is_outer_ref = false;

  bool is_constant() const { return data != nullptr; }
  // Bytes of the tensor when its shape is static and its dtype has a fixed size.
  std::optional<int64_t> byte_size() const;
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;           // "" for the default ONNX domain
  std::vector<ValueId> inputs;  // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;
  // The last `implicit_inputs` entries of `inputs` are not ONNX inputs: they are the
  // values of this graph that the node's subgraphs read by name (ir/subgraph.h), so
  // that every consumer walk, liveness and ordering sees those uses.
  int implicit_inputs = 0;
  Attributes attrs;
  std::string scope;           // name-scope path, e.g. "layer1/0" (see Graph::derive_scopes)
  bool shape_unknown = false;  // shape inference could not infer an output

  // "Conv" or "com.microsoft::FusedConv".
  std::string qualified_op() const;
};

namespace detail {
// Name -> id for the graph's values or nodes: open addressing over ids, the names
// themselves staying in the Value/Node they belong to (no copy, no allocation per
// entry, lookups by string_view). The first id added under a name wins.
class NameIndex {
 public:
  template <class NameOf>
  int32_t find(std::string_view name, const NameOf& name_of) const {
    if (slots_.empty()) return -1;
    const uint32_t h = hash(name);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (s.hash == h && name_of(s.id) == name) return s.id;
    }
  }
  // Adds `id` under `name` unless the name is there already; false then.
  template <class NameOf>
  bool insert(std::string_view name, int32_t id, const NameOf& name_of) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow(std::max<std::size_t>(16, slots_.size() * 2));
    const uint32_t h = hash(name);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id < 0) {
        s = {h, id};
        ++size_;
        return true;
      }
      if (s.hash == h && name_of(s.id) == name) return false;
    }
  }
  void reserve(std::size_t n);

 private:
  struct Slot {
    uint32_t hash = 0;
    int32_t id = -1;
  };
  static uint32_t hash(std::string_view s);
  void grow(std::size_t capacity);  // a power of two
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};
}  // namespace detail

class Graph {
 public:
  // --- building ---------------------------------------------------------------
  // Room for this many nodes and values (an importer knows them up front).
  void reserve(std::size_t nodes, std::size_t values);
  ValueId add_value(Value v);
  // Finds a value by name, or creates an empty one with that name.
  ValueId value_by_name_or_add(std::string_view name);
  NodeId add_node(Node n);  // also records producer/consumer links
  void add_input(ValueId v);
  void add_output(ValueId v);
  // Marks `v` as read from an enclosing graph (a subgraph's outer-scope reference).
  void add_outer_ref(ValueId v);

  // --- reading ----------------------------------------------------------------
  std::size_t node_count() const { return nodes_.size(); }
  std::size_t value_count() const { return values_.size(); }
  const Node& node(NodeId id) const { return nodes_[static_cast<std::size_t>(id)]; }
  Node& node(NodeId id) { return nodes_[static_cast<std::size_t>(id)]; }
  const Value& value(ValueId id) const { return values_[static_cast<std::size_t>(id)]; }
  Value& value(ValueId id) { return values_[static_cast<std::size_t>(id)]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  // Values read from an enclosing graph, in first-use order (empty for a model's
  // main graph).
  const std::vector<ValueId>& outer_refs() const { return outer_refs_; }
  ValueId find_value(std::string_view name) const;  // kNoValue when absent
  NodeId find_node(std::string_view name) const;    // kNoNode when absent
  // Graph inputs that are not initializers: what a caller has to feed.
  std::vector<ValueId> runtime_inputs() const;

  // Nodes in a topological order (Kahn, ties by original index, so the order is
  // the file's order when the file is already sorted). Throws fx::Error naming a
  // node on the cycle when there is one.
  std::vector<NodeId> topological_order() const;

  // Checks structure: every node input is produced, an input or a constant;
  // no value is produced twice; no cycle; graph outputs are produced.
  // Throws fx::Error with the first problem found, naming the node and the value.
  void validate() const;

  // Fills Node::scope from node names such as "/layer1/0/conv1/Conv": the module
  // path without the op ("layer1/0/conv1"); when that module is a leaf (no other
  // node lives below it), its parent ("layer1/0"), so that one-op modules do not
  // become one-op groups.
  void derive_scopes();

  // Sum of the bytes of all constant values.
  int64_t parameter_bytes() const;
  // Sum of the bytes of all non-constant values with static shapes.
  int64_t activation_bytes() const;

 private:
  std::vector<Node> nodes_;
  std::vector<Value> values_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<ValueId> outer_refs_;
  detail::NameIndex value_index_;
  detail::NameIndex node_index_;
};

// Metadata of a loaded model that is not part of the graph.
struct ModelInfo {
  std::string path;
  std::string producer_name;
  std::string producer_version;
  int64_t ir_version = 0;
  std::vector<std::pair<std::string, int64_t>> opsets;  // domain -> version
  double load_ms = 0;                                   // reading and parsing the file
  double shape_inference_ms = 0;                        // ONNX shape inference
  int unknown_shape_nodes = 0;  // nodes left with an output of unknown shape
};

}  // namespace fx
