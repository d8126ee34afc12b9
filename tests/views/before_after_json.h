// SPDX-License-Identifier: Apache-2.0
#pragma once
// A before/after result per docs/before_after.md over real tiny_cnn node names (its
// canonical form, BNs folded into their Convs, as the explorer and fxc read it), for the
// profile views' tests. Before: one kernel per node. After: group fg-142d3ebd
// (conv1+relu) fused into one kernel; group fg-1c9df8f9 excluded for breaking
// equivalence, so its nodes still run one by one. Every number the summary shows is
// computed here from the kernels, so that the tests compare against these values.

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "profile/chrome_trace.h"
#include "profile/timeline.h"

namespace fx::testing {

struct FixtureKernel {
  std::string name;
  std::vector<std::string> nodes;
  double us;
  int64_t bytes_read, bytes_written;
};

struct BeforeAfterFixture {
  std::vector<FixtureKernel> before = {
      {"/conv1/Conv", {"/conv1/Conv"}, 55, 14080, 65536},
      {"/relu/Relu", {"/relu/Relu"}, 10, 65536, 65536},
      {"/layer2/conv/Conv", {"/layer2/conv/Conv"}, 30, 83968, 32768},
      {"/layer2/Add", {"/layer2/Add"}, 5, 32896, 32768},
      {"/layer2/act/LeakyRelu", {"/layer2/act/LeakyRelu"}, 5, 32768, 32768},
      {"/fc/Gemm", {"/fc/Gemm"}, 2, 1448, 40}};
  std::vector<FixtureKernel> after = {
      {"fg-142d3ebd", {"/conv1/Conv", "/relu/Relu"}, 45, 14080, 65536},
      {"/layer2/conv/Conv", {"/layer2/conv/Conv"}, 30, 83968, 32768},
      {"/layer2/Add", {"/layer2/Add"}, 5, 32896, 32768},
      {"/layer2/act/LeakyRelu", {"/layer2/act/LeakyRelu"}, 5, 32768, 32768},
      {"/fc/Gemm", {"/fc/Gemm"}, 2, 1448, 40}};
  double gap_us = 1;  // between kernels in the traces
  double max_abs_error = 2.5e-6, max_rel_error = 3.5e-5;

  static double sum_us(const std::vector<FixtureKernel>& ks) {
    double s = 0;
    for (const auto& k : ks) s += k.us;
    return s;
  }
  // Wall time of a run: kernels plus the gaps between them.
  double run_ms(const std::vector<FixtureKernel>& ks) const {
    return (sum_us(ks) + gap_us * double(ks.size() - 1)) / 1e3;
  }
  double before_ms() const { return run_ms(before); }
  double after_ms() const { return run_ms(after); }
  double speedup() const { return before_ms() / after_ms(); }
  // Measured saving of the fused group: its members before minus the fused kernel.
  double fused_saved_us() const { return before[0].us + before[1].us - after[0].us; }
  static constexpr double kPredictedFused = 21.5, kPredictedExcluded = 7.25;

  Timeline timeline(const std::vector<FixtureKernel>& ks) const {
    Timeline t;
    t.source = "fixture";
    double at = 0;
    for (const auto& k : ks) {
      KernelEvent e;
      e.name = k.name, e.nodes = k.nodes, e.start_us = at, e.duration_us = k.us;
      e.op_types = {k.name.substr(k.name.rfind('/') + 1)};
      e.bytes_read = k.bytes_read, e.bytes_written = k.bytes_written;
      t.events.push_back(e);
      at += k.us + gap_us;
    }
    return t;
  }

  nlohmann::json rows(const std::vector<FixtureKernel>& ks) const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& k : ks)
      out.push_back({{"name", k.name},
                     {"op_types", nlohmann::json::array()},
                     {"nodes", k.nodes},
                     {"calls", 1},
                     {"median_us", k.us},
                     {"min_us", k.us},
                     {"max_us", k.us},
                     {"share", 0.0},
                     {"bytes_read", k.bytes_read},
                     {"bytes_written", k.bytes_written},
                     {"flops", 0},
                     {"gb_per_s", double(k.bytes_read + k.bytes_written) / (k.us * 1e3)},
                     {"gflop_per_s", 0.0}});
    return out;
  }

  nlohmann::json json(bool with_traces = true) const {
    auto run = [&](const std::vector<FixtureKernel>& ks) {
      const double ms = run_ms(ks);
      nlohmann::json j = {{"median_ms", ms},
                          {"min_ms", ms * 0.9},
                          {"max_ms", ms * 1.2},
                          {"kernels", rows(ks)},
                          {"peak_activation_bytes", 0}};
      if (with_traces) j["trace"] = to_chrome_trace(timeline(ks));
      return j;
    };
    return {{"schema", "fusion-explorer/before-after"},
            {"schema_version", 1},
            {"model", "tiny_cnn.onnx"},
            {"plan", "plan.json"},
            {"opt_level", 2},
            {"device", "cpu: fixture, 2 threads"},
            {"estimate_profile", "cpu-host"},
            {"threads", 2},
            {"runs", 20},
            {"warmup", 3},
            {"seed", 0},
            {"before", run(before)},
            {"after", run(after)},
            {"speedup", speedup()},
            {"max_abs_error", max_abs_error},
            {"max_rel_error", max_rel_error},
            {"outputs_match", true},
            {"groups",
             {{{"id", "fg-142d3ebd"},
               {"pattern", "conv_bn_act"},
               {"nodes", after[0].nodes},
               {"status", "fused"},
               {"backend", "onednn-postops"},
               {"reason", ""},
               {"predicted_saved_us", kPredictedFused},
               {"measured_saved_us", fused_saved_us()},
               {"max_abs_error", 1e-6}},
              {{"id", "fg-1c9df8f9"},
               {"pattern", "conv_bias_act"},
               {"nodes", {"/layer2/conv/Conv", "/layer2/Add", "/layer2/act/LeakyRelu"}},
               {"status", "excluded"},
               {"backend", "generated-cpp"},
               {"reason", "breaks equivalence: max abs error 0.31 > atol 1e-05"},
               {"predicted_saved_us", kPredictedExcluded},
               {"measured_saved_us", nullptr},
               {"max_abs_error", 0.31}}}}};
  }
};

}  // namespace fx::testing
