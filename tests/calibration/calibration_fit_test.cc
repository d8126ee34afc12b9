// SPDX-License-Identifier: Apache-2.0
// Fitting the cost model to before/after measurements (core/calibration/*_fit.h)
// and `fxc calibrate --from`, on fixtures built from a known linear model:
//   measured_us = bytes_saved / 20 GB/s + launches_saved * 4 us

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "calibration/group_fit.h"
#include "calibration/result_samples.h"
#include "profile/child_process.h"
#include "util/error.h"
#include "util/statistics.h"

namespace fx {
namespace {

using nlohmann::json;

constexpr double kBandwidth = 20e9, kLaunch = 4e-6;

double truth_us(double bytes, double launches) {
  return (bytes / kBandwidth + launches * kLaunch) * 1e6;
}

// Six groups; the result's own predictions are off by x2 (three) and x0.5 (three), so
// that their median relative error is exactly 0.75.
json fixture() {
  const double bytes[] = {1e5, 4e5, 2e6, 8e6, 3e7, 6e7};
  const int launches[] = {1, 3, 2, 4, 1, 3};
  json groups = json::array();
  for (int i = 0; i < 6; ++i) {
    double m = truth_us(bytes[i], launches[i]);
    groups.push_back({{"id", "g" + std::to_string(i)},
                      {"status", "fused"},
                      {"bytes_saved", bytes[i]},
                      {"launches_saved", launches[i]},
                      {"predicted_saved_us", i % 2 ? 2 * m : 0.5 * m},
                      {"measured_saved_us", m}});
  }
  // Neither of these may enter the fit.
  groups.push_back({{"id", "x"},
                    {"status", "excluded"},
                    {"bytes_saved", 1e9},
                    {"launches_saved", 1},
                    {"predicted_saved_us", 1},
                    {"measured_saved_us", nullptr}});
  groups.push_back({{"id", "y"},
                    {"status", "fused"},
                    {"bytes_saved", 1e9},
                    {"launches_saved", 1},
                    {"predicted_saved_us", nullptr},
                    {"measured_saved_us", 1e6}});
  return {{"schema", "fusion-explorer/before-after"},
          {"estimate_profile", "cpu-host"},
          {"before", {{"median_ms", 1.0}}},
          {"after", {{"median_ms", 0.5}}},
          {"groups", groups}};
}

TEST(CalibrationFit, RecoversTheParametersOfALinearModel) {
  auto samples = calibration_samples(fixture(), "fixture.json");
  ASSERT_EQ(samples.size(), 6u);
  CalibrationFit f = fit_calibration(samples);
  EXPECT_NEAR(f.bandwidth_bytes_per_s(), kBandwidth, kBandwidth * 1e-6);
  EXPECT_NEAR(f.launch_overhead_s, kLaunch, kLaunch * 1e-6);
  EXPECT_LT(f.rms_residual_us, 1e-6);
  EXPECT_TRUE(f.note.empty()) << f.note;
  EXPECT_EQ(f.before.groups, 6);
  EXPECT_NEAR(f.before.median_abs_rel_error, 0.75, 1e-12);
  EXPECT_NEAR(f.after.median_abs_rel_error, 0.0, 1e-6);
  EXPECT_NEAR(f.after.spearman, 1.0, 1e-12);
  for (const auto& s : samples) EXPECT_NEAR(f.predict_us(s), s.measured_us, 1e-6 * s.measured_us);
}

TEST(CalibrationFit, NegativeParameterIsClampedAndSaid) {
  // Savings that shrink with launches: the unconstrained overhead would be negative.
  std::vector<CalibrationSample> s;
  for (int i = 1; i <= 5; ++i)
    s.push_back({"g", 1e6 * i, double(i % 3), NAN, (1e6 * i / kBandwidth - 1e-6 * (i % 3)) * 1e6});
  for (auto& v : s) v.predicted_us = v.measured_us;
  CalibrationFit f = fit_calibration(s);
  EXPECT_EQ(f.launch_overhead_s, 0.0);
  EXPECT_GT(f.seconds_per_byte, 0.0);
  EXPECT_NE(f.note.find("launches"), std::string::npos) << f.note;
}

TEST(CalibrationFit, TooFewGroupsOrNotAResultIsAnError) {
  EXPECT_THROW(fit_calibration({{"g", 1e6, 1, 1, 1}}), Error);
  EXPECT_THROW(calibration_samples(json{{"kernels", json::array()}}, "p.json"), FileError);
}

TEST(CalibrationFit, SpearmanAndMedianError) {
  EXPECT_DOUBLE_EQ(spearman_correlation({1, 2, 3}, {30, 20, 10}), -1.0);
  EXPECT_TRUE(std::isnan(spearman_correlation({1, 2}, {5, 5})));
  PredictionError e = prediction_error({2, 1, 9}, {1, 1, 0});  // measured 0 is skipped
  EXPECT_EQ(e.groups, 3);
  EXPECT_DOUBLE_EQ(e.median_abs_rel_error, 0.5);  // median of {1.0, 0.0}
}

TEST(CalibrateCli, FromFixtureWritesTheFittedProfileAndBothErrors) {
  auto dir = std::filesystem::temp_directory_path() / "fx_calibrate_tests";
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "result.json").string(), out = (dir / "fitted.json").string();
  std::ofstream(in) << fixture().dump();
  std::filesystem::remove(out);
  ChildOptions o;
  o.timeout_s = 60;
  auto r = run_child({FX_FXC_PATH, "calibrate", "--from", in, "--out", out, "--json"}, o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["groups"], 6);
  EXPECT_NEAR(j["bandwidth_bytes_per_s"].get<double>(), kBandwidth, kBandwidth * 1e-6);
  EXPECT_NEAR(j["before"]["median_abs_rel_error"].get<double>(), 0.75, 1e-9);
  EXPECT_NEAR(j["after"]["median_abs_rel_error"].get<double>(), 0.0, 1e-6);
  std::ifstream saved(out);
  ASSERT_TRUE(saved) << out;
  json p = json::parse(saved);
  EXPECT_NEAR(p["memory_bandwidth_bytes_per_s"].get<double>(), kBandwidth, kBandwidth * 1e-6);
  EXPECT_NEAR(p["launch_overhead_s"].get<double>(), kLaunch, kLaunch * 1e-6);
  EXPECT_NE(p["source"].get<std::string>().find("fitted"), std::string::npos);

  auto bad = run_child({FX_FXC_PATH, "calibrate", "--from", "/nonexistent/r.json"}, o);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("/nonexistent/r.json"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace fx
