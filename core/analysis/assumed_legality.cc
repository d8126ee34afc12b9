// SPDX-License-Identifier: Apache-2.0
#include "analysis/assumed_legality.h"

#include <fmt/format.h>

#include <set>

namespace fx {

void note_assumed_legality(const AnalysisResult& r, const std::string& symbol, int64_t assumed,
                           int64_t probe, const AnalysisResult& at_probe, AssumedNotes& notes) {
  note_assumed_legality(r, {{symbol, assumed, probe}}, at_probe, notes);
}

void note_assumed_legality(const AnalysisResult& r, const std::vector<AssumedProbe>& dims,
                           const AnalysisResult& at_probe, AssumedNotes& notes) {
  if (dims.empty()) return;
  std::string at_assumed, at_probed;
  for (const auto& d : dims) {
    if (!at_assumed.empty()) {
      at_assumed += ", ";
      at_probed += ", ";
    }
    at_assumed += fmt::format("{}={}", d.symbol, d.assumed);
    at_probed += fmt::format("{}={}", d.symbol, d.probe);
  }
  std::set<std::string> probe_ids;
  for (const auto& g : at_probe.groups) probe_ids.insert(g.id);
  for (const auto& g : r.groups) {
    if (probe_ids.count(g.id)) continue;  // the same group at the probe value
    const std::set<std::string> members(g.nodes.begin(), g.nodes.end());
    bool over = false;
    for (const auto& nf : at_probe.not_fused)
      over = over || (nf.reason == NotFusedReason::OverCapacity && members.count(nf.producer) &&
                      members.count(nf.consumer));
    if (!over) continue;
    std::string& note = notes[g.id];
    if (!note.empty()) note += "; ";
    note += fmt::format("legal for the assumed {} (over on-chip capacity at {}); rebind to check",
                        at_assumed, at_probed);
  }
}

void apply_assumed_notes(std::vector<FusionGroup>& groups, const AssumedNotes& notes) {
  for (auto& g : groups) {
    const auto it = notes.find(g.id);
    g.assumed_note = it == notes.end() ? std::string() : it->second;
  }
}

}  // namespace fx
