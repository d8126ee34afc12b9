// SPDX-License-Identifier: Apache-2.0
#include "drawing/scope_tree.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "ir/subgraph.h"

namespace fx::drawing {
namespace {

uint64_t mix(uint64_t seed, uint64_t v) {
  // boost::hash_combine's recipe, widened to 64 bits.
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

std::string_view last_component(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Longest common prefix of two scope paths, by whole components.
std::string common_scope(const std::string& a, const std::string& b) {
  std::size_t end = 0, i = 0;
  for (; i < a.size() && i < b.size() && a[i] == b[i]; ++i)
    if (a[i] == '/') end = i;
  if ((i == a.size() || a[i] == '/') && (i == b.size() || b[i] == '/')) end = i;
  return a.substr(0, end);
}

// Exporters leave ops that only transform weights (Identity of a parameter, Constant)
// outside any scope, which would pile them up at the top level with edges fanning
// into every block. Such an op joins the common scope of its consumers instead.
// The same ops are ordered by their first consumer rather than by their place in the
// file (exporters put them all first), so that blocks keep their data-flow order.
struct Placement {
  std::vector<std::string> scopes;
  std::vector<NodeId> order;  // topological, weight-only ops moved next to their users
};

Placement effective_scopes(const Graph& graph, const std::vector<NodeId>& order) {
  std::vector<std::string> scopes(graph.node_count());
  std::vector<int64_t> key(graph.node_count());
  for (std::size_t i = 0; i < order.size(); ++i) key[std::size_t(order[i])] = int64_t(i) * 2 + 1;
  std::vector<char> weight_only(graph.node_count(), 0);
  for (NodeId id : order) {
    const Node& n = graph.node(id);
    bool only = true;
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      const Value& val = graph.value(v);
      if (val.is_constant()) continue;
      if (val.producer != kNoNode && weight_only[std::size_t(val.producer)]) continue;
      only = false;
    }
    weight_only[std::size_t(id)] = only;
    scopes[std::size_t(id)] = n.scope;
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodeId id = *it;
    if (!weight_only[std::size_t(id)]) continue;
    bool first = true;
    std::string common;
    int64_t first_use = INT64_MAX;
    for (ValueId v : graph.node(id).outputs) {
      if (v == kNoValue) continue;
      for (NodeId c : graph.value(v).consumers) {
        common = first ? scopes[std::size_t(c)] : common_scope(common, scopes[std::size_t(c)]);
        first = false;
        first_use = std::min(first_use, key[std::size_t(c)] - 1);  // just before its user
      }
    }
    if (scopes[std::size_t(id)].empty()) scopes[std::size_t(id)] = common;
    if (first_use != INT64_MAX) key[std::size_t(id)] = first_use;
  }
  Placement p{std::move(scopes), order};
  std::stable_sort(p.order.begin(), p.order.end(),
                   [&](NodeId a, NodeId b) { return key[std::size_t(a)] < key[std::size_t(b)]; });
  return p;
}

}  // namespace

bool is_foldable_constant(const Graph& graph, NodeId id) {
  const Node& n = graph.node(id);
  if (n.op_type != "Constant" || !n.domain.empty() || !n.inputs.empty() || n.outputs.size() != 1 ||
      n.outputs[0] == kNoValue)
    return false;
  const Value& v = graph.value(n.outputs[0]);
  // A constant that is a graph output is shown: nothing else would show it.
  for (ValueId out : graph.outputs())
    if (out == n.outputs[0]) return false;
  return !v.consumers.empty();
}

ScopeTree::ScopeTree(const Graph& graph, ScopeTreeOptions options)
    : fold_constants_(options.fold_constants) {
  const std::size_t n = graph.node_count();
  node_group_.assign(n, kRootGroup);
  node_index_.assign(n, -1);
  topo_pos_.assign(n, 0);
  node_sig_.resize(n);
  Placement placement = effective_scopes(graph, graph.topological_order());
  const std::vector<NodeId>& order = placement.order;
  for (std::size_t i = 0; i < order.size(); ++i)
    topo_pos_[static_cast<std::size_t>(order[i])] = static_cast<int32_t>(i);
  std::hash<std::string> hasher;
  for (std::size_t i = 0; i < n; ++i) node_sig_[i] = hasher(graph.nodes()[i].qualified_op());
  control_flow_.resize(n);
  for (std::size_t i = 0; i < n; ++i) control_flow_[i] = has_subgraphs(graph.nodes()[i]);

  add_group(GroupKind::Root, "", "", kNoGroup);
  std::unordered_map<std::string, GroupId> by_path;
  const std::vector<std::string>& scopes = placement.scopes;
  for (NodeId id : order) {
    if (fold_constants_ && is_foldable_constant(graph, id)) {
      node_group_[static_cast<std::size_t>(id)] = kNoGroup;
      continue;
    }
    const std::string& scope = scopes[std::size_t(id)];
    GroupId g = kRootGroup;
    if (!scope.empty()) {
      auto it = by_path.find(scope);
      if (it != by_path.end()) {
        g = it->second;
      } else {
        // Create the missing prefixes, outermost first, so that a parent's id is
        // always smaller than its children's.
        std::size_t pos = 0;
        while (pos != std::string::npos) {
          pos = scope.find('/', pos + 1);
          std::string prefix = scope.substr(0, pos);
          auto [pit, added] = by_path.try_emplace(prefix, kNoGroup);
          if (added)
            pit->second =
                add_group(GroupKind::Scope, std::string(last_component(prefix)), prefix, g);
          g = pit->second;
        }
      }
    }
    node_group_[static_cast<std::size_t>(id)] = g;
    groups_[static_cast<std::size_t>(g)].children.push_back({Item::Node, id});
  }
  for (auto g = static_cast<GroupId>(groups_.size()) - 1; g >= 0; --g) finish_group(g);

  const auto scope_groups = static_cast<GroupId>(groups_.size());
  for (GroupId g = 1; g < scope_groups; ++g) merge_single_child(g);
  for (GroupId g = 0; g < scope_groups; ++g) collapse_repeats(g, std::max(2, options.min_repeats));
  // New groups are appended and visited in turn: a region still too wide is split again.
  const int cap = std::max(2, options.max_children);
  for (GroupId g = 0; g < static_cast<GroupId>(groups_.size()); ++g)
    if (groups_[std::size_t(g)].children.size() > std::size_t(cap) &&
        (!split_by_structure(graph, g, cap) ||
         groups_[std::size_t(g)].children.size() > std::size_t(cap)))
      split_large(graph, g, cap);
  for (GroupId g = 0; g < static_cast<GroupId>(groups_.size()); ++g) reindex(g);
  for (std::size_t i = 0; i < n; ++i)
    depth_ = std::max(depth_, int(ancestors_of(NodeId(i)).size()));
}

GroupId ScopeTree::add_group(GroupKind kind, std::string name, std::string path, GroupId parent) {
  auto id = static_cast<GroupId>(groups_.size());
  Group g;
  g.kind = kind;
  g.name = std::move(name);
  g.path = std::move(path);
  g.parent = parent;
  groups_.push_back(std::move(g));
  if (parent != kNoGroup)
    groups_[static_cast<std::size_t>(parent)].children.push_back({Item::Group, id});
  return id;
}

void ScopeTree::finish_group(GroupId id) {
  Group& g = groups_[static_cast<std::size_t>(id)];
  auto first = [&](const Item& it) {
    return it.kind == Item::Node ? topo_pos_[static_cast<std::size_t>(it.id)]
                                 : groups_[static_cast<std::size_t>(it.id)].first_topo;
  };
  std::stable_sort(g.children.begin(), g.children.end(),
                   [&](const Item& a, const Item& b) { return first(a) < first(b); });
  g.node_count = 0;
  g.signature = 0;
  g.first_topo = g.children.empty() ? 0 : first(g.children.front());
  for (const Item& it : g.children) {
    if (it.kind == Item::Node) {
      g.node_count += 1;
      g.signature = mix(g.signature, node_sig_[static_cast<std::size_t>(it.id)]);
    } else {
      const Group& c = groups_[static_cast<std::size_t>(it.id)];
      g.node_count += c.node_count;
      g.signature = mix(g.signature, c.signature);
    }
  }
}

void ScopeTree::merge_single_child(GroupId id) {
  // Ids grow from parents to children, so a chain is merged from its top; a group
  // already merged away has no parent and is skipped.
  if (groups_[std::size_t(id)].parent == kNoGroup) return;
  while (groups_[std::size_t(id)].children.size() == 1 &&
         groups_[std::size_t(id)].children[0].kind == Item::Group) {
    const GroupId c = groups_[std::size_t(id)].children[0].id;
    Group child = std::move(groups_[std::size_t(c)]);
    groups_[std::size_t(c)] = Group{};  // orphaned: unreachable from the root
    Group& g = groups_[std::size_t(id)];
    g.name += "/" + child.name;
    g.path = child.path;
    g.children = std::move(child.children);
    for (const Item& it : g.children) {
      if (it.kind == Item::Node)
        node_group_[std::size_t(it.id)] = id;
      else
        groups_[std::size_t(it.id)].parent = id;
    }
  }
}

void ScopeTree::collapse_repeats(GroupId id, int min_repeats) {
  // An If's branches are alternatives, not repeated blocks: the group holding a
  // control-flow node and its subgraphs (subgraph_groups.h) keeps them apart even
  // when their ops match.
  for (const Item& it : groups_[static_cast<std::size_t>(id)].children)
    if (it.kind == Item::Node && control_flow_[static_cast<std::size_t>(it.id)]) return;
  std::vector<Item> kids = groups_[static_cast<std::size_t>(id)].children;
  auto sig = [&](const Item& it) { return groups_[static_cast<std::size_t>(it.id)].signature; };
  std::vector<Item> out;
  bool changed = false;
  for (std::size_t i = 0; i < kids.size();) {
    std::size_t j = i + 1;
    if (kids[i].kind == Item::Group)
      while (j < kids.size() && kids[j].kind == Item::Group && sig(kids[j]) == sig(kids[i])) ++j;
    const auto run = static_cast<int>(j - i);
    if (kids[i].kind != Item::Group || run < min_repeats) {
      out.insert(out.end(), kids.begin() + long(i), kids.begin() + long(j));
    } else if (run == static_cast<int>(kids.size())) {
      // The whole group is the run: summarize it on the group itself rather than
      // nesting a box that would hold exactly the same thing.
      groups_[static_cast<std::size_t>(id)].repeat_count = run;
      return;
    } else {
      const std::string name = groups_[static_cast<std::size_t>(kids[i].id)].name + " … " +
                               groups_[static_cast<std::size_t>(kids[j - 1].id)].name;
      GroupId r = add_group(GroupKind::Repeat, name, "", kNoGroup);
      Group& rg = groups_[static_cast<std::size_t>(r)];
      rg.parent = id;
      rg.repeat_count = run;
      rg.children.assign(kids.begin() + long(i), kids.begin() + long(j));
      for (const Item& it : rg.children) groups_[static_cast<std::size_t>(it.id)].parent = r;
      finish_group(r);
      out.push_back({Item::Group, r});
      changed = true;
    }
    i = j;
  }
  if (changed) groups_[static_cast<std::size_t>(id)].children = std::move(out);
}

GroupId ScopeTree::wrap(GroupKind kind, std::string name, GroupId parent, std::vector<Item> items) {
  const GroupId a = add_group(kind, std::move(name), "", kNoGroup);
  Group& ag = groups_[std::size_t(a)];
  ag.parent = parent;
  ag.children = std::move(items);
  for (const Item& it : ag.children) {
    if (it.kind == Item::Node)
      node_group_[std::size_t(it.id)] = a;
    else
      groups_[std::size_t(it.id)].parent = a;
  }
  finish_group(a);
  return a;
}

NodeId ScopeTree::edge_node(const Item& it, bool first) const {
  Item at = it;
  while (at.kind == Item::Group) {
    const auto& kids = groups_[std::size_t(at.id)].children;
    if (kids.empty()) return kNoNode;
    at = first ? kids.front() : kids.back();
  }
  return NodeId(at.id);
}

std::string ScopeTree::ops_label(const Graph& graph, const std::vector<Item>& items) const {
  // The op types below, most frequent first (ties: first seen), three at most.
  std::vector<std::pair<std::string, int>> counts;
  std::vector<Item> stack(items.rbegin(), items.rend());
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    if (it.kind == Item::Group) {
      const auto& kids = groups_[std::size_t(it.id)].children;
      stack.insert(stack.end(), kids.rbegin(), kids.rend());
      continue;
    }
    const std::string& op = graph.node(NodeId(it.id)).op_type;
    auto c =
        std::find_if(counts.begin(), counts.end(), [&](const auto& e) { return e.first == op; });
    if (c == counts.end())
      counts.emplace_back(op, 1);
    else
      ++c->second;
  }
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string label;
  for (std::size_t i = 0; i < counts.size() && i < 3; ++i) {
    if (i) label += " · ";
    label += counts[i].first;
    if (counts[i].second > 1) label += " ×" + std::to_string(counts[i].second);
  }
  if (counts.size() > 3) label += " …";
  return label;
}

bool ScopeTree::split_by_structure(const Graph& graph, GroupId id, int max_children) {
  const std::vector<Item> kids = groups_[std::size_t(id)].children;
  const std::size_t k = kids.size();
  // Which child each node below the group sits in.
  std::vector<int32_t> kid_of(node_group_.size(), -1);
  for (std::size_t i = 0; i < k; ++i) {
    std::vector<Item> stack{kids[i]};
    while (!stack.empty()) {
      const Item it = stack.back();
      stack.pop_back();
      if (it.kind == Item::Node)
        kid_of[std::size_t(it.id)] = int32_t(i);
      else
        for (const Item& c : groups_[std::size_t(it.id)].children) stack.push_back(c);
    }
  }
  // Tensors alive across each boundary between children (boundary b: before child b),
  // counting each tensor once, up to its last consumer in the group.
  std::vector<int> cross(k + 1, 0);
  for (std::size_t n = 0; n < kid_of.size(); ++n) {
    const int32_t from = kid_of[n];
    if (from < 0) continue;
    for (ValueId v : graph.node(NodeId(n)).outputs) {
      if (v == kNoValue) continue;
      int32_t last = from;
      for (NodeId c : graph.value(v).consumers) last = std::max(last, kid_of[std::size_t(c)]);
      if (last > from) ++cross[std::size_t(from) + 1], --cross[std::size_t(last) + 1];
    }
  }
  for (std::size_t b = 1; b <= k; ++b) cross[b] += cross[b - 1];
  // The finest regions: cut wherever at most one tensor flows on (a cut point).
  std::vector<std::size_t> starts{0};
  for (std::size_t b = 1; b < k; ++b)
    if (cross[b] <= 1) starts.push_back(b);
  if (starts.size() < 2) return false;  // no cut point: nothing structural to show
  starts.push_back(k);
  const std::size_t m = starts.size() - 1;
  auto item_sig = [&](const Item& it) {
    return it.kind == Item::Node ? node_sig_[std::size_t(it.id)]
                                 : groups_[std::size_t(it.id)].signature;
  };
  std::vector<uint64_t> sig(m, 0);
  for (std::size_t r = 0; r < m; ++r)
    for (std::size_t i = starts[r]; i < starts[r + 1]; ++i) sig[r] = mix(sig[r], item_sig(kids[i]));

  // Units in order: repeated blocks, and plain regions of about sqrt(k) children (a
  // level of about as many boxes as each box holds). Planned first, as region ranges,
  // and made into groups only when there are several: wrapping moves the children into
  // the new group, so a plan of one unit (a few small regions at the start, then one
  // region without a cut point) must leave the level untouched, or the orphaned wrapper
  // of every child would be split again, and again.
  const std::size_t target =
      std::clamp<std::size_t>(std::size_t(std::sqrt(double(k))), 2, std::size_t(max_children));
  constexpr std::size_t kMaxPeriod = 8;  // regions per repeated block (a layer's sublayers)
  struct Unit {
    std::size_t r0, r1;      // regions [r0, r1)
    std::size_t period = 0;  // > 0: repeated blocks of this many regions
  };
  std::vector<Unit> plan;
  auto plan_plain = [&](std::size_t r0, std::size_t r1) {
    if (r0 != r1) plan.push_back({r0, r1});
  };
  std::size_t plain = 0;  // first region not yet planned
  for (std::size_t r = 0; r < m;) {
    // The shortest period that repeats is the block (a longer one would be several
    // blocks); a block of one child is not worth a box.
    std::size_t best_p = 0, best_c = 0;
    for (std::size_t p = 1; p <= kMaxPeriod && r + 2 * p <= m; ++p) {
      std::size_t c = 1;
      while (r + (c + 1) * p <= m && std::equal(sig.begin() + long(r), sig.begin() + long(r + p),
                                                sig.begin() + long(r + c * p)))
        ++c;
      if (c < 2) continue;
      if (starts[r + p] - starts[r] >= 2) best_p = p, best_c = c;
      break;
    }
    if (best_c == 0) {
      ++r;
      if (starts[r] - starts[plain] >= target) plan_plain(plain, r), plain = r;
      continue;
    }
    plan_plain(plain, r);
    plan.push_back({r, r + best_p * best_c, best_p});
    r += best_p * best_c;
    plain = r;
  }
  plan_plain(plain, m);
  if (plan.size() <= 1) return false;  // one unit is the group again

  auto span = [&](std::size_t r0, std::size_t r1) {
    return std::vector<Item>(kids.begin() + long(starts[r0]), kids.begin() + long(starts[r1]));
  };
  std::vector<Item> out;
  for (const Unit& u : plan) {
    if (u.period == 0) {
      std::vector<Item> items = span(u.r0, u.r1);
      if (items.size() == 1) {
        out.push_back(items.front());
        continue;
      }
      std::string name = ops_label(graph, items);
      out.push_back(
          {Item::Group, wrap(GroupKind::Artificial, std::move(name), id, std::move(items))});
      continue;
    }
    std::vector<Item> blocks;
    for (std::size_t r = u.r0; r < u.r1; r += u.period) {
      std::vector<Item> items = span(r, r + u.period);
      std::string name = ops_label(graph, items);
      blocks.push_back(
          {Item::Group, wrap(GroupKind::Artificial, std::move(name), kNoGroup, std::move(items))});
    }
    const auto count = int32_t(blocks.size());
    const std::string name = "blocks of " + groups_[std::size_t(blocks.front().id)].name;
    const GroupId rep = wrap(GroupKind::Repeat, name, id, std::move(blocks));
    groups_[std::size_t(rep)].repeat_count = count;
    out.push_back({Item::Group, rep});
  }
  groups_[std::size_t(id)].children = std::move(out);
  return true;
}

void ScopeTree::split_large(const Graph& graph, GroupId id, int max_children) {
  while (groups_[static_cast<std::size_t>(id)].children.size() > std::size_t(max_children)) {
    std::vector<Item> kids = std::move(groups_[static_cast<std::size_t>(id)].children);
    const std::size_t parts =
        (kids.size() + std::size_t(max_children) - 1) / std::size_t(max_children);
    const std::size_t per = (kids.size() + parts - 1) / parts;  // even chunks
    std::vector<Item> out;
    for (std::size_t p = 0; p < parts; ++p) {
      const std::size_t lo = p * per, hi = std::min(kids.size(), lo + per);
      std::vector<Item> items(kids.begin() + long(lo), kids.begin() + long(hi));
      // Named by where it starts and ends in the data flow, never "part 2/3".
      const NodeId first = edge_node(items.front(), true), last = edge_node(items.back(), false);
      std::string name = first == kNoNode ? std::string("ops")
                                          : graph.node(first).name + " … " + graph.node(last).name;
      out.push_back(
          {Item::Group, wrap(GroupKind::Artificial, std::move(name), id, std::move(items))});
    }
    groups_[static_cast<std::size_t>(id)].children = std::move(out);
  }
}

void ScopeTree::reindex(GroupId id) {
  const Group& g = groups_[static_cast<std::size_t>(id)];
  for (std::size_t i = 0; i < g.children.size(); ++i) {
    const Item& it = g.children[i];
    if (it.kind == Item::Node)
      node_index_[static_cast<std::size_t>(it.id)] = static_cast<int32_t>(i);
    else
      groups_[static_cast<std::size_t>(it.id)].index_in_parent = static_cast<int32_t>(i);
  }
}

int32_t ScopeTree::child_slot(NodeId n, GroupId g) const {
  GroupId at = group_of(n);
  if (at == g) return index_in_group(n);
  while (at != kNoGroup) {
    const Group& grp = group(at);
    if (grp.parent == g) return grp.index_in_parent;
    at = grp.parent;
  }
  return -1;
}

bool ScopeTree::contains(GroupId ancestor, GroupId g) const {
  for (GroupId at = g; at != kNoGroup; at = group(at).parent)
    if (at == ancestor) return true;
  return false;
}

std::vector<GroupId> ScopeTree::ancestors_of(NodeId n) const {
  std::vector<GroupId> chain;
  for (GroupId at = group_of(n); at != kRootGroup && at != kNoGroup; at = group(at).parent)
    chain.push_back(at);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::string ScopeTree::summary(GroupId id) const {
  const Group& g = group(id);
  std::string s;
  if (g.repeat_count > 1)  // from the counts: a wide repeat's children may be regions
    s = "×" + std::to_string(g.repeat_count) + " " + std::to_string(g.node_count / g.repeat_count) +
        "-op blocks · ";
  return s + std::to_string(g.node_count) + " ops";
}

}  // namespace fx::drawing
