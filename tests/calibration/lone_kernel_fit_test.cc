// SPDX-License-Identifier: Apache-2.0
// What a plan saves on the kernels it leaves alone (calibration/lone_kernel_fit.h).

#include "calibration/lone_kernel_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace fx {
namespace {

nlohmann::json row(const std::string& node, const char* cls, double us, int group = -1) {
  nlohmann::json k = {{"name", node},    {"nodes", {node}},    {"op_types", {"X"}}, {"calls", 1},
                      {"median_us", us}, {"min_us", us * 0.9}, {"max_us", us}};
  if (cls) k["cost"] = {{"class", cls}, {"bytes", 1000.0}, {"flops", 0.0}, {"launches", 1}};
  if (group >= 0) k["group_id"] = group;
  return k;
}

// conv_a and pool run alone (before 100 / 50 us, after `conv_after` / 20 us); relu is
// fused into conv_b's group.
BeforeAfterDocument result(double conv_after, bool fused = true) {
  nlohmann::json before = {{"median_ms", 1.0}, {"kernels", nlohmann::json::array()}};
  before["kernels"] = {row("conv_a", "conv", 100), row("pool", "depthwise", 50),
                       row("conv_b", "conv", 400), row("relu", "elementwise", 10)};
  nlohmann::json after = {{"median_ms", 0.9}, {"kernels", nlohmann::json::array()}};
  after["kernels"] = {row("conv_a", "conv", conv_after), row("pool", "depthwise", 20)};
  nlohmann::json g = {
      {"id", "g0"}, {"nodes", {"conv_b", "relu"}}, {"status", fused ? "fused" : "rejected"}};
  nlohmann::json fg = row("fg", nullptr, 380, 0);
  fg["nodes"] = {"conv_b", "relu"};
  after["kernels"].push_back(fg);
  nlohmann::json doc = {{"schema", "fusion-explorer/before-after"},
                        {"schema_version", 1},
                        {"before", before},
                        {"after", after},
                        {"groups", {g}},
                        {"runs", 5}};
  return read_before_after_document(doc, "test.json");
}

TEST(LoneKernelFit, SharesOfTheLoneKernelsTimeSavedPerClass) {
  const LoneKernelTimes t = lone_kernel_times(result(90));
  EXPECT_DOUBLE_EQ(t.before_us[std::size_t(KernelClass::Conv)], 100);  // conv_b is grouped
  EXPECT_DOUBLE_EQ(t.after_us[std::size_t(KernelClass::Conv)], 90);
  EXPECT_DOUBLE_EQ(t.before_us[std::size_t(KernelClass::Depthwise)], 50);
  EXPECT_DOUBLE_EQ(t.before_us[std::size_t(KernelClass::Elementwise)], 0);
  const LoneKernelTimes m = lone_kernel_times(result(90), TimingStat::Min);
  EXPECT_DOUBLE_EQ(m.before_us[std::size_t(KernelClass::Conv)], 90);
}

TEST(LoneKernelFit, NoFusedGroupNoLoneKernels) {
  const LoneKernelTimes t = lone_kernel_times(result(90, false));
  for (double v : t.before_us) EXPECT_EQ(v, 0);
}

TEST(LoneKernelFit, MedianOverResultsAndTooFewResultsGiveNone) {
  // conv shares 0.1, 0.2, 0.5 over three results: median 0.2; depthwise 0.6 each.
  std::vector<LoneKernelTimes> r = {lone_kernel_times(result(90)), lone_kernel_times(result(80)),
                                    lone_kernel_times(result(50))};
  LoneKernelSaving s = fit_lone_kernel_saving(r);
  EXPECT_EQ(s.results, 3);
  EXPECT_NEAR(s.share[std::size_t(KernelClass::Conv)], 0.2, 1e-12);
  EXPECT_NEAR(s.share[std::size_t(KernelClass::Depthwise)], 0.6, 1e-12);
  EXPECT_EQ(s.share[std::size_t(KernelClass::MatMul)], 0);
  r.pop_back();
  EXPECT_EQ(fit_lone_kernel_saving(r).share[std::size_t(KernelClass::Conv)], 0);
  // Repeats of one model summed: (90 + 50) after of (100 + 100) before saves 30%.
  LoneKernelTimes one = lone_kernel_times(result(90));
  one += lone_kernel_times(result(50));
  EXPECT_DOUBLE_EQ(one.before_us[std::size_t(KernelClass::Conv)], 200);
  EXPECT_DOUBLE_EQ(one.after_us[std::size_t(KernelClass::Conv)], 140);
}

// A result of convs by kind: a spatial one (relayout 1 MB) saving `spatial_saved` us, a
// Winograd one and a 1x1 one (before 200, after `other_after`), and a Pad and its
// AveragePool (30 + 70 us) that the fused program ran as one step of `merged_after` us.
// No fused group: the layout plan changes convs anyway.
BeforeAfterDocument conv_kinds(double spatial_saved, double other_after, double merged_after) {
  auto conv = [](const std::string& n, double us, double relayout, bool winograd) {
    nlohmann::json k = row(n, "conv", us);
    k["cost"]["bytes"] = 2e6;
    k["cost"]["relayout_bytes"] = relayout;
    k["cost"]["winograd"] = winograd;
    return k;
  };
  nlohmann::json before = {{"median_ms", 1.0}, {"kernels", nlohmann::json::array()}};
  before["kernels"] = {conv("sp", 500, 1e6, false), conv("wino", 300, 1e6, true),
                       conv("pw", 200, 0, false), row("pad", "data_movement", 30),
                       row("pool", "pooling", 70)};
  nlohmann::json after = {{"median_ms", 0.9}, {"kernels", nlohmann::json::array()}};
  nlohmann::json merged = row("pool", nullptr, merged_after);
  merged["nodes"] = {"pad", "pool"};
  merged["op_types"] = {"Pad", "AveragePool"};
  after["kernels"] = {conv("sp", 500 - spatial_saved, 0, false), conv("wino", 250, 0, true),
                      conv("pw", other_after, 0, false), merged};
  nlohmann::json doc = {{"schema", "fusion-explorer/before-after"},
                        {"schema_version", 1},
                        {"before", before},
                        {"after", after},
                        {"groups", nlohmann::json::array()},
                        {"runs", 5}};
  return read_before_after_document(doc, "kinds.json");
}

TEST(LoneKernelFit, ConvsByKindAndMergedStepsEvenWithoutGroups) {
  const LoneKernelTimes t = lone_kernel_times(conv_kinds(100, 180, 10));
  EXPECT_DOUBLE_EQ(t.spatial_saved_us, 100);
  EXPECT_DOUBLE_EQ(t.spatial_relayout_bytes, 1e6);  // the Winograd conv's are not counted
  EXPECT_DOUBLE_EQ(t.other_conv_before_us, 200);
  EXPECT_DOUBLE_EQ(t.other_conv_after_us, 180);
  EXPECT_DOUBLE_EQ(t.merged_before_us, 100);
  EXPECT_DOUBLE_EQ(t.merged_after_us, 10);
  // No fused group: no class shares from it.
  for (double v : t.before_us) EXPECT_EQ(v, 0);
}

TEST(LoneKernelFit, MergedStepsAreMeasuredAgainstTheirPredictedTimeWhenAProfileIsGiven) {
  DeviceProfile p;
  p.name = "test";
  p.memory_bandwidth_bytes_per_s = 1e9;
  p.peak_flops = 1e9;
  p.launch_overhead_s = 1e-6;
  const BeforeAfterDocument doc = conv_kinds(100, 180, 10);
  double predicted = 0;
  for (const KernelRow& k : doc.run("before")->kernels)
    if (k.nodes[0] == "pad" || k.nodes[0] == "pool") predicted += kernel_time(p, *k.cost) * 1e6;
  ASSERT_GT(predicted, 0);
  const LoneKernelTimes t = lone_kernel_times(doc, TimingStat::Median, &p);
  EXPECT_FALSE(t.merged_unpredicted);
  EXPECT_NEAR(t.merged_predicted_us, predicted, 1e-9);
  // 90 us saved per `predicted` us, on every model alike.
  const LoneKernelSaving s = fit_lone_kernel_saving({t, t, t});
  EXPECT_NEAR(s.merged_share, std::min(90 / predicted, kMaxMergedRatio), 1e-9);
  // Without a profile: per measured us.
  EXPECT_TRUE(lone_kernel_times(doc).merged_unpredicted);
}

TEST(LoneKernelFit, KindsAreMediansOverModelsAndNeverNegative) {
  std::vector<LoneKernelTimes> r = {lone_kernel_times(conv_kinds(100, 180, 10)),
                                    lone_kernel_times(conv_kinds(50, 190, 20)),
                                    lone_kernel_times(conv_kinds(-20, 220, 50))};
  LoneKernelSaving s = fit_lone_kernel_saving(r);
  EXPECT_NEAR(s.spatial_conv_s_per_byte, 50e-6 / 1e6, 1e-20);  // 50 us per MB
  EXPECT_NEAR(s.other_conv_share, 0.05, 1e-12);
  EXPECT_NEAR(s.merged_share, 0.8, 1e-12);
  EXPECT_TRUE(s.has_conv_kinds());
  r = {lone_kernel_times(conv_kinds(-10, 220, 10)), lone_kernel_times(conv_kinds(-20, 230, 10)),
       lone_kernel_times(conv_kinds(-5, 210, 10))};
  s = fit_lone_kernel_saving(r);
  EXPECT_EQ(s.spatial_conv_s_per_byte, 0);
  EXPECT_EQ(s.other_conv_share, 0);
  r.pop_back();  // too few models: not fitted
  s = fit_lone_kernel_saving(r);
  EXPECT_TRUE(std::isnan(s.spatial_conv_s_per_byte));
  EXPECT_TRUE(std::isnan(s.merged_share));
  EXPECT_FALSE(s.has_conv_kinds());
}

}  // namespace
}  // namespace fx
