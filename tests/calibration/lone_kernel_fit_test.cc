// SPDX-License-Identifier: Apache-2.0
// What a plan saves on the kernels it leaves alone (calibration/lone_kernel_fit.h).

#include "calibration/lone_kernel_fit.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fx
