// SPDX-License-Identifier: Apache-2.0
#include "analysis/fusion_state.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_set>

#include "analysis/estimate_interval.h"
#include "analysis/saving_model.h"

namespace fx {
namespace {

std::string label(const Graph& g, NodeId n) {
  return fmt::format("'{}' ({})", g.node(n).name, g.node(n).op_type);
}

// Name of a merged group: "conv_bn_act" + an automatic merge -> "conv_bn_act+auto_vertical".
std::string join_patterns(std::string a, std::string b, const std::string& dflt) {
  if (a.empty()) a = dflt;
  if (b.empty()) b = dflt;
  if (a.empty() || a == b) return b;
  if (b.empty() || a.find(b) != std::string::npos) return a;
  if (b.find(a) != std::string::npos) return b;
  return a + "+" + b;
}

}  // namespace

FusionState::FusionState(const Graph& g, const CostModel& cost, const FusionOptions& opt,
                         const std::vector<NodeId>& topo)
    : g_(g), cost_(cost), opt_(opt), groups_(g, topo), pattern_(g.node_count()) {}

Verdict FusionState::fusable(NodeId n) const {
  const OpClass& c = cost_.op_class(n);
  if (c.control_flow)
    return {false, NotFusedReason::ControlFlow,
            label(g_, n) +
                " is control flow: a control-flow boundary (fusions are found inside its "
                "subgraphs, never across it)"};
  if (c.kind == OpKind::Opaque) {
    const Node& node = g_.node(n);
    std::string why = !c.known ? (node.domain.empty() || node.domain == "ai.onnx"
                                      ? "an op the analysis does not know"
                                      : "a custom-domain op (" + node.domain + ")")
                               : "opaque (data-dependent shape, randomness or recurrence)";
    return {false, NotFusedReason::OpaqueOp, label(g_, n) + " is " + why};
  }
  if (c.no_kernel)
    return {false, NotFusedReason::OpaqueOp, label(g_, n) + " produces a constant, no kernel"};
  // The fused kernels (oneDNN post-ops, generated code) compute in float32 only, so a
  // group over float16/bfloat16/float64 values would be excluded when built: never
  // propose it, or credit it with launches it cannot remove.
  for (ValueId v : g_.node(n).outputs) {
    if (v == kNoValue) continue;
    const DType d = g_.value(v).dtype;
    if (dtype_is_float(d) && d != DType::Float32)
      return {false, NotFusedReason::DtypeMismatch,
              label(g_, n) + " computes in " + std::string(dtype_name(d)) +
                  ": fused kernels take float32 only"};
  }
  if (!cost_.node(n).known)
    return {false, NotFusedReason::UnknownShape,
            label(g_, n) + ": no estimate, " + cost_.node(n).unknown_reason};
  return {};
}

Cost FusionState::split_cost(const std::vector<std::vector<NodeId>>& kernels,
                             std::vector<KernelTerms>* terms) const {
  Cost sum;
  sum.launches = 0;
  double largest = -1;
  for (const auto& k : kernels) {
    if (std::none_of(k.begin(), k.end(), [&](NodeId n) { return is_kernel(n); })) continue;
    const Cost c = k.size() == 1 ? cost_.node(k[0]) : cost_.group(k);
    add_kernel_cost(sum, c);
    if (terms) terms->push_back(terms_of(c));
    if (c.time_s > largest) largest = c.time_s, sum.kernel_class = c.kernel_class;
  }
  sum.profile = cost_.profile().label();
  return sum;
}

GroupEstimate FusionState::estimate(const std::vector<NodeId>& members,
                                    const std::vector<std::vector<NodeId>>* kernels,
                                    bool anchor_runtime) const {
  Cost f = cost_.group(members), u = cost_.unfused(members);
  const Cost whole = f;
  // Run as several kernels: each writes what the next reads, so the traffic, launches
  // and time are theirs. The saving model sees those kernels as a result records them
  // (each kernel's terms after), which is how calibration fitted it on split groups.
  const bool split =
      kernels && std::count_if(kernels->begin(), kernels->end(), [&](const auto& k) {
                   return std::any_of(k.begin(), k.end(), [&](NodeId n) { return is_kernel(n); });
                 }) > f.launches;
  std::vector<KernelTerms> after;
  if (split) {
    f = split_cost(*kernels, &after);
    // In the order a result lists them (slowest first), which decides the kernel whose
    // class predicts the saving (saving_model.h: the first fused one).
    std::stable_sort(after.begin(), after.end(), [&](const KernelTerms& a, const KernelTerms& b) {
      return kernel_time(cost_.profile(), a) > kernel_time(cost_.profile(), b);
    });
  }
  GroupEstimate e;
  e.known = f.known && u.known;
  e.bytes_before = u.bytes();
  e.bytes_after = f.bytes();
  e.launches_before = u.launches;
  e.launches_after = f.launches;
  e.time_before_s = u.time_s;
  e.time_after_s = f.time_s;
  e.footprint_bytes = f.footprint_bytes;
  e.profile = cost_.profile().label();
  const DeviceProfile& p = cost_.profile();
  if (!e.known || p.saving_model.groups == 0) {
    set_interval(e, p, f.kernel_class);
    return e;
  }
  // The profile carries a calibrated saving model: the group's terms as `fxc profile`
  // records them (the kernels of its members; the fused kernel), predicted with the
  // coefficients of the fused kernel's class when that class kept its fit.
  GroupTermsSample s;
  for (NodeId m : members)
    if (!cost_.op_class(m).no_kernel) s.unfused.push_back(terms_of(cost_.node(m)));
  s.fused = terms_of(whole);
  s.after_kernels = std::move(after);
  s.anchor_runtime = anchor_runtime;
  s.bytes_saved = double(e.bytes_saved());
  s.launches_saved = double(e.launches_saved());
  const SavingPrediction pred = predict_saving(p.saving_model, p, s);
  if (pred.fitted) e.model_saved_s = pred.saved_us * 1e-6;
  e.saving_source = saving_source_label(p.saving_model, pred.fused_class);
  set_interval(e, p, f.kernel_class);
  return e;
}

Verdict FusionState::benefit(const std::vector<NodeId>& members, bool threshold) const {
  if (static_cast<int>(members.size()) > opt_.max_group_nodes)
    return {false, NotFusedReason::GroupTooLarge,
            fmt::format("the group would have {} nodes (limit {})", members.size(),
                        opt_.max_group_nodes)};
  GroupEstimate e = estimate(members);
  if (!e.known) return {false, NotFusedReason::UnknownShape, "a member has no static shape"};
  const auto& p = cost_.profile();
  double limit = opt_.capacity_fraction * double(p.onchip_capacity_bytes);
  if (double(e.footprint_bytes) > limit)
    return {false, NotFusedReason::OverCapacity,
            fmt::format("on-chip footprint {} B > {:.0f}% of {} {} B on {}", e.footprint_bytes,
                        opt_.capacity_fraction * 100, p.capacity_note, p.onchip_capacity_bytes,
                        p.name)};
  if (e.time_saved_s() <= 0) {
    if (e.saving_from_model())
      return {false, NotFusedReason::BelowThreshold,
              fmt::format("no net time saved on {}: {:.3f} us predicted by the {}", p.label(),
                          e.time_saved_s() * 1e6, e.saving_source)};
    return {false, NotFusedReason::BelowThreshold,
            fmt::format("no net time saved on {} ({:.3f} us fused vs {:.3f} us apart)", p.name,
                        e.time_after_s * 1e6, e.time_before_s * 1e6)};
  }
  if (threshold && e.traffic_reduction() < opt_.threshold)
    return {false, NotFusedReason::BelowThreshold,
            fmt::format("traffic reduction {:.1f}% < threshold {:.1f}% ({} of {} B saved)",
                        e.traffic_reduction() * 100, opt_.threshold * 100, e.bytes_saved(),
                        e.bytes_before)};
  return {};
}

Verdict FusionState::rules_vertical(NodeId a, NodeId b) const {
  int anchors_a = 0, anchors_b = 0, red_a = 0, red_b = 0;
  NodeId anchor = kNoNode, red_node_a = kNoNode, red_node_b = kNoNode;
  for (NodeId m : groups_.members(a)) {
    OpKind k = cost_.op_class(m).kind;
    if (k == OpKind::Anchor) ++anchors_a, anchor = m;
    if (k == OpKind::Reduction) ++red_a, red_node_a = m;
  }
  for (NodeId m : groups_.members(b)) {
    OpKind k = cost_.op_class(m).kind;
    if (k == OpKind::Anchor) ++anchors_b, anchor = anchor == kNoNode ? m : anchor;
    if (k == OpKind::Reduction) ++red_b, red_node_b = m;
  }
  // Edges a -> b, found from b's inputs (b's members have few inputs; a's outputs may
  // have thousands of readers).
  for (NodeId c : groups_.members(b))
    for (ValueId v : g_.node(c).inputs) {
      if (v == kNoValue || g_.value(v).producer == kNoNode) continue;
      if (groups_.find(g_.value(v).producer) != a) continue;
      {
        const Node& cn = g_.node(c);
        if (cost_.op_class(c).kind == OpKind::Anchor)
          return {false, NotFusedReason::KindRule,
                  label(g_, c) + " is an anchor: it starts a kernel, nothing fuses into its input"};
        DType dv = g_.value(v).dtype;
        DType dc =
            cn.outputs.empty() || cn.outputs[0] == kNoValue ? dv : g_.value(cn.outputs[0]).dtype;
        if (dv != dc && cn.op_type != "Cast" && dv != DType::Bool)
          return {false, NotFusedReason::DtypeMismatch,
                  fmt::format("'{}' is {} but {} computes in {}", g_.value(v).name, dtype_name(dv),
                              label(g_, c), dtype_name(dc))};
      }
    }
  if (anchors_a + anchors_b > 1)
    return {false, NotFusedReason::KindRule, "the group would hold two anchors (Conv/MatMul/Gemm)"};
  if (red_a > 0 && red_b > 0)
    return {
        false, NotFusedReason::KindRule,
        fmt::format("reduce -> reduce: {} feeds {}", label(g_, red_node_a), label(g_, red_node_b))};
  if (anchors_a > 0)
    for (NodeId m : groups_.members(b))
      if (cost_.op_class(m).kind > OpKind::Broadcast)
        return {false, NotFusedReason::KindRule,
                fmt::format("anchor {} takes only an elementwise epilogue; {} is {}",
                            label(g_, anchor), label(g_, m), op_kind_name(cost_.op_class(m).kind))};
  return {};
}

Verdict FusionState::check(NodeId a, NodeId b, MergeKind kind) const {
  for (NodeId r : {a, b})
    if (groups_.members(r).size() == 1)
      if (Verdict v = fusable(r); !v.ok) return v;
  const std::size_t size = groups_.members(a).size() + groups_.members(b).size();
  if (static_cast<int>(size) > opt_.max_group_nodes)
    return {false, NotFusedReason::GroupTooLarge,
            fmt::format("the group would have {} nodes (limit {})", size, opt_.max_group_nodes)};
  if (kind == MergeKind::Vertical)
    if (Verdict v = rules_vertical(a, b); !v.ok) return v;
  std::vector<NodeId> all = groups_.members(a);
  all.insert(all.end(), groups_.members(b).begin(), groups_.members(b).end());
  switch (groups_.check(a, b, opt_.max_cycle_check_visits)) {
    case MergeCheck::Cycle:
      return {false, NotFusedReason::WouldCreateCycle,
              "a path between them leaves through another kernel and comes back: fusing "
              "would create a cycle"};
    case MergeCheck::TooFar:
      return {false, NotFusedReason::TooFar,
              fmt::format("more than {} kernels lie between them", opt_.max_cycle_check_visits)};
    case MergeCheck::Ok: break;
  }
  return benefit(all);
}

Verdict FusionState::try_merge(NodeId a, NodeId b, MergeKind kind) {
  Verdict v = check(a, b, kind);
  if (!v.ok) return v;
  std::string name = kind == MergeKind::Horizontal
                         ? join_patterns(pattern_[idx(a)], pattern_[idx(b)], "")
                         : join_patterns(pattern_[idx(a)], pattern_[idx(b)], "auto_vertical");
  // Horizontal groups say so, with what their siblings were: "horizontal(matmul_add_act)".
  if (kind == MergeKind::Horizontal && name.rfind("horizontal", 0) != 0)
    name = name.empty() ? "horizontal" : "horizontal(" + name + ")";
  NodeId root = groups_.merge(a, b);
  pattern_[idx(root)] = std::move(name);
  return v;
}

Verdict FusionState::merge_set(const std::vector<NodeId>& nodes, const std::string& pattern,
                               bool threshold) {
  return merge(nodes, pattern, threshold ? Benefit::Threshold : Benefit::NetSaving);
}

Verdict FusionState::merge_fixed(const std::vector<NodeId>& nodes, const std::string& pattern) {
  return merge(nodes, pattern, Benefit::NotAsked);
}

Verdict FusionState::merge(const std::vector<NodeId>& nodes, const std::string& pattern,
                           Benefit b) {
  std::vector<NodeId> roots, all;
  for (NodeId n : nodes) {
    if (Verdict v = fusable(n); !v.ok) return v;
    NodeId r = groups_.find(n);
    if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
  }
  for (NodeId r : roots)
    all.insert(all.end(), groups_.members(r).begin(), groups_.members(r).end());
  std::sort(roots.begin(), roots.end(),
            [&](NodeId x, NodeId y) { return groups_.position(x) < groups_.position(y); });
  // The set must be convex: no path may leave it and come back in.
  const int64_t hi = groups_.position(roots.back());
  std::unordered_set<NodeId> in(roots.begin(), roots.end()), seen;
  std::vector<NodeId> stack;
  for (NodeId r : roots)
    for (NodeId s : groups_.successors(r))
      if (!in.count(s) && groups_.position(s) < hi && seen.insert(s).second) stack.push_back(s);
  while (!stack.empty()) {
    NodeId x = stack.back();
    stack.pop_back();
    if (static_cast<int>(seen.size()) > opt_.max_cycle_check_visits)
      return {false, NotFusedReason::TooFar, "the match spans too much of the graph"};
    for (NodeId s : groups_.successors(x)) {
      if (in.count(s))
        return {false, NotFusedReason::WouldCreateCycle,
                label(g_, x) + " lies on a path that leaves the match and re-enters it"};
      if (groups_.position(s) < hi && seen.insert(s).second) stack.push_back(s);
    }
  }
  if (b != Benefit::NotAsked)
    if (Verdict v = benefit(all, b == Benefit::Threshold); !v.ok) return v;
  NodeId acc = roots[0];
  std::string name = pattern_[idx(acc)];
  for (std::size_t i = 1; i < roots.size(); ++i) {
    name = join_patterns(name, pattern_[idx(roots[i])], "");
    if (groups_.check(acc, roots[i], 0) != MergeCheck::Ok) {
      spdlog::warn("pattern {}: unexpected cycle while contracting a convex set", pattern);
      break;
    }
    acc = groups_.merge(acc, roots[i]);
  }
  pattern_[idx(acc)] = join_patterns(name, pattern, pattern);
  return {};
}

void FusionState::record(NodeId producer, NodeId consumer, const Verdict& v) {
  if (!v.ok) reasons_[key(producer, consumer)] = v;
}

void FusionState::record_inside(const std::vector<NodeId>& nodes, const Verdict& v) {
  for (NodeId p : nodes)
    for (ValueId out : g_.node(p).outputs) {
      if (out == kNoValue) continue;
      for (NodeId c : g_.value(out).consumers)
        if (std::find(nodes.begin(), nodes.end(), c) != nodes.end()) record(p, c, v);
    }
}

const Verdict* FusionState::recorded(NodeId producer, NodeId consumer) const {
  auto it = reasons_.find(key(producer, consumer));
  return it == reasons_.end() ? nullptr : &it->second;
}

}  // namespace fx
