// SPDX-License-Identifier: Apache-2.0
#include "report/report_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "report/report_text.h"

namespace fx {
namespace {

const char* kUnfusedColor = "#bab0ac";

std::string estimate_profile_name(const ReportData& d) {
  if (d.profile && !d.profile->estimate_profile.empty()) return d.profile->estimate_profile;
  for (const auto& g : d.groups)
    if (!g.estimate.profile.empty()) return g.estimate.profile;
  return d.device.name;
}

}  // namespace

std::string estimate_label(const ReportData& d) {
  return "estimated on " + estimate_profile_name(d);
}

std::string saving_sources_label(const ReportData& d) {
  std::vector<std::pair<std::string, int>> sources;
  for (const auto& g : d.groups) {
    if (!g.estimate.known) continue;
    const std::string label = g.estimate.saving_label();
    auto it = std::find_if(sources.begin(), sources.end(),
                           [&](const auto& s) { return s.first == label; });
    if (it == sources.end())
      sources.emplace_back(label, 1);
    else
      ++it->second;
  }
  std::string s;
  for (const auto& [label, n] : sources)
    s += fmt::format("{}by the {} for {} group{}", s.empty() ? "time saved " : ", ", label, n,
                     n == 1 ? "" : "s");
  return s;
}

std::string measurement_label(const ReportData& d) {
  if (!d.profile) return "not measured";
  const ProfileInput& p = *d.profile;
  std::string s = p.runs > 0 ? fmt::format("measured, median of {} runs", p.runs) : "measured";
  if (!p.device.empty()) s += " on " + p.device;
  return s;
}

std::map<std::string, std::string> group_colors(const ReportData& d) {
  std::map<std::string, std::string> colors;
  std::size_t next = 0;
  auto add = [&](const std::string& id) {
    if (!colors.count(id)) colors[id] = palette_color(next++);
  };
  if (d.profile)
    for (const auto& g : d.profile->groups) add(g.id);
  for (const auto& g : d.groups)
    if (g.status == GroupStatus::Accepted) add(g.id);
  return colors;
}

BarChart savings_chart(const ReportData& d) {
  BarChart c;
  c.y_label = "time saved (us)";
  BarSeries est{estimate_label(d), "#4e79a7", {}};
  if (d.profile && d.profile->before_after && !d.profile->groups.empty()) {
    c.title = "Estimated vs measured time saved per group";
    BarSeries meas{measurement_label(d), "#f28e2b", {}};
    for (const auto& g : d.profile->groups) {
      c.categories.push_back(g.id + (g.pattern.empty() ? "" : " " + g.pattern));
      est.values.push_back(g.predicted_saved_us);
      meas.values.push_back(g.measured_saved_us);
    }
    c.series = {est, meas};
    return c;
  }
  c.title = "Estimated time saved per accepted group (not measured)";
  for (const auto& g : d.groups) {
    if (g.status != GroupStatus::Accepted) continue;
    c.categories.push_back(g.id + " " + g.pattern);
    est.values.push_back(g.estimate.known ? g.estimate.time_saved_s() * 1e6 : NAN);
  }
  c.series = {est};
  return c;
}

std::optional<ScatterChart> accuracy_chart(const ReportData& d) {
  if (!d.profile || !d.profile->before_after) return std::nullopt;
  ScatterChart c;
  c.title = "Predicted vs measured time saved per group";
  c.x_label = "predicted saved (us, " + estimate_label(d) + ")";
  c.y_label = "measured saved (us)";
  for (const auto& g : d.profile->groups)
    if (std::isfinite(g.predicted_saved_us) && std::isfinite(g.measured_saved_us))
      c.points.push_back({g.predicted_saved_us, g.measured_saved_us, g.id + " " + g.pattern});
  if (c.points.empty()) return std::nullopt;
  c.note = std::isnan(d.rank_correlation)
               ? fmt::format("rank correlation undefined ({} groups)", d.correlated_groups)
               : fmt::format("Spearman rank correlation {} over {} groups",
                             format_number(d.rank_correlation, 3), d.correlated_groups);
  return c;
}

std::optional<TimelineStrip> timeline_chart(const ReportData& d) {
  if (!d.profile) return std::nullopt;
  const ProfileInput& p = *d.profile;
  auto colors = group_colors(d);
  std::unordered_map<std::string, std::string> node_group;
  if (d.profile)
    for (const auto& g : p.groups)
      for (const auto& n : g.nodes) node_group.emplace(n, g.id);
  for (const auto& g : d.groups)
    if (g.status == GroupStatus::Accepted)
      for (const auto& n : g.nodes) node_group.emplace(n, g.id);

  TimelineStrip t;
  bool traced = p.before.timeline_from_trace && (!p.before_after || p.after.timeline_from_trace);
  t.title = p.before_after ? "Before/after timeline (representative run)"
                           : "Timeline (representative run, single profile: no before/after)";
  if (!traced) t.title += " - kernels laid end to end by median time (no trace in the input)";
  std::map<std::string, bool> used;
  auto lane = [&](const std::string& name, const RunProfile& run) {
    StripLane l{name, {}};
    for (const auto& k : run.timeline) {
      std::string group;
      for (const auto& n : k.nodes)
        if (auto it = node_group.find(n); it != node_group.end()) group = it->second;
      std::string color = group.empty() ? kUnfusedColor : colors[group];
      if (!group.empty()) used[group] = true;
      l.boxes.push_back({k.start_us, k.duration_us,
                         fmt::format("{} ({}){}", k.name, human_us(k.duration_us),
                                     group.empty() ? "" : ", group " + group),
                         color});
    }
    t.lanes.push_back(std::move(l));
  };
  lane(p.before_after ? "before" : "profile", p.before);
  if (p.before_after) lane("after", p.after);
  for (const auto& [id, color] : colors)
    if (used.count(id)) t.legend.push_back({id, color});
  t.legend.push_back({"not in a group", kUnfusedColor});
  return t;
}

}  // namespace fx
