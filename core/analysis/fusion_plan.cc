// SPDX-License-Identifier: Apache-2.0
#include "analysis/fusion_plan.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "analysis/analysis_json.h"
#include "analysis/estimate_interval.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fx {

FusionPlan::FusionPlan(const AnalysisResult& r, std::string model)
    : model_(std::move(model)),
      device_(r.device),
      opt_level_(r.opt_level),
      threshold_(r.threshold),
      groups_(r.groups) {}

const FusionGroup* FusionPlan::find(const std::string& id) const {
  for (const auto& g : groups_)
    if (g.id == id) return &g;
  return nullptr;
}

void FusionPlan::apply(const std::vector<std::pair<std::size_t, FusionGroup>>& states) {
  for (const auto& [i, g] : states) groups_[i] = g;
}

bool FusionPlan::set_status(const std::string& id, GroupStatus s, const std::string& reason) {
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    if (groups_[i].id != id) continue;
    if (groups_[i].status == s && groups_[i].reason == reason) return false;
    Change c;
    c.before.emplace_back(i, groups_[i]);
    groups_[i].status = s;
    groups_[i].reason = reason;
    c.after.emplace_back(i, groups_[i]);
    undo_.push_back(std::move(c));
    redo_.clear();
    return true;
  }
  return false;
}

bool FusionPlan::accept(const std::string& id, const std::string& reason) {
  return set_status(id, GroupStatus::Accepted, reason);
}
bool FusionPlan::reject(const std::string& id, const std::string& reason) {
  return set_status(id, GroupStatus::Rejected, reason);
}
bool FusionPlan::reset(const std::string& id) {
  return set_status(id, GroupStatus::Candidate, {});
}

int FusionPlan::accept_all_above(double threshold) {
  Change c;
  for (std::size_t i = 0; i < groups_.size(); ++i) {
    auto& g = groups_[i];
    if (!default_plan_accepts(g, threshold)) continue;
    c.before.emplace_back(i, g);
    g.status = GroupStatus::Accepted;
    g.reason = "accepted: traffic reduction >= " + std::to_string(int(threshold * 100 + 0.5)) +
               "% and saving clearly positive";
    c.after.emplace_back(i, g);
  }
  int n = static_cast<int>(c.after.size());
  if (n > 0) {
    undo_.push_back(std::move(c));
    redo_.clear();
  }
  return n;
}

int FusionPlan::candidates_left_above(double threshold) const {
  int n = 0;
  for (const auto& g : groups_)
    if (g.status == GroupStatus::Candidate && g.estimate.known &&
        g.estimate.traffic_reduction() >= threshold && !default_plan_accepts(g, threshold))
      ++n;
  return n;
}

bool FusionPlan::undo() {
  if (undo_.empty()) return false;
  apply(undo_.back().before);
  redo_.push_back(std::move(undo_.back()));
  undo_.pop_back();
  return true;
}

bool FusionPlan::redo() {
  if (redo_.empty()) return false;
  apply(redo_.back().after);
  undo_.push_back(std::move(redo_.back()));
  redo_.pop_back();
  return true;
}

std::vector<const FusionGroup*> FusionPlan::accepted() const {
  std::vector<const FusionGroup*> out;
  for (const auto& g : groups_)
    if (g.status == GroupStatus::Accepted) out.push_back(&g);
  return out;
}

nlohmann::json FusionPlan::to_json() const {
  auto groups = nlohmann::json::array();
  for (const auto& g : groups_) {
    groups.push_back({{"id", g.id},
                      {"pattern", g.pattern},
                      {"nodes", g.nodes},
                      {"ops", g.ops},
                      {"status", std::string(group_status_name(g.status))},
                      {"reason", g.reason},
                      {"estimate", fx::to_json(g.estimate)}});
    if (!g.assumed_note.empty()) groups.back()["assumed_note"] = g.assumed_note;
  }
  nlohmann::json j = {
      {"schema_version", kSchemaVersion}, {"model", model_},         {"device", device_},
      {"opt_level", opt_level_},          {"threshold", threshold_}, {"groups", groups}};
  if (!dims_.empty()) {
    auto dims = nlohmann::json::array();
    for (const auto& d : dims_)
      dims.push_back({{"name", d.name}, {"value", d.value}, {"assumed", d.assumed}});
    j["dims"] = dims;
  }
  if (!disabled_passes_.empty()) j["disabled_passes"] = disabled_passes_;
  return j;
}

FusionPlan FusionPlan::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("fusion plan: expected a JSON object");
  int version = j.value("schema_version", 0);
  if (version != kSchemaVersion)
    throw Error("fusion plan: schema_version " + std::to_string(version) + " is not supported (" +
                std::to_string(kSchemaVersion) + " is)");
  FusionPlan p;
  try {
    p.model_ = j.value("model", "");
    p.device_ = j.value("device", "");
    p.opt_level_ = j.value("opt_level", 2);
    p.threshold_ = j.value("threshold", 0.30);
    for (const auto& gj : j.at("groups")) {
      p.groups_.push_back(fusion_group_from_json(gj, "fusion plan"));
    }
    if (j.contains("dims"))
      for (const auto& d : j.at("dims"))
        p.dims_.push_back({d.at("name").get<std::string>(), d.at("value").get<int64_t>(),
                           d.value("assumed", false)});
    if (j.contains("disabled_passes"))
      p.disabled_passes_ = j.at("disabled_passes").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("fusion plan: ") + e.what());
  }
  return p;
}

void FusionPlan::save(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw FileError(path, "cannot write fusion plan");
  out << to_json().dump(2) << "\n";
  if (!out) throw FileError(path, "write failed");
}

FusionPlan FusionPlan::load(const std::string& path) {
  return load_json_file(path, "fusion plan",
                        [](const nlohmann::json& doc) { return from_json(doc); });
}

std::vector<std::string> FusionPlan::bind(const Graph& g) {
  std::vector<std::string> missing;
  std::unordered_set<std::string> reported;
  std::vector<FusionGroup> kept;
  for (auto& grp : groups_) {
    bool ok = true;
    grp.node_ids.clear();
    for (const auto& n : grp.nodes) {
      NodeId id = g.find_node(n);
      if (id == kNoNode) {
        ok = false;
        if (reported.insert(n).second) missing.push_back(n);
      }
      grp.node_ids.push_back(id);
    }
    if (ok)
      kept.push_back(std::move(grp));
    else
      dropped_.push_back(grp.id);
  }
  groups_ = std::move(kept);
  undo_.clear();  // indices of recorded changes no longer match
  redo_.clear();
  return missing;
}

std::string_view group_status_name(GroupStatus s) {
  switch (s) {
    case GroupStatus::Candidate: return "candidate";
    case GroupStatus::Accepted: return "accepted";
    case GroupStatus::Rejected: return "rejected";
  }
  return "candidate";
}

std::optional<GroupStatus> group_status_from_name(std::string_view s) {
  if (s == "candidate") return GroupStatus::Candidate;
  if (s == "accepted") return GroupStatus::Accepted;
  if (s == "rejected") return GroupStatus::Rejected;
  return std::nullopt;
}

}  // namespace fx
