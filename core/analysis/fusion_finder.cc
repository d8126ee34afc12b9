// SPDX-License-Identifier: Apache-2.0
// The finder runs the levels in order over one FusionState:
//   level 1: seed patterns, node by node in topological order, in the explicit pattern
//            order of seed_patterns(); a match is contracted all-or-nothing.
//   level 2: greedy vertical merging. Every producer->consumer edge between groups is
//            scored by the bytes its contraction saves; a max-heap pops the best (ties:
//            the closest pair in program order). Scores go stale when a group grows, so
//            entries carry the versions of both groups and are re-scored on pop. Rounds
//            repeat until one merges nothing (at most 10), like TorchInductor.
//   level 3: horizontal merging of same-type consumers of a shared value.
// Then every adjacent pair left apart gets its recorded reason.
#include "analysis/fusion_finder.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <queue>

#include "analysis/estimate_interval.h"
#include "analysis/fusion_pattern.h"
#include "analysis/fusion_state.h"
#include "analysis/lone_kernels.h"
#include "ir/subgraph.h"
#include "util/error.h"
#include "util/stopwatch.h"

namespace fx {
namespace {

// Sorted and deduplicated: O(k log k) even for a value with thousands of consumers.
std::vector<NodeId> distinct_consumers(const Graph& g, ValueId v) {
  std::vector<NodeId> out = g.value(v).consumers;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void apply_patterns(const Graph& g, FusionState& st, const CostModel& cost,
                    const FusionOptions& opt, const std::vector<NodeId>& topo) {
  std::vector<OpClass> classes(g.node_count());
  for (std::size_t i = 0; i < classes.size(); ++i) classes[i] = cost.op_class(NodeId(i));
  std::vector<char> claimed(g.node_count(), 0);
  PatternContext ctx(g, classes, claimed);
  auto patterns = seed_patterns();
  std::erase_if(patterns, [&](const auto& p) {
    return std::find(opt.disabled_patterns.begin(), opt.disabled_patterns.end(), p->name()) !=
           opt.disabled_patterns.end();
  });
  // Pattern-major, like ORT's ordered transformer list: an earlier pattern sees the whole
  // graph before a later one (MatMul+Add+GELU claims its MatMul before LayerNorm joins it).
  for (const auto& p : patterns) {
    const auto targets = p->target_ops();
    for (NodeId n : topo) {
      const Node& node = g.node(n);
      if (claimed[std::size_t(n)] || !node.domain.empty() || node.outputs.empty() ||
          node.outputs[0] == kNoValue)
        continue;
      if (std::find(targets.begin(), targets.end(), g.node(n).op_type) == targets.end()) continue;
      if (!p->condition(ctx, n)) continue;
      auto m = p->match(ctx, n);
      if (!m) continue;
      if (std::any_of(m->nodes.begin(), m->nodes.end(),
                      [&](NodeId x) { return claimed[std::size_t(x)] != 0; }))
        continue;
      if (opt.opt_level == 1 && !m->escaping.empty()) {
        // ORT's guard: an intermediate used outside the pattern would have to be
        // materialized, which level 1 does not do.
        for (ValueId v : m->escaping) {
          NodeId prod = g.value(v).producer;
          std::string users;
          for (NodeId c : distinct_consumers(g, v))
            if (std::find(m->nodes.begin(), m->nodes.end(), c) == m->nodes.end())
              users += (users.empty() ? "'" : ", '") + g.node(c).name + "'";
          if (g.value(v).is_graph_output)
            users += users.empty() ? "the graph output" : " and the graph output";
          Verdict why{false, NotFusedReason::OutsideConsumer,
                      fmt::format("{}: '{}' is also used by {} (level 1 keeps no intermediate)",
                                  p->name(), g.value(v).name, users)};
          for (NodeId c : distinct_consumers(g, v))
            if (std::find(m->nodes.begin(), m->nodes.end(), c) != m->nodes.end())
              st.record(prod, c, why);
        }
        continue;
      }
      std::vector<NodeId> nodes = m->nodes;
      const std::string name = m->pattern.empty() ? std::string(p->name()) : m->pattern;
      Verdict v;
      if (m->join != kNoNode) {
        auto with = nodes;
        with.push_back(m->join);
        v = st.merge_set(with, name, !p->is_rewrite());
        if (!v.ok) {
          for (NodeId x : nodes) st.record(x, m->join, v);
          v = st.merge_set(nodes, name, !p->is_rewrite());
        }
      } else {
        v = st.merge_set(nodes, name, !p->is_rewrite());
      }
      if (!v.ok) {
        st.record_inside(nodes, v);
        continue;
      }
      for (NodeId x : st.groups().members(st.groups().find(n))) claimed[std::size_t(x)] = 1;
    }
  }
}

// Why a group found is not a fusion: its kernels (FusionOptions::kernels_of) run each
// member that launches one on its own.
std::string not_one_kernel_text(const Graph& g, const std::vector<NodeId>& members,
                                const GroupLaunches& run) {
  std::string ops;
  for (NodeId n : members) ops += (ops.empty() ? "" : "+") + g.node(n).op_type;
  return fmt::format(
      "{} would run as {} kernels once generated, one per member{}: fusing removes no "
      "launch",
      ops, run.kernels.size(), run.why_split.empty() ? "" : " (" + run.why_split + ")");
}

struct Candidate {
  int64_t score;
  int64_t distance;
  NodeId producer, consumer;
  uint32_t version_a, version_b;
  bool operator<(const Candidate& o) const {  // max-heap: more bytes, then closer
    if (score != o.score) return score < o.score;
    return distance > o.distance;
  }
};

void vertical_fusion(const Graph& g, FusionState& st, const std::vector<NodeId>& topo) {
  auto& gg = st.groups();
  std::vector<int64_t> order(g.node_count());
  for (std::size_t i = 0; i < topo.size(); ++i) order[std::size_t(topo[i])] = int64_t(i);
  std::vector<uint32_t> version(g.node_count(), 0);
  std::vector<char> ok(g.node_count());
  for (std::size_t i = 0; i < ok.size(); ++i) ok[i] = st.fusable(NodeId(i)).ok;
  const CostModel& cost = st.cost();
  // Fused traffic per group root, cached until the group changes (-1: not computed).
  std::vector<int64_t> group_bytes(g.node_count(), -1);
  auto bytes_of = [&](NodeId root) {
    int64_t& b = group_bytes[std::size_t(root)];
    if (b < 0) b = cost.group(gg.members(root)).bytes();
    return b;
  };
  std::vector<NodeId> all;
  auto score = [&](NodeId a, NodeId b) {
    all = gg.members(a);
    all.insert(all.end(), gg.members(b).begin(), gg.members(b).end());
    return bytes_of(a) + bytes_of(b) - cost.group(all).bytes();
  };
  // A pair's verdict depends only on its two groups (merges elsewhere can only add paths,
  // never remove a cycle), so after the first round only pairs touching a group that grew
  // in the previous round are tried again.
  std::vector<int> grew_in(g.node_count(), -1);
  for (int round = 0; round < 10; ++round) {
    std::priority_queue<Candidate> heap;
    for (NodeId p : topo) {
      if (!ok[std::size_t(p)]) continue;
      for (ValueId v : g.node(p).outputs) {
        if (v == kNoValue) continue;
        for (NodeId c : distinct_consumers(g, v)) {
          if (!ok[std::size_t(c)]) continue;
          NodeId a = gg.find(p), b = gg.find(c);
          if (a == b) continue;
          if (round > 0 && grew_in[std::size_t(a)] != round - 1 &&
              grew_in[std::size_t(b)] != round - 1)
            continue;
          heap.push({score(a, b), order[std::size_t(c)] - order[std::size_t(p)], p, c,
                     version[std::size_t(a)], version[std::size_t(b)]});
        }
      }
    }
    int merged = 0;
    while (!heap.empty()) {
      Candidate top = heap.top();
      heap.pop();
      NodeId a = gg.find(top.producer), b = gg.find(top.consumer);
      if (a == b) continue;
      if (top.version_a != version[std::size_t(a)] || top.version_b != version[std::size_t(b)]) {
        top.score = score(a, b);
        top.version_a = version[std::size_t(a)];
        top.version_b = version[std::size_t(b)];
        heap.push(top);
        continue;
      }
      Verdict v = st.try_merge(a, b, MergeKind::Vertical);
      if (!v.ok) {
        st.record(top.producer, top.consumer, v);
        continue;
      }
      ++merged;
      ++version[std::size_t(gg.find(a))];
      group_bytes[std::size_t(gg.find(a))] = -1;
      grew_in[std::size_t(gg.find(a))] = round;
    }
    if (merged == 0) break;
  }
}

void horizontal_fusion(const Graph& g, FusionState& st) {
  auto& gg = st.groups();
  for (std::size_t vi = 0; vi < g.value_count(); ++vi) {
    const Value& val = g.value(ValueId(vi));
    if (val.is_constant() || val.consumers.size() < 2) continue;
    // One running group per op type among the readers: linear in the fan-out. A full
    // group (max_group_nodes) is closed and the next reader starts a new one.
    std::vector<std::pair<std::string_view, NodeId>> open;
    for (NodeId u : distinct_consumers(g, ValueId(vi))) {
      if (!st.fusable(u).ok) continue;
      std::string_view op = g.node(u).op_type;
      auto it =
          std::find_if(open.begin(), open.end(), [&](const auto& e) { return e.first == op; });
      if (it == open.end()) {
        open.emplace_back(op, u);
        continue;
      }
      NodeId a = gg.find(it->second), b = gg.find(u);
      if (a == b) continue;
      Verdict v = st.try_merge(a, b, MergeKind::Horizontal);
      if (!v.ok && v.reason == NotFusedReason::GroupTooLarge) it->second = u;
    }
  }
}

// The groups a plan fixes, on this graph: those whose nodes it has all (a body of
// control flow has only its own), each merged as the plan says.
void merge_fixed_groups(const Graph& g, FusionState& st, const std::vector<FixedGroup>& groups) {
  for (const auto& fg : groups) {
    std::vector<NodeId> ids;
    for (const auto& name : fg.nodes)
      if (NodeId n = g.find_node(name); n != kNoNode) ids.push_back(n);
    if (ids.size() < 2 || ids.size() != fg.nodes.size()) continue;
    if (Verdict v = st.merge_fixed(ids, fg.pattern); !v.ok)
      spdlog::warn("plan group {}: {}", group_id_for(fg.nodes), v.text);
  }
}

}  // namespace

FusionFinder::FusionFinder(const Graph& g, const DeviceProfile& profile, FusionOptions options)
    : g_(g), cost_(g, profile), opt_(std::move(options)) {}

AnalysisResult FusionFinder::run() {
  if (opt_.opt_level < 0 || opt_.opt_level > 3)
    throw Error(fmt::format("opt level {} is not one of 0, 1, 2, 3", opt_.opt_level));
  Stopwatch sw;
  const auto topo = g_.topological_order();
  FusionState st(g_, cost_, opt_, topo);
  if (opt_.fixed_groups) {
    merge_fixed_groups(g_, st, *opt_.fixed_groups);
  } else {
    if (opt_.opt_level >= 1) apply_patterns(g_, st, cost_, opt_, topo);
    if (opt_.opt_level >= 2) vertical_fusion(g_, st, topo);
    if (opt_.opt_level >= 3) horizontal_fusion(g_, st);
  }

  AnalysisResult r;
  r.device = cost_.profile().label();
  r.device_source = cost_.profile().source;
  r.opt_level = opt_.opt_level;
  r.threshold = opt_.threshold;
  for (std::size_t i = 0; i < g_.node_count(); ++i) {
    const Cost& c = cost_.node(NodeId(i));
    r.kernels_before += c.launches;
    if (!c.known) {
      ++r.unknown_cost_nodes;
      continue;
    }
    r.bytes_before += c.bytes();
    r.time_before_s += c.time_s;
  }
  std::vector<int64_t> order(g_.node_count());
  for (std::size_t i = 0; i < topo.size(); ++i) order[std::size_t(topo[i])] = int64_t(i);
  const auto& gg = st.groups();
  // Per group root: why the group found is not one (kernels_of runs each member alone).
  std::vector<std::string> not_one_kernel(g_.node_count());
  int64_t launches_saved = 0, bytes_saved = 0;
  double time_saved = 0;
  for (std::size_t i = 0; i < g_.node_count(); ++i) {
    NodeId root = NodeId(i);
    if (gg.find(root) != root || gg.members(root).size() < 2) continue;
    FusionGroup fg;
    fg.node_ids = gg.members(root);
    std::sort(fg.node_ids.begin(), fg.node_ids.end(),
              [&](NodeId x, NodeId y) { return order[std::size_t(x)] < order[std::size_t(y)]; });
    for (NodeId n : fg.node_ids) {
      fg.nodes.push_back(g_.node(n).name);
      fg.ops.push_back(g_.node(n).op_type);
    }
    fg.id = group_id_for(fg.nodes);
    fg.pattern = st.pattern(root);
    // As the generated code runs the group, when the caller says: its kernels' launches,
    // bytes and time. A group none of whose kernels runs two members is no fusion.
    if (opt_.kernels_of) {
      const GroupLaunches run = opt_.kernels_of(g_, fg.node_ids);
      fg.estimate = st.estimate(fg.node_ids, &run.kernels, run.anchor_runtime);
      if (fg.estimate.launches_saved() <= 0) {
        not_one_kernel[std::size_t(root)] = not_one_kernel_text(g_, fg.node_ids, run);
        continue;
      }
    } else {
      fg.estimate = st.estimate(fg.node_ids);
    }
    launches_saved += fg.estimate.launches_saved();
    bytes_saved += fg.estimate.bytes_saved();
    time_saved += fg.estimate.time_saved_s();
    r.groups.push_back(std::move(fg));
  }
  std::sort(r.groups.begin(), r.groups.end(), [&](const auto& x, const auto& y) {
    return order[std::size_t(x.node_ids[0])] < order[std::size_t(y.node_ids[0])];
  });
  {
    std::vector<KernelClass> group_classes;
    for (const auto& fg : r.groups)
      if (auto c = kernel_class_from_name(fg.estimate.fused_class)) group_classes.push_back(*c);
    std::vector<std::string> ops;
    for (std::size_t i = 0; i < g_.node_count(); ++i)
      if (!cost_.op_class(NodeId(i)).no_kernel) ops.push_back(g_.node(NodeId(i)).op_type);
    UnmeasuredMix mix = unmeasured_mix(group_classes, ops, cost_.profile());
    r.unmeasured_classes = std::move(mix.classes);
    r.unmeasured_ops = std::move(mix.ops);
    r.datasheet = cost_.profile().datasheet();
  }
  r.kernels_after = r.kernels_before - launches_saved;
  r.bytes_after = r.bytes_before - bytes_saved;
  // The kernels outside the groups run in the fused program too, each as its kind says
  // (lone_kernels.h) at the profile's measured rate or share (device_profile.h:
  // lone_kernel_saving). Convs in an NHWC chain and merged steps change in a program
  // without groups too; the other kinds only beside fused groups.
  if (cost_.profile().lone_kernel_saving.results > 0) {
    std::vector<char> grouped(g_.node_count(), 0);
    for (const auto& fg : r.groups)
      for (NodeId n : fg.node_ids) grouped[std::size_t(n)] = 1;
    const std::vector<LoneKind> kinds = lone_kinds(g_, cost_, grouped);
    for (std::size_t i = 0; i < g_.node_count(); ++i) {
      const double s = lone_saving_s(cost_.profile(), kinds[i], cost_.node(NodeId(i)));
      if (s == 0) continue;
      r.node_lone_saving_s[g_.node(NodeId(i)).name] = s;
      if (grouped[i] || (r.groups.empty() && !changed_without_groups(cost_.profile(), kinds[i])))
        continue;
      r.lone_saved_s += s;
      r.lone_saved_by_kind_s[lone_kind_name(kinds[i])] += s;
    }
  }
  r.time_after_s = r.time_before_s - time_saved - r.lone_saved_s;

  for (NodeId p : topo) {
    if (!st.is_kernel(p)) continue;
    for (ValueId v : g_.node(p).outputs) {
      if (v == kNoValue) continue;
      for (NodeId c : distinct_consumers(g_, v)) {
        if (!st.is_kernel(c)) continue;
        const std::string& apart = not_one_kernel[std::size_t(gg.find(p))];
        if (gg.find(p) == gg.find(c) && apart.empty()) continue;
        Verdict why;
        if (gg.find(p) == gg.find(c)) {
          why = {false, NotFusedReason::NotOneKernel, apart};
        } else if (const Verdict* rec = st.recorded(p, c)) {
          why = *rec;
        } else if (Verdict f = st.fusable(p); !f.ok) {
          why = f;
        } else if (Verdict f2 = st.fusable(c); !f2.ok) {
          why = f2;
        } else if (opt_.opt_level == 0) {
          why = {false, NotFusedReason::OptLevel, "fusion is off at opt level 0"};
        } else if (opt_.opt_level == 1) {
          why = {false, NotFusedReason::OptLevel,
                 "no seed pattern covers this pair (automatic fusion starts at level 2)"};
        } else {
          why = st.check(gg.find(p), gg.find(c), MergeKind::Vertical);
          if (why.ok)
            why = {false, NotFusedReason::BelowThreshold, "not chosen by the greedy search"};
        }
        r.not_fused.push_back({g_.node(p).name, g_.node(c).name, p, c, why.reason, why.text});
      }
    }
  }
  // Inside each subgraph, on its own: its groups never contain the outer nodes, and
  // kernels_of is asked with the body's graph.
  for (NodeId n : topo)
    for (const auto& [attr, sub] : subgraphs_of(g_.node(n)))
      r.subgraphs.push_back(
          {g_.node(n).name, attr, FusionFinder(*sub, cost_.profile(), opt_).run()});
  r.analysis_ms = sw.elapsed_ms();
  return r;
}

AnalysisResult analyze_fusion(const Graph& g, const DeviceProfile& profile,
                              const FusionOptions& options) {
  return FusionFinder(g, profile, options).run();
}

std::string group_id_for(const std::vector<std::string>& node_names) {
  std::vector<std::string> sorted = node_names;
  std::sort(sorted.begin(), sorted.end());
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (const auto& s : sorted) {
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ULL;
    h = (h ^ 0x0a) * 1099511628211ULL;
  }
  return fmt::format("fg-{:08x}", uint32_t(h ^ (h >> 32)));
}

namespace {
// True when `name` is a node of the graph `r` analysed: one of its groups or pairs.
bool mentions(const AnalysisResult& r, const std::string& name) {
  for (const auto& gr : r.groups)
    if (std::find(gr.nodes.begin(), gr.nodes.end(), name) != gr.nodes.end()) return true;
  for (const auto& nf : r.not_fused)
    if (nf.producer == name || nf.consumer == name) return true;
  return false;
}

// The subgraph analysis (searched depth-first) whose graph holds `name`; null when
// none does.
const SubgraphAnalysis* subgraph_holding(const AnalysisResult& r, const std::string& name) {
  for (const auto& sa : r.subgraphs) {
    if (mentions(sa.result, name)) return &sa;
    if (subgraph_holding(sa.result, name)) return &sa;
  }
  return nullptr;
}
}  // namespace

std::string explain_pair(const AnalysisResult& r, const std::string& a, const std::string& b) {
  // Nodes of subgraphs: the same question inside the subgraph, or the boundary.
  const SubgraphAnalysis* sa = mentions(r, a) ? nullptr : subgraph_holding(r, a);
  const SubgraphAnalysis* sb = mentions(r, b) ? nullptr : subgraph_holding(r, b);
  if (sa && sa == sb) return explain_pair(sa->result, a, b);
  if (sa || sb) {
    const SubgraphAnalysis* s = sa ? sa : sb;
    return fmt::format(
        "'{}' and '{}' are on different sides of a control-flow boundary ({} of '{}'): "
        "never fused",
        a, b, s->attribute, s->node);
  }
  for (const auto& gr : r.groups) {
    bool ha = std::find(gr.nodes.begin(), gr.nodes.end(), a) != gr.nodes.end();
    bool hb = std::find(gr.nodes.begin(), gr.nodes.end(), b) != gr.nodes.end();
    if (ha && hb)
      return fmt::format("'{}' and '{}' are fused together in {} ({})", a, b, gr.id, gr.pattern);
  }
  for (const auto& nf : r.not_fused)
    if ((nf.producer == a && nf.consumer == b) || (nf.producer == b && nf.consumer == a))
      return fmt::format("'{}' -> '{}' not fused: {}: {}", nf.producer, nf.consumer,
                         not_fused_reason_name(nf.reason), nf.text);
  return fmt::format(
      "'{}' and '{}' are not adjacent (neither consumes the other's output), or "
      "one of them is not in the model",
      a, b);
}

std::string_view not_fused_reason_name(NotFusedReason r) {
  switch (r) {
    case NotFusedReason::OpaqueOp: return "opaque_op";
    case NotFusedReason::ControlFlow: return "control_flow";
    case NotFusedReason::WouldCreateCycle: return "would_create_cycle";
    case NotFusedReason::OverCapacity: return "over_capacity";
    case NotFusedReason::BelowThreshold: return "below_threshold";
    case NotFusedReason::DtypeMismatch: return "dtype_mismatch";
    case NotFusedReason::OutsideConsumer: return "outside_consumer";
    case NotFusedReason::UnknownShape: return "unknown_shape";
    case NotFusedReason::KindRule: return "kind_rule";
    case NotFusedReason::GroupTooLarge: return "group_too_large";
    case NotFusedReason::TooFar: return "too_far";
    case NotFusedReason::OptLevel: return "opt_level";
    case NotFusedReason::NotOneKernel: return "not_one_kernel";
  }
  return "opt_level";
}

}  // namespace fx
