// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal to the finder: the groups being built, the legality and benefit rules for
// contracting two groups, and the reasons recorded for adjacent pairs left apart.
// Not part of the public API (the GUI uses AnalysisResult).

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/analysis_result.h"
#include "analysis/cost_model.h"
#include "analysis/fusion_finder.h"
#include "analysis/group_graph.h"

namespace fx {

enum class MergeKind { Pattern, Vertical, Horizontal };

struct Verdict {
  bool ok = true;
  NotFusedReason reason = NotFusedReason::OptLevel;
  std::string text;
};

class FusionState {
 public:
  FusionState(const Graph& g, const CostModel& cost, const FusionOptions& opt,
              const std::vector<NodeId>& topo);

  const CostModel& cost() const { return cost_; }
  GroupGraph& groups() { return groups_; }
  const GroupGraph& groups() const { return groups_; }
  // Whether a node can take part in fusion at all (a kernel, not opaque, cost known).
  Verdict fusable(NodeId n) const;
  bool is_kernel(NodeId n) const { return !cost_.op_class(n).no_kernel; }

  // Checks the rules for contracting groups a and b (roots); for Vertical, a produces
  // into b. Does not merge.
  Verdict check(NodeId a, NodeId b, MergeKind kind) const;
  // Checks and merges a whole node set (a pattern match); all-or-nothing.
  // `threshold` false: only a net time saving is required (graph rewrites).
  Verdict merge_set(const std::vector<NodeId>& nodes, const std::string& pattern,
                    bool threshold = true);
  // Merges a set a plan fixes (FusionOptions::fixed_groups): it must be convex, but its
  // benefit is not asked, since the plan was made (or measured) on another profile.
  Verdict merge_fixed(const std::vector<NodeId>& nodes, const std::string& pattern);
  // Checks, then merges; returns the verdict.
  Verdict try_merge(NodeId a, NodeId b, MergeKind kind);

  const std::string& pattern(NodeId root) const { return pattern_[idx(root)]; }
  void record(NodeId producer, NodeId consumer, const Verdict& v);
  // Records v on every producer->consumer edge between members of `nodes`.
  void record_inside(const std::vector<NodeId>& nodes, const Verdict& v);
  const Verdict* recorded(NodeId producer, NodeId consumer) const;

  // `kernels`: the kernels the group's generated code runs (FusionOptions::kernels_of);
  // when that is more than one launch, the group after fusion is those kernels (their
  // launches, traffic and time summed) in place of the cost model's one fused kernel, and
  // the saving model predicts from those kernels as calibration saw them (the result's
  // kernels after: GroupTermsSample::after_kernels). Null: one kernel. `anchor_runtime`:
  // the kernel runs the anchor's runtime kernel (GroupLaunches::anchor_runtime).
  GroupEstimate estimate(const std::vector<NodeId>& members,
                         const std::vector<std::vector<NodeId>>* kernels = nullptr,
                         bool anchor_runtime = false) const;

 private:
  static std::size_t idx(NodeId n) { return static_cast<std::size_t>(n); }
  static uint64_t key(NodeId p, NodeId c) { return (uint64_t(uint32_t(p)) << 32) | uint32_t(c); }
  Verdict rules_vertical(NodeId a, NodeId b) const;
  Verdict benefit(const std::vector<NodeId>& members, bool threshold = true) const;
  enum class Benefit { Threshold, NetSaving, NotAsked };
  Verdict merge(const std::vector<NodeId>& nodes, const std::string& pattern, Benefit b);
  // The summed cost of running `kernels` one after another (a kernel of one member: its
  // own cost); `terms`, when given, gets each kernel's terms.
  Cost split_cost(const std::vector<std::vector<NodeId>>& kernels,
                  std::vector<KernelTerms>* terms = nullptr) const;

  const Graph& g_;
  const CostModel& cost_;
  const FusionOptions& opt_;
  GroupGraph groups_;
  std::vector<std::string> pattern_;  // per root: the pattern that formed the group
  std::unordered_map<uint64_t, Verdict> reasons_;
};

}  // namespace fx
