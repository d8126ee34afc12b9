// SPDX-License-Identifier: Apache-2.0
#pragma once
// JSON renderings of analysis results shared by `fxc analyze --json`, reports and tests.

#include <nlohmann/json_fwd.hpp>

#include "analysis/analysis_result.h"

namespace fx {

nlohmann::json to_json(const GroupEstimate& e);
GroupEstimate group_estimate_from_json(const nlohmann::json& j);
// One group of an analysis or a plan document: id, pattern, nodes, ops, status, reason,
// assumed_note and its estimate. Throws fx::Error naming `document` on an unknown status.
FusionGroup fusion_group_from_json(const nlohmann::json& gj, const std::string& document);
// { device, device_source, opt_level, threshold, kernels_before, kernels_after,
//   bytes_before, bytes_after, est_time_before_us, est_time_after_us, unknown_cost_nodes,
//   analysis_ms, groups: [{id, pattern, nodes, ops, status, bytes_saved, launches_saved,
//   est_time_saved_us, est_time_saved_by (the model that predicted it), traffic_reduction,
//   footprint_bytes, estimate_known}],
//   not_fused: [{nodes: [producer, consumer], reason, text}] }
//   est_lone_saved_us: what the fused program saves on the nodes outside every group
//   (in est_time_after_us), est_lone_saved_by_kind_us: that by kind (lone_kernels.h:
//   spatial_conv, other_conv, merged, class_share),
//   node_lone_saving_us: {node name: what the fused program saves on it alone},
//   and per group its whole estimate (group_estimate_from_json reads it back)
nlohmann::json to_json(const AnalysisResult& r);
// What to_json wrote, read back (node ids and subgraphs are not: bind a FusionPlan to the
// Graph for ids). Throws fx::Error on a malformed document.
AnalysisResult analysis_result_from_json(const nlohmann::json& j);

}  // namespace fx
