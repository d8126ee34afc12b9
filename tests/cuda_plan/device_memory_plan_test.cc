// SPDX-License-Identifier: Apache-2.0
// The device memory plan: live values never overlap, sizes are the static shapes' bytes,
// views share their root's memory, and a symbolic dim is an error naming the value.

#include "cuda_plan/device_memory_plan.h"

#include <gtest/gtest.h>

#include <map>

#include "cuda_plan_test_util.h"
#include "util/error.h"

namespace fx::cuda {
namespace {

// Lifetime of each arena value in launch order: [first write, last read] (graph outputs
// live to the end), views extending their root's.
void expect_no_live_overlap(const Graph& g, const LaunchPlan& p, const DeviceMemoryPlan& m) {
  const int n = static_cast<int>(p.launches.size());
  std::map<ValueId, std::pair<int, int>> life;
  std::map<ValueId, ValueId> root;
  auto root_of = [&](ValueId v) {
    auto it = root.find(v);
    return it == root.end() ? v : it->second;
  };
  for (int s = 0; s < n; ++s) {
    const Launch& l = p.launches[static_cast<std::size_t>(s)];
    for (ValueId v : l.outputs) {
      const ValueId r = l.kind == LaunchKind::View ? root_of(l.inputs[0]) : v;
      root[v] = r;
      auto [it, fresh] = life.try_emplace(r, s, s);
      it->second.second = std::max(it->second.second, s);
    }
    for (ValueId v : l.inputs)
      if (root.count(v)) life[root[v]].second = std::max(life[root[v]].second, s);
  }
  for (ValueId v : g.outputs())
    if (root.count(v)) life[root[v]].second = n;
  std::vector<ValueId> vals;
  for (auto& [v, _] : life)
    if (m.buffer(v).region == Region::Arena) vals.push_back(v);
  ASSERT_FALSE(vals.empty());
  for (std::size_t i = 0; i < vals.size(); ++i) {
    const DeviceBuffer& a = m.buffer(vals[i]);
    EXPECT_EQ(a.offset % DeviceMemoryPlan::kAlignment, 0);
    EXPECT_EQ(a.bytes, *g.value(vals[i]).byte_size());
    EXPECT_LE(a.offset + a.bytes, m.arena_bytes);
    for (std::size_t j = i + 1; j < vals.size(); ++j) {
      const DeviceBuffer& b = m.buffer(vals[j]);
      const auto [fa, la] = life[vals[i]];
      const auto [fb, lb] = life[vals[j]];
      const bool live_together = fa <= lb && fb <= la;
      const bool overlap = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      EXPECT_FALSE(live_together && overlap) << g.value(vals[i]).name << " and "
                                             << g.value(vals[j]).name << " share memory while live";
    }
  }
}

TEST(DeviceMemoryPlan, LiveValuesNeverShareMemoryUnfusedAndFused) {
  for (const Graph& g : {testing::residual_cnn(), testing::mlp_block()}) {
    const LaunchPlan p = build_launch_plan(g, {});
    const DeviceMemoryPlan m = DeviceMemoryPlan::build(g, p);
    expect_no_live_overlap(g, p, m);
    // Reuse: the arena is smaller than every intermediate summed.
    EXPECT_LT(m.arena_bytes, m.unshared_bytes);
  }
  const Graph g = testing::residual_cnn();
  const FusionGroup a = testing::group_of(g, "fg-a", {"conv1", "relu1"}, "conv_bias_act");
  const LaunchPlan p = build_launch_plan(g, {&a});
  expect_no_live_overlap(g, p, DeviceMemoryPlan::build(g, p));
}

TEST(DeviceMemoryPlan, ConstantsAndInputsHaveRegionsViewsShareTheirRoot) {
  const Graph g = testing::residual_cnn();
  const DeviceMemoryPlan m = DeviceMemoryPlan::build(g, build_launch_plan(g, {}));
  const DeviceBuffer& x = m.buffer(g.find_value("x"));
  EXPECT_EQ(x.region, Region::Inputs);
  EXPECT_EQ(x.bytes, 2 * 8 * 16 * 16 * 4);
  EXPECT_EQ(m.input_bytes, x.bytes);  // already a multiple of 256
  int64_t weights = 0;
  for (const char* w : {"w1", "b1", "w2", "wf", "bf"}) {
    const DeviceBuffer& b = m.buffer(g.find_value(w));
    EXPECT_EQ(b.region, Region::Weights) << w;
    EXPECT_EQ(b.offset % DeviceMemoryPlan::kAlignment, 0) << w;
    weights += (b.bytes + 255) / 256 * 256;
  }
  EXPECT_EQ(m.weight_bytes, weights);
  const DeviceBuffer& gap = m.buffer(g.find_value("gap:0"));
  const DeviceBuffer& flat = m.buffer(g.find_value("flatten:0"));
  EXPECT_EQ(flat.region, Region::Arena);
  EXPECT_EQ(flat.offset, gap.offset);
  EXPECT_EQ(flat.bytes, 2 * 8 * 4);
}

TEST(DeviceMemoryPlan, SymbolicDimIsAnErrorNamingTheValue) {
  GraphBuilder b;
  auto x = b.input("x", {2, 8});
  const Shape sym(std::vector<Dim>{Dim::named("batch"), Dim::fixed(8)});
  b.output(b.op("Relu", {x}, {}, "relu", sym));
  Graph g = b.build();
  g.value(x).shape = sym;
  const LaunchPlan p = build_launch_plan(g, {});
  try {
    DeviceMemoryPlan::build(g, p);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'relu:0' has no static shape ([batch,8])"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fx::cuda
