// SPDX-License-Identifier: Apache-2.0
#pragma once
// The hierarchy the graph view shows: groups of nodes by name scope.
//
//   scope groups       one per path prefix of Node::scope ("layer1", "layer1/0"); a
//                      group whose only child is a group is merged with it
//                      ("layer1/0"), so that no click opens a box holding one box
//   repeat groups      a run of >= min_repeats consecutive sibling groups with the same
//                      op signature ("h.0" … "h.11") becomes one box "×12 h.N"; when the
//                      run is all of its parent, the parent itself carries the summary
//   folded constants   a Constant op (no inputs) is no box of its own by default: the
//                      node that consumes it lists it among its constant inputs, as
//                      Netron does with weights (box_lines); it belongs to no group
//                      (group_of is kNoGroup) and is never on screen. fold_constants
//                      false draws them as nodes ("View > Constants as Nodes")
//   structure groups   a level with more than max_children children (a model exported
//                      without scopes, most often) is grouped by its structure: it is
//                      cut where a single tensor crosses (cut points), runs of regions
//                      with the same ops become repeat groups ("×12 blocks"), the rest
//                      are regions between cut points; each is named by the ops it holds
//                      ("Conv ×3 · Relu ×3 · Add"). A stretch without any cut point is
//                      split into consecutive chunks named by their first and last node.
//                      No level is ever laid out with more than max_children boxes
//
// Children of every group are kept in topological order of their first node, so
// chunks and runs follow the data flow. Qt-free; built once per loaded model.

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fx::drawing {

using GroupId = int32_t;
inline constexpr GroupId kRootGroup = 0;
inline constexpr GroupId kNoGroup = -1;

enum class GroupKind : uint8_t { Root, Scope, Repeat, Artificial };

// A child of a group: an op node or a sub-group.
struct Item {
  enum Kind : uint8_t { Node, Group } kind = Node;
  int32_t id = -1;  // NodeId or GroupId
  bool operator==(const Item&) const = default;
};

struct Group {
  GroupKind kind = GroupKind::Scope;
  std::string name;  // what the box says: "layer1", "h.0 … h.11", "part 2/3"
  std::string path;  // full scope path; "" for root, repeat and artificial groups
  GroupId parent = kNoGroup;
  int32_t index_in_parent = -1;
  std::vector<Item> children;  // in topological order of their first node
  int32_t node_count = 0;      // ops anywhere below
  int32_t first_topo = 0;      // smallest topological position below
  int32_t repeat_count = 0;    // > 1: the children are this many identical blocks
  uint64_t signature = 0;      // hash of the op types below, in order
};

struct ScopeTreeOptions {
  // The most boxes one level shows flat: a scope-less model up to this size is drawn
  // as one flat graph, as Netron draws it. Set from the measured layout and paint time
  // of flat graphs with the layered layout (docs/benchmarks.md, "Flat graphs"); Model
  // Explorer caps a level at 400-1,000.
  int max_children = 5000;
  int min_repeats = 2;  // shortest run of identical blocks that is summarized
  bool fold_constants = true;
};

// A Constant op with no inputs that something consumes: folded into its consumers.
bool is_foldable_constant(const Graph& graph, NodeId n);

class ScopeTree {
 public:
  explicit ScopeTree(const Graph& graph, ScopeTreeOptions options = {});

  const Group& group(GroupId id) const { return groups_[static_cast<std::size_t>(id)]; }
  std::size_t group_count() const { return groups_.size(); }
  const std::vector<Group>& groups() const { return groups_; }
  // The group that holds the node as a direct child; kNoGroup for a folded constant.
  GroupId group_of(NodeId n) const { return node_group_[static_cast<std::size_t>(n)]; }
  bool folded(NodeId n) const { return group_of(n) == kNoGroup; }
  bool constants_folded() const { return fold_constants_; }
  int32_t index_in_group(NodeId n) const { return node_index_[static_cast<std::size_t>(n)]; }
  // Position in a topological order where weight-only ops sit just before their first user.
  int32_t topo_position(NodeId n) const { return topo_pos_[static_cast<std::size_t>(n)]; }

  // Index of the child of `g` that contains node n, or -1 when n is not below g.
  int32_t child_slot(NodeId n, GroupId g) const;
  // True when `ancestor` is g itself or one of its ancestors.
  bool contains(GroupId ancestor, GroupId g) const;
  // Groups from the root (exclusive) down to the group holding n (inclusive).
  std::vector<GroupId> ancestors_of(NodeId n) const;
  // One-line summary of a group for its collapsed box: "×12 blocks · 396 ops".
  std::string summary(GroupId g) const;
  int depth() const { return depth_; }

 private:
  GroupId add_group(GroupKind kind, std::string name, std::string path, GroupId parent);
  void finish_group(GroupId g);        // sorts children, computes counts and signature
  void merge_single_child(GroupId g);  // "layer1" holding only "0" becomes "layer1/0"
  void collapse_repeats(GroupId g, int min_repeats);
  // Groups an over-wide level by structure (see the header); false when it found no
  // structure to use (then split_large chunks it).
  bool split_by_structure(const Graph& graph, GroupId g, int max_children);
  void split_large(const Graph& graph, GroupId g, int max_children);
  GroupId wrap(GroupKind kind, std::string name, GroupId parent, std::vector<Item> items);
  std::string ops_label(const Graph& graph, const std::vector<Item>& items) const;
  NodeId edge_node(const Item& it, bool first) const;  // first / last node below an item
  void reindex(GroupId g);  // index_in_parent / node_index_ of g's children

  std::vector<Group> groups_;
  std::vector<GroupId> node_group_;
  std::vector<int32_t> node_index_;
  std::vector<int32_t> topo_pos_;
  std::vector<uint64_t> node_sig_;
  std::vector<bool> control_flow_;  // NodeId -> the node has subgraphs (If/Loop/Scan)
  int depth_ = 0;
  bool fold_constants_ = true;
};

}  // namespace fx::drawing
