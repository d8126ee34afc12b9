// SPDX-License-Identifier: Apache-2.0
#pragma once
// The edits a canonical pass makes, collected and then applied at once. The IR never
// erases in place (ids are stable for a Graph's life), so a pass records what goes
// and commit() builds the new Graph:
//
//   drop(n)            node n is not in the result
//   alias(from, to)    every reader of `from` reads `to` instead (chains are followed)
//   set_constant(v, d) v becomes an initializer holding d (its producer is dropped)
//   add_constant(n, d) a new initializer named n (a folded weight)
//   rewrite(n, node)   node n is replaced by `node` (ids of this graph or add_constant's)
//
// commit() keeps node and value names, graph inputs in order (an initializer listed as
// an input is dropped when nothing reads it any more) and every graph output. A value
// that is a graph output is never aliased away: passes check can_alias() first.

#include <memory>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace fx::transforms {

class GraphEdit {
 public:
  explicit GraphEdit(const Graph& g);

  void drop(NodeId n) { dropped_[std::size_t(n)] = 1, ++changes_; }
  bool dropped(NodeId n) const { return dropped_[std::size_t(n)] != 0; }
  void alias(ValueId from, ValueId to) { alias_[std::size_t(from)] = to, ++changes_; }
  // False for graph outputs (their name is the model's interface).
  bool can_alias(ValueId from) const { return !g_.value(from).is_graph_output; }
  void set_constant(ValueId v, std::shared_ptr<TensorData> data);
  ValueId add_constant(const std::string& name, std::shared_ptr<TensorData> data);
  void rewrite(NodeId n, Node node) { rewritten_[std::size_t(n)] = std::move(node), ++changes_; }
  // The value's data: its own, one set by this edit, or a Constant node's `value`.
  std::shared_ptr<TensorData> constant(ValueId v) const;
  // What `v` resolves to after the aliases recorded so far.
  ValueId resolve(ValueId v) const;
  bool empty() const { return changes_ == 0; }

  Graph commit() const;

 private:
  const Graph& g_;
  std::vector<char> dropped_;
  std::vector<ValueId> alias_;
  std::vector<std::shared_ptr<TensorData>> data_;
  std::vector<std::optional<Node>> rewritten_;
  std::vector<std::pair<std::string, std::shared_ptr<TensorData>>>
      added_;  // ids from value_count()
  int changes_ = 0;
};

}  // namespace fx::transforms
