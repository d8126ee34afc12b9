// SPDX-License-Identifier: Apache-2.0
#include "analysis/analysis_json.h"

#include <nlohmann/json.hpp>

#include "analysis/fusion_plan.h"

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
         {"profile", e.profile}});
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

}  // namespace fx
