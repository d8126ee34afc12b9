// SPDX-License-Identifier: Apache-2.0
#pragma once
// The user's decisions over an analysis: which groups are accepted or rejected, with
// undo/redo. The GUI and `fxc analyze --plan-out` both go through this class.
//
// JSON:
//   { "schema_version": 1, "model": "resnet18.onnx", "device": "cpu-host",
//     "opt_level": 2, "threshold": 0.3,
//     "groups": [ { "id": "fg-1a2b3c4d", "pattern": "conv_bn_act",
//                   "nodes": ["conv1", "bn1", "relu1"], "ops": [...],
//                   "status": "accepted", "reason": "..." , "estimate": {...} } ],
//     "dims": [ { "name": "batch", "value": 1, "assumed": true } ],     (when any)
//     "disabled_passes": ["conv-bn-folding"] }                             (when any)
//
// disabled_passes: the canonical passes the model was read without when the plan was
// made (the explorer keeps BatchNormalization nodes in view); a command reading the plan
// reads the model the same way, or the plan's node names would not be found.
//
// Loading against a model that changed keeps the groups whose nodes all exist and reports
// the rest (unknown_nodes), without failing.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/analysis_result.h"

namespace fx {

// A symbolic dimension the plan's analysis ran with: bound by the user or assumed.
struct PlanDim {
  std::string name;
  int64_t value = 0;
  bool assumed = false;
  bool operator==(const PlanDim&) const = default;
};

class FusionPlan {
 public:
  static constexpr int kSchemaVersion = 1;

  FusionPlan() = default;
  explicit FusionPlan(const AnalysisResult& r, std::string model = {});

  const std::vector<FusionGroup>& groups() const { return groups_; }
  const FusionGroup* find(const std::string& id) const;
  const std::string& model() const { return model_; }
  const std::string& device() const { return device_; }
  int opt_level() const { return opt_level_; }
  double threshold() const { return threshold_; }
  const std::vector<PlanDim>& dims() const { return dims_; }
  void set_dims(std::vector<PlanDim> dims) { dims_ = std::move(dims); }
  const std::vector<std::string>& disabled_passes() const { return disabled_passes_; }
  void set_disabled_passes(std::vector<std::string> passes) {
    disabled_passes_ = std::move(passes);
  }

  // Decisions. Each returns false (and records nothing) for an unknown id or a no-op.
  bool accept(const std::string& id, const std::string& reason = {});
  bool reject(const std::string& id, const std::string& reason = {});
  bool reset(const std::string& id);  // back to Candidate
  // Accepts every candidate whose traffic reduction >= threshold and whose saving is
  // clearly positive (estimate_interval.h: default_plan_accepts, which asks
  // default_rule.h: the default plan never fuses at a loss); one undo step.
  int accept_all_above(double threshold);
  // Candidates at or above `threshold` that accept_all_above leaves out because their
  // saving is not clearly positive (default_rule.h), so a caller can say so.
  int candidates_left_above(double threshold) const;
  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  bool undo();
  bool redo();

  std::vector<const FusionGroup*> accepted() const;

  nlohmann::json to_json() const;
  // Throws fx::Error on a malformed document or an unsupported schema_version.
  static FusionPlan from_json(const nlohmann::json& j);
  void save(const std::string& path) const;  // throws fx::FileError
  static FusionPlan load(const std::string& path);

  // Drops groups naming a node the graph lacks; returns the missing node names (each once)
  // and keeps the dropped group ids in dropped_groups().
  std::vector<std::string> bind(const Graph& g);
  const std::vector<std::string>& dropped_groups() const { return dropped_; }

 private:
  struct Change {
    std::vector<std::pair<std::size_t, FusionGroup>> before;  // index -> old group state
    std::vector<std::pair<std::size_t, FusionGroup>> after;
  };
  bool set_status(const std::string& id, GroupStatus s, const std::string& reason);
  void apply(const std::vector<std::pair<std::size_t, FusionGroup>>& states);

  std::string model_, device_;
  int opt_level_ = 2;
  double threshold_ = 0.30;
  std::vector<FusionGroup> groups_;
  std::vector<PlanDim> dims_;
  std::vector<std::string> disabled_passes_;
  std::vector<Change> undo_, redo_;
  std::vector<std::string> dropped_;
};

std::string_view group_status_name(GroupStatus s);  // "candidate", "accepted", "rejected"
std::optional<GroupStatus> group_status_from_name(std::string_view s);

}  // namespace fx
