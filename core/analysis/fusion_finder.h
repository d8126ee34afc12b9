// SPDX-License-Identifier: Apache-2.0
#pragma once
// Finds fusion groups in a graph, level by level (MindSpore's opt levels):
//
//   0  nothing
//   1  seed patterns only (fusion_pattern.h), ORT-style guard: an intermediate used
//      outside the pattern blocks it
//   2  + automatic vertical fusion: greedy producer->consumer merging of
//      elementwise/broadcast/injective/reduction groups around at most one anchor,
//      best bytes-saved first, then closest in program order (TorchInductor/CANN);
//      values used outside a group are materialized (multi-output groups)
//   3  + horizontal fusion of sibling groups reading the same input (Q/K/V)
//
// Every accepted merge keeps the contracted graph acyclic (group_graph.h), fits 0.8 x the
// device's on-chip capacity, has <= max_group_nodes, saves time and reduces traffic by at
// least `threshold`. Each adjacent producer->consumer pair left in different groups gets
// a NotFused reason.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "analysis/cost_model.h"
#include "ir/graph.h"

namespace fx {

// How a group's members run once generated: each kernel a set of members run by one
// launch, and why the group is not one kernel when it is not.
struct GroupLaunches {
  std::vector<std::vector<NodeId>> kernels;
  std::string why_split;
  // One kernel that runs the anchor's runtime kernel and the rest as its generated
  // epilogue (GroupTermsSample::anchor_runtime), not a fused anchor (oneDNN post-ops).
  bool anchor_runtime = false;
};

struct FixedGroup {
  std::vector<std::string> nodes;
  std::string pattern;
};

struct FusionOptions {
  int opt_level = 2;
  double threshold = 0.30;  // minimum traffic reduction of a group
  int max_group_nodes = 64;
  double capacity_fraction = 0.8;
  // Bound on the groups one cycle check may visit before giving up (reason TooFar).
  int max_cycle_check_visits = 4096;
  std::vector<std::string> disabled_patterns;  // pattern names to skip
  // The kernels a found group's members of graph `g` run as once generated, each a set
  // of members run by one launch (codegen/group_kernels.h: use_generated_kernels sets
  // it). A group's launches, bytes and time after fusion are those of these kernels, and
  // a group whose kernels remove no launch is not a group (its pairs say why). It is
  // asked with the analysed graph and with each control-flow body. Unset: a group is
  // one kernel.
  std::function<GroupLaunches(const Graph& g, const std::vector<NodeId>& members)> kernels_of;
  // A plan's groups (member node names, pattern): when set, the analysis estimates exactly
  // these groups on the profile instead of searching, whatever it would propose itself
  // (`fxc analyze --plan`: what this profile predicts for a plan made or measured with
  // another). A group naming a node the graph lacks is left out (a control-flow body is
  // analysed with the same list: the groups of its nodes apply there).
  std::optional<std::vector<FixedGroup>> fixed_groups;
};

class FusionFinder {
 public:
  FusionFinder(const Graph& g, const DeviceProfile& profile, FusionOptions options = {});
  // Runs the analysis. Throws fx::Error only for an invalid opt level.
  AnalysisResult run();
  const CostModel& cost_model() const { return cost_; }

 private:
  const Graph& g_;
  CostModel cost_;
  FusionOptions opt_;
};

// Convenience: FusionFinder(g, profile, options).run().
AnalysisResult analyze_fusion(const Graph& g, const DeviceProfile& profile,
                              const FusionOptions& options = {});

// Stable group id from member names: "fg-" + 8 hex digits of a hash of the sorted names.
std::string group_id_for(const std::vector<std::string>& node_names);

// Answers "why were A and B not fused?" from a result: the NotFused entry for the pair
// (either direction), "fused together in <id>", or "not adjacent".
std::string explain_pair(const AnalysisResult& r, const std::string& a, const std::string& b);

}  // namespace fx
