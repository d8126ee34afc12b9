// SPDX-License-Identifier: Apache-2.0
#pragma once
// A hand-made before/after result following docs/before_after.md, for the report tests:
// every node of the graph is one 10 us kernel before fusion; each accepted group becomes
// one kernel taking `fused_fraction` (+ 0.1 per group index, so that the groups differ)
// of its members' time after fusion.

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "profile/chrome_trace.h"
#include "profile/timeline.h"

namespace fx::testing {

inline nlohmann::json kernel_row(const std::string& name, const std::vector<std::string>& nodes,
                                 double us) {
  return {{"name", name},      {"op_types", nlohmann::json::array()},
          {"nodes", nodes},    {"calls", 1},
          {"median_us", us},   {"min_us", us},
          {"max_us", us},      {"share", 0.0},
          {"bytes_read", 0},   {"bytes_written", 0},
          {"flops", 0},        {"gb_per_s", 0.0},
          {"gflop_per_s", 0.0}};
}

inline nlohmann::json before_after_fixture(const std::vector<std::string>& node_names,
                                           const std::vector<FusionGroup>& groups,
                                           double fused_fraction = 0.6) {
  const double kUs = 10;
  Timeline before, after;
  nlohmann::json kb = nlohmann::json::array(), ka = nlohmann::json::array();
  nlohmann::json gj = nlohmann::json::array();
  double t = 0;
  for (const auto& n : node_names) {
    KernelEvent e;
    e.name = n, e.nodes = {n}, e.start_us = t, e.duration_us = kUs;
    before.events.push_back(e);
    kb.push_back(kernel_row(n, {n}, kUs));
    t += kUs;
  }
  t = 0;
  std::vector<std::string> done;
  for (const auto& n : node_names) {
    if (std::find(done.begin(), done.end(), n) != done.end()) continue;
    const FusionGroup* g = nullptr;
    double fraction = fused_fraction;
    for (std::size_t i = 0; i < groups.size(); ++i)
      if (std::find(groups[i].nodes.begin(), groups[i].nodes.end(), n) != groups[i].nodes.end())
        g = &groups[i], fraction = fused_fraction + 0.1 * double(i);
    KernelEvent e;
    e.start_us = t;
    if (g) {
      e.name = g->id, e.nodes = g->nodes;
      e.duration_us = kUs * double(g->nodes.size()) * fraction;
      done.insert(done.end(), g->nodes.begin(), g->nodes.end());
      gj.push_back({{"id", g->id},
                    {"pattern", g->pattern},
                    {"nodes", g->nodes},
                    {"status", "fused"},
                    {"backend", "generated-cpp"},
                    {"reason", ""},
                    {"predicted_saved_us", g->estimate.time_saved_s() * 1e6},
                    {"measured_saved_us", kUs * double(g->nodes.size()) - e.duration_us},
                    {"max_abs_error", 1e-7}});
    } else {
      e.name = n, e.nodes = {n}, e.duration_us = kUs;
    }
    after.events.push_back(e);
    ka.push_back(kernel_row(e.name, e.nodes, e.duration_us));
    t += e.duration_us;
  }
  double before_ms = double(node_names.size()) * kUs / 1e3, after_ms = t / 1e3;
  auto run = [](double ms, nlohmann::json kernels, const Timeline& tl) {
    return nlohmann::json{{"median_ms", ms},
                          {"min_ms", ms * 0.95},
                          {"max_ms", ms * 1.1},
                          {"kernels", std::move(kernels)},
                          {"peak_activation_bytes", 0},
                          {"trace", to_chrome_trace(tl)}};
  };
  return {{"schema", "fusion-explorer/before-after"},
          {"schema_version", 1},
          {"model", "model.onnx"},
          {"plan", "plan.json"},
          {"opt_level", 2},
          {"device", "cpu: test, 2 threads"},
          {"estimate_profile", "test-device"},
          {"threads", 2},
          {"runs", 20},
          {"warmup", 3},
          {"seed", 0},
          {"before", run(before_ms, kb, before)},
          {"after", run(after_ms, ka, after)},
          {"speedup", before_ms / after_ms},
          {"max_abs_error", 1.5e-7},
          {"max_rel_error", 2.5e-6},
          {"outputs_match", true},
          {"groups", gj}};
}

}  // namespace fx::testing
