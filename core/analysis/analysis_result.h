// SPDX-License-Identifier: Apache-2.0
#pragma once
// The plain result of a fusion analysis, what the CLI prints and the GUI's item models
// take (they never see the finder). Everything refers to nodes by name; node_ids are a
// convenience valid only for the Graph that was analysed.

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace fx {

// Savings of one group against its members run one by one, on `profile`.
struct GroupEstimate {
  bool known = true;         // false when a member's shape is not static
  int64_t bytes_before = 0;  // sum of members' DRAM traffic
  int64_t bytes_after = 0;   // the fused kernel's traffic
  int launches_before = 0;
  int launches_after = 0;
  double time_before_s = 0;
  double time_after_s = 0;
  int64_t footprint_bytes = 0;  // on-chip working set of the fused kernel
  std::string profile;          // DeviceProfile name behind the times
  // The time saved as the profile's calibrated saving model predicts it for the fused
  // kernel's class (saving_model.h); NaN when the class has no fit and the saving is
  // the difference of the two times above. saving_source names the model in words
  // ("saving model (class conv, fitted to 20 groups, ...)", "difference of kernel
  // times"); empty in plans written before it (the difference).
  double model_saved_s = NAN;
  std::string saving_source;
  // Where the measured saving is expected to lie: time_saved_s() +- the interval's half
  // width, from the calibration residuals of the fused kernel's class
  // (estimate_interval.h). NaN: the profile has no residuals for that class.
  double saved_low_s = NAN, saved_high_s = NAN;
  std::string fused_class;  // the fused kernel's class ("conv"), whose residuals those are

  bool interval_known() const { return std::isfinite(saved_low_s) && std::isfinite(saved_high_s); }
  double interval_half_s() const {
    return interval_known() ? (saved_high_s - saved_low_s) / 2 : NAN;
  }
  // The interval includes zero: calibration cannot tell whether fusing saves or loses.
  bool uncertain() const { return interval_known() && saved_low_s <= 0 && saved_high_s >= 0; }

  int64_t bytes_saved() const { return bytes_before - bytes_after; }
  int launches_saved() const { return launches_before - launches_after; }
  bool saving_from_model() const { return std::isfinite(model_saved_s); }
  double time_saved_s() const {
    return saving_from_model() ? model_saved_s : time_before_s - time_after_s;
  }
  std::string saving_label() const {
    return saving_source.empty() ? "difference of kernel times" : saving_source;
  }
  // Fraction of memory traffic removed, 0..1.
  double traffic_reduction() const {
    return bytes_before > 0 ? double(bytes_saved()) / double(bytes_before) : 0.0;
  }
};

enum class GroupStatus { Candidate, Accepted, Rejected };

struct FusionGroup {
  std::string id;                  // stable: derived from the member names
  std::vector<std::string> nodes;  // member node names, topological order
  std::vector<std::string> ops;    // op types, same order
  std::string pattern;             // "conv_bn_act", "layer_norm", "auto_vertical", ...
  GroupStatus status = GroupStatus::Candidate;
  std::string reason;  // why accepted/rejected (user text or rule)
  GroupEstimate estimate;
  // Legal only at an assumed dimension (assumed_legality.h: "legal for the assumed
  // seq=128 (over on-chip capacity at seq=2048); rebind to check"); empty otherwise.
  std::string assumed_note;
  std::vector<NodeId> node_ids;  // same order as nodes; not serialized
};

// Why two adjacent ops (producer -> consumer) ended up in different kernels.
enum class NotFusedReason {
  OpaqueOp,          // one of them cannot be fused at all (unknown/custom/data-dependent)
  ControlFlow,       // If/Loop/Scan
  WouldCreateCycle,  // contracting both would make a cycle through another group
  OverCapacity,      // fused footprint > 0.8 x on-chip capacity
  BelowThreshold,    // traffic reduction < threshold, or no net time saved
  DtypeMismatch,     // the value between them changes dtype/layout
  OutsideConsumer,   // level 1: an intermediate is used outside the pattern
  UnknownShape,      // no static shape, no estimate
  KindRule,          // two anchors, reduce->reduce, anchor->injective/reduction, ...
  GroupTooLarge,     // more than max_group_nodes
  TooFar,            // the cycle check would scan too much of the graph
  OptLevel,          // not attempted at this opt level (0: off; 1: no seed pattern)
  NotOneKernel,      // the group's generated code runs them as kernels of their own
};
std::string_view not_fused_reason_name(NotFusedReason r);  // "opaque_op", ...

struct NotFused {
  std::string producer;
  std::string consumer;
  NodeId producer_id = kNoNode;  // valid for the analysed Graph only
  NodeId consumer_id = kNoNode;
  NotFusedReason reason = NotFusedReason::OptLevel;
  std::string text;  // one sentence naming the ops and numbers involved
};

struct SubgraphAnalysis;

struct AnalysisResult {
  std::string device;         // DeviceProfile name
  std::string device_source;  // and where its numbers came from
  int opt_level = 2;
  double threshold = 0.30;
  std::vector<FusionGroup> groups;
  std::vector<NotFused> not_fused;
  int64_t kernels_before = 0;  // launches without fusion
  int64_t kernels_after = 0;   // with every group fused
  int64_t bytes_before = 0;    // DRAM traffic of nodes with known cost
  int64_t bytes_after = 0;
  double time_before_s = 0;
  double time_after_s = 0;  // with every group fused, lone_saved_s included
  // What the fused program saves on the kernels outside every group (device_profile.h:
  // lone_kernel_saving; 0 without the profile's shares; without groups, only the kinds
  // the fused program changes anyway: lone_kernels.h), and per node
  // name what it saves when the node runs alone in a program with fused groups (nodes
  // that save nothing are absent; plan_totals.h credits the nodes outside the accepted
  // groups). Keyed by name, as groups are, so that a plan or an analysis read back from
  // JSON credits the same nodes without the Graph.
  double lone_saved_s = 0;
  std::map<std::string, double> node_lone_saving_s;
  // lone_saved_s by what the fused program does to those nodes (analysis/lone_kernels.h:
  // lone_kind_name: "spatial_conv", "other_conv", "merged", "class_share").
  std::map<std::string, double> lone_saved_by_kind_s;
  int64_t unknown_cost_nodes = 0;  // nodes left out of the byte totals
  // Kernel classes of the model's kernels and op types that the profile's calibration
  // never measured (their rates and intervals are not from this machine's measurements);
  // both empty when the profile records nothing of what it measured (presets).
  std::vector<std::string> unmeasured_classes;
  std::vector<std::string> unmeasured_ops;
  bool datasheet = false;  // the profile is datasheet figures, never measured
  double analysis_ms = 0;
  // Control flow: each If branch / Loop or Scan body analysed on its own (the node
  // itself is one opaque kernel here; nothing fuses across its boundary).
  std::vector<SubgraphAnalysis> subgraphs;
};

struct SubgraphAnalysis {
  std::string node;       // the control-flow node
  std::string attribute;  // "then_branch", "else_branch", "body"
  AnalysisResult result;  // names refer to the subgraph's nodes
};

}  // namespace fx
