// SPDX-License-Identifier: Apache-2.0
#pragma once
// Small graphs and a fixed device profile for the analysis tests. Shapes are static so
// every byte count can be worked out by hand.

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "device/device_profile.h"
#include "ir/graph_builder.h"

namespace fx::testing {

inline std::shared_ptr<TensorData> zeros(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (auto d : dims) n *= d;
  return TensorData::from_floats(dims, std::vector<float>(static_cast<std::size_t>(n), 0.f));
}

inline ValueId scalar(GraphBuilder& b, const std::string& name, float v) {
  return b.constant(name, TensorData::from_floats({}, {v}));
}

// 1 GB/s, 1 GFLOP/s, 1 us per launch, 1 MiB on chip: round numbers for hand checks.
inline DeviceProfile test_profile() {
  DeviceProfile p;
  p.name = "test-device";
  p.source = "unit test";
  p.memory_bandwidth_bytes_per_s = 1e9;
  p.peak_flops = 1e9;
  p.launch_overhead_s = 1e-6;
  p.onchip_capacity_bytes = 1 << 20;
  p.capacity_note = "test";
  return p;
}

// Conv 3x3, pads 1, stride 1: [1,cin,hw,hw] -> [1,cout,hw,hw].
inline ValueId conv(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, int64_t hw,
                    const std::string& name) {
  auto w = b.constant(name + "_w", zeros({cout, cin, 3, 3}));
  return b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, name,
              Shape::of({1, cout, hw, hw}));
}

inline ValueId batch_norm(GraphBuilder& b, ValueId x, int64_t c, const std::string& name) {
  std::vector<ValueId> in{x};
  for (const char* p : {"_scale", "_bias", "_mean", "_var"})
    in.push_back(b.constant(name + p, zeros({c})));
  return b.op("BatchNormalization", in, {}, name);
}

inline const FusionGroup* group_of(const AnalysisResult& r, const std::string& node) {
  for (const auto& g : r.groups)
    if (std::find(g.nodes.begin(), g.nodes.end(), node) != g.nodes.end()) return &g;
  return nullptr;
}

inline const NotFused* not_fused(const AnalysisResult& r, const std::string& a,
                                 const std::string& b) {
  for (const auto& n : r.not_fused)
    if (n.producer == a && n.consumer == b) return &n;
  return nullptr;
}

inline std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace fx::testing
