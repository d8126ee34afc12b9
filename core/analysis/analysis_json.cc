// SPDX-License-Identifier: Apache-2.0
#include "analysis/analysis_json.h"

#include <nlohmann/json.hpp>

#include "analysis/fusion_plan.h"
#include "util/error.h"

namespace fx {

nlohmann::json to_json(const GroupEstimate& e) {
  return {
      {"known", e.known},
      {"bytes_before", e.bytes_before},
      {"bytes_after", e.bytes_after},
      {"launches_before", e.launches_before},
      {"launches_after", e.launches_after},
      {"time_before_s", e.time_before_s},
      {"time_after_s", e.time_after_s},
      {"footprint_bytes", e.footprint_bytes},
      {"profile", e.profile},
      {"model_saved_s",
       e.saving_from_model() ? nlohmann::json(e.model_saved_s) : nlohmann::json(nullptr)},
      {"saving_source", e.saving_label()},
      {"saved_low_s", e.interval_known() ? nlohmann::json(e.saved_low_s) : nlohmann::json(nullptr)},
      {"saved_high_s",
       e.interval_known() ? nlohmann::json(e.saved_high_s) : nlohmann::json(nullptr)},
      {"fused_class", e.fused_class}};
}

GroupEstimate group_estimate_from_json(const nlohmann::json& j) {
  GroupEstimate e;
  e.known = j.value("known", true);
  e.bytes_before = j.value("bytes_before", int64_t{0});
  e.bytes_after = j.value("bytes_after", int64_t{0});
  e.launches_before = j.value("launches_before", 0);
  e.launches_after = j.value("launches_after", 0);
  e.time_before_s = j.value("time_before_s", 0.0);
  e.time_after_s = j.value("time_after_s", 0.0);
  e.footprint_bytes = j.value("footprint_bytes", int64_t{0});
  e.profile = j.value("profile", "");
  if (auto it = j.find("model_saved_s"); it != j.end() && it->is_number())
    e.model_saved_s = it->get<double>();
  e.saving_source = j.value("saving_source", "");
  if (auto lo = j.find("saved_low_s"), hi = j.find("saved_high_s");
      lo != j.end() && hi != j.end() && lo->is_number() && hi->is_number())
    e.saved_low_s = lo->get<double>(), e.saved_high_s = hi->get<double>();
  e.fused_class = j.value("fused_class", "");
  return e;
}

FusionGroup fusion_group_from_json(const nlohmann::json& gj, const std::string& document) {
  FusionGroup g;
  g.id = gj.at("id").get<std::string>();
  g.pattern = gj.value("pattern", "");
  g.nodes = gj.at("nodes").get<std::vector<std::string>>();
  g.ops = gj.value("ops", std::vector<std::string>{});
  auto st = group_status_from_name(gj.value("status", "candidate"));
  if (!st) throw Error(document + ": group " + g.id + " has an unknown status");
  g.status = *st;
  g.reason = gj.value("reason", "");
  g.assumed_note = gj.value("assumed_note", "");
  if (gj.contains("estimate")) g.estimate = group_estimate_from_json(gj["estimate"]);
  return g;
}

nlohmann::json to_json(const AnalysisResult& r) {
  nlohmann::json j;
  j["device"] = r.device;
  j["device_source"] = r.device_source;
  j["opt_level"] = r.opt_level;
  j["threshold"] = r.threshold;
  j["kernels_before"] = r.kernels_before;
  j["kernels_after"] = r.kernels_after;
  j["bytes_before"] = r.bytes_before;
  j["bytes_after"] = r.bytes_after;
  j["est_time_before_us"] = r.time_before_s * 1e6;
  j["est_time_after_us"] = r.time_after_s * 1e6;
  j["est_lone_saved_us"] = r.lone_saved_s * 1e6;
  auto lone = nlohmann::json::object();
  for (const auto& [name, s] : r.node_lone_saving_s) lone[name] = s * 1e6;
  j["node_lone_saving_us"] = std::move(lone);
  auto by_kind = nlohmann::json::object();
  for (const auto& [kind, s] : r.lone_saved_by_kind_s) by_kind[kind] = s * 1e6;
  j["est_lone_saved_by_kind_us"] = std::move(by_kind);
  j["unknown_cost_nodes"] = r.unknown_cost_nodes;
  j["analysis_ms"] = r.analysis_ms;
  j["unmeasured_classes"] = r.unmeasured_classes;
  j["unmeasured_ops"] = r.unmeasured_ops;
  j["datasheet_estimate"] = r.datasheet;
  auto groups = nlohmann::json::array();
  for (const auto& g : r.groups) {
    const auto& e = g.estimate;
    groups.push_back(
        {{"id", g.id},
         {"pattern", g.pattern},
         {"nodes", g.nodes},
         {"ops", g.ops},
         {"status", std::string(group_status_name(g.status))},
         {"bytes_saved", e.bytes_saved()},
         {"launches_saved", e.launches_saved()},
         {"est_time_saved_us", e.time_saved_s() * 1e6},
         {"est_time_saved_by", e.saving_label()},
         {"est_time_saved_interval_us",
          e.interval_known() ? nlohmann::json::array({e.saved_low_s * 1e6, e.saved_high_s * 1e6})
                             : nlohmann::json(nullptr)},
         {"uncertain", e.uncertain()},
         {"traffic_reduction", e.traffic_reduction()},
         {"footprint_bytes", e.footprint_bytes},
         {"estimate_known", e.known},
         {"profile", e.profile},
         {"estimate", to_json(e)}});
    if (!g.assumed_note.empty()) groups.back()["assumed_note"] = g.assumed_note;
  }
  j["groups"] = std::move(groups);
  auto nf = nlohmann::json::array();
  for (const auto& n : r.not_fused)
    nf.push_back({{"nodes", {n.producer, n.consumer}},
                  {"reason", std::string(not_fused_reason_name(n.reason))},
                  {"text", n.text}});
  j["not_fused"] = std::move(nf);
  return j;
}

AnalysisResult analysis_result_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("analysis: expected a JSON object");
  AnalysisResult r;
  try {
    r.device = j.value("device", "");
    r.device_source = j.value("device_source", "");
    r.opt_level = j.value("opt_level", 2);
    r.threshold = j.value("threshold", 0.30);
    r.kernels_before = j.value("kernels_before", int64_t{0});
    r.kernels_after = j.value("kernels_after", int64_t{0});
    r.bytes_before = j.value("bytes_before", int64_t{0});
    r.bytes_after = j.value("bytes_after", int64_t{0});
    r.time_before_s = j.value("est_time_before_us", 0.0) * 1e-6;
    r.time_after_s = j.value("est_time_after_us", 0.0) * 1e-6;
    r.lone_saved_s = j.value("est_lone_saved_us", 0.0) * 1e-6;
    if (auto it = j.find("node_lone_saving_us"); it != j.end())
      for (const auto& [name, us] : it->items())
        r.node_lone_saving_s[name] = us.get<double>() * 1e-6;
    if (auto it = j.find("est_lone_saved_by_kind_us"); it != j.end())
      for (const auto& [kind, us] : it->items())
        r.lone_saved_by_kind_s[kind] = us.get<double>() * 1e-6;
    r.unknown_cost_nodes = j.value("unknown_cost_nodes", int64_t{0});
    r.analysis_ms = j.value("analysis_ms", 0.0);
    r.unmeasured_classes = j.value("unmeasured_classes", std::vector<std::string>{});
    r.unmeasured_ops = j.value("unmeasured_ops", std::vector<std::string>{});
    r.datasheet = j.value("datasheet_estimate", false);
    for (const auto& gj : j.value("groups", nlohmann::json::array())) {
      r.groups.push_back(fusion_group_from_json(gj, "analysis"));
    }
    for (const auto& n : j.value("not_fused", nlohmann::json::array())) {
      NotFused f;
      f.producer = n.at("nodes").at(0).get<std::string>();
      f.consumer = n.at("nodes").at(1).get<std::string>();
      const std::string why = n.value("reason", "");
      for (int k = 0; k <= int(NotFusedReason::NotOneKernel); ++k)
        if (not_fused_reason_name(NotFusedReason(k)) == why) f.reason = NotFusedReason(k);
      f.text = n.value("text", "");
      r.not_fused.push_back(std::move(f));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("analysis: ") + e.what());
  }
  return r;
}

}  // namespace fx
