// SPDX-License-Identifier: Apache-2.0
// The per-kernel fit of `fxc calibrate --from` (calibration_fit.h: fit_kernel_rates) on
// synthetic kernels timed by a known profile: the rates are recovered, outliers do not
// drag them, group savings are predicted from cost terms, and the CLI writes the fitted
// profile from a result with per-kernel cost terms.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "analysis/saving_model.h"
#include "calibration/fused_fit.h"
#include "calibration/kernel_fit.h"
#include "calibration/learn.h"
#include "calibration/merge_repeats.h"
#include "calibration/result_samples.h"
#include "profile/before_after_json.h"
#include "profile/child_process.h"
#include "util/error.h"

namespace fx {
namespace {

using nlohmann::json;

DeviceProfile base_profile() {
  DeviceProfile p;
  p.name = "base";
  p.source = "unit test";
  p.memory_bandwidth_bytes_per_s = 10e9;
  p.peak_flops = 100e9;
  p.launch_overhead_s = 10e-6;
  p.onchip_capacity_bytes = 1 << 20;
  return p;
}

// The "machine": rates quite unlike the base profile's.
DeviceProfile truth() {
  DeviceProfile p = base_profile();
  p.launch_overhead_s = 3e-6;
  auto set = [&](KernelClass c, double bw, double fl) {
    p.kernel_classes[static_cast<std::size_t>(c)] = {bw, fl};
  };
  set(KernelClass::Elementwise, 6e9, 4e9);
  set(KernelClass::Reduction, 3e9, 1.5e9);
  set(KernelClass::Conv, 20e9, 40e9);
  set(KernelClass::Depthwise, 2.5e9, 2e9);
  set(KernelClass::MatMul, 30e9, 60e9);
  set(KernelClass::DataMovement, 1.5e9, 1e9);
  set(KernelClass::Pooling, 4e9, 3e9);
  return p;
}

// Per class: memory-bound and compute-bound kernels of many sizes, times from `truth`
// with +-5% noise; every 25th kernel an outlier (x4: a scheduler slice).
std::vector<KernelSample> synthetic_kernels() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> logsize(std::log(1e4), std::log(5e7));
  std::uniform_real_distribution<double> noise(0.95, 1.05);
  // FLOPs per byte on both sides of each class's ridge point (truth flops / bandwidth).
  const double intensity[kKernelClassCount][2] = {{0.2, 2.0}, {0.1, 2.0}, {0.5, 8.0}, {0.2, 3.0},
                                                  {0.5, 8.0}, {0.0, 0.0}, {0.2, 2.0}};
  const DeviceProfile t = truth();
  std::vector<KernelSample> out;
  int n = 0;
  for (int c = 0; c < kKernelClassCount; ++c)
    for (int i = 0; i < 40; ++i) {
      KernelTerms k;
      k.kernel_class = static_cast<KernelClass>(c);
      k.bytes = std::exp(logsize(rng));
      k.flops = k.bytes * intensity[c][i % 2];
      double s = kernel_time(t, k) * noise(rng);
      if (++n % 25 == 0) s *= 4;
      out.push_back({"k" + std::to_string(n), k, s * 1e6});
    }
  return out;
}

TEST(KernelFit, RecoversKnownRatesFromSyntheticKernels) {
  KernelFit f = fit_kernel_rates(synthetic_kernels(), base_profile(), "synthetic");
  const DeviceProfile t = truth();
  EXPECT_TRUE(f.profile.calibrated);
  EXPECT_EQ(f.profile.calibration, "synthetic");
  EXPECT_EQ(f.profile.label(), "base (calibrated)");
  EXPECT_NEAR(f.profile.launch_overhead_s, t.launch_overhead_s, 0.1 * t.launch_overhead_s);
  for (int c = 0; c < kKernelClassCount; ++c) {
    auto kc = static_cast<KernelClass>(c);
    EXPECT_NEAR(f.profile.bandwidth(kc), t.bandwidth(kc), 0.05 * t.bandwidth(kc))
        << kernel_class_name(kc);
    if (kc != KernelClass::DataMovement) {  // copies compute nothing: no FLOP/s to fit
      EXPECT_NEAR(f.profile.flops(kc), t.flops(kc), 0.05 * t.flops(kc)) << kernel_class_name(kc);
    }
    EXPECT_EQ(f.classes[c].kernels, 40);
  }
  EXPECT_LT(f.median_abs_rel_error, 0.05);
  EXPECT_GT(f.base_median_abs_rel_error, 0.5);
}

TEST(KernelFit, ClassWithoutKernelsKeepsTheBaseRates) {
  std::vector<KernelSample> s;
  for (const auto& k : synthetic_kernels())
    if (k.terms.kernel_class == KernelClass::Elementwise) s.push_back(k);
  KernelFit f = fit_kernel_rates(s, base_profile(), "elementwise only");
  EXPECT_NEAR(f.profile.bandwidth(KernelClass::Elementwise), 6e9, 0.3e9);
  EXPECT_NEAR(f.profile.bandwidth(KernelClass::Conv), 10e9, 1e-3 * 10e9);
  EXPECT_NEAR(f.profile.flops(KernelClass::MatMul), 100e9, 1e-3 * 100e9);
  EXPECT_EQ(f.classes[static_cast<int>(KernelClass::Conv)].kernels, 0);
}

TEST(KernelFit, TooFewKernelsIsAnError) {
  EXPECT_THROW(fit_kernel_rates({}, base_profile(), ""), Error);
}

TEST(KernelFit, GroupSavingIsUnfusedMinusFusedKernelTime) {
  DeviceProfile p = truth();
  GroupTermsSample g;
  // Conv (1 MB, 8 MFLOP) + BatchNorm (0.5 MB) + Relu (0.5 MB) fused into one conv kernel
  // that moves 0.75 MB and computes the Conv's FLOPs only.
  g.unfused = {{KernelClass::Conv, 1e6, 8e6, 1},
               {KernelClass::Elementwise, 0.5e6, 0.25e6, 1},
               {KernelClass::Elementwise, 0.5e6, 0.125e6, 1}};
  g.fused = {KernelClass::Conv, 0.75e6, 8e6, 1};
  double conv = std::max(1e6 / 20e9, 8e6 / 40e9) + 3e-6;  // 200 us + 3
  double ew = 0.5e6 / 6e9 + 3e-6;                         // 83.3 us + 3, twice
  double fused = std::max(0.75e6 / 20e9, 8e6 / 40e9) + 3e-6;
  EXPECT_NEAR(predict_group_us(p, g), (conv + 2 * ew - fused) * 1e6, 1e-9);
  g.measured_us = predict_group_us(p, g);
  g.predicted_us = 2 * g.measured_us;
  PredictionError e = group_error(p, {g, g});
  EXPECT_NEAR(e.median_abs_rel_error, 0.0, 1e-12);
  EXPECT_NEAR(recorded_group_error({g, g}).median_abs_rel_error, 1.0, 1e-12);
}

// Fused kernels timed by a "machine" whose fused convs run at 0.7x the conv class's
// time with their epilogue at 2 GB/s, fused matmuls at 1.5x with a 1 GB/s epilogue, and
// row kernels at 0.4x the reduction class's time; +-5% noise and an outlier.
DeviceProfile fused_truth() {
  DeviceProfile p = truth();
  p.fused_classes[static_cast<std::size_t>(KernelClass::Conv)] = {0.7, 2e9};
  p.fused_classes[static_cast<std::size_t>(KernelClass::MatMul)] = {1.5, 1e9};
  p.fused_classes[static_cast<std::size_t>(KernelClass::Reduction)] = {0.4, 0};
  return p;
}

std::vector<KernelSample> synthetic_fused_kernels() {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> logsize(std::log(1e5), std::log(2e7));
  std::uniform_real_distribution<double> share(0.1, 1.0), noise(0.95, 1.05);
  const DeviceProfile t = fused_truth();
  std::vector<KernelSample> out;
  int n = 0;
  for (KernelClass c : {KernelClass::Conv, KernelClass::MatMul, KernelClass::Reduction})
    for (int i = 0; i < 30; ++i) {
      KernelTerms k;
      k.kernel_class = c;
      k.fused = true;
      k.bytes = std::exp(logsize(rng));
      k.flops = k.bytes * (i % 2 ? 8.0 : 0.5);
      // Anchors: an epilogue of 10-100% of the anchor's bytes; rows have none.
      k.epilogue_bytes = c == KernelClass::Reduction ? 0 : k.bytes * share(rng);
      double s = kernel_time(t, k) * noise(rng);
      if (++n % 29 == 0) s *= 3;
      out.push_back({"f" + std::to_string(n), k, s * 1e6});
    }
  return out;
}

TEST(FusedFit, RecoversFusedScaleAndEpilogueBandwidth) {
  // The unfused rates are known (stage 1); stage 2 fits only the fused ones.
  FusedFit f = fit_fused_rates(synthetic_fused_kernels(), truth());
  const DeviceProfile t = fused_truth();
  for (KernelClass c : {KernelClass::Conv, KernelClass::MatMul, KernelClass::Reduction}) {
    EXPECT_NEAR(f.profile.fused_scale(c), t.fused_scale(c), 0.05 * t.fused_scale(c))
        << kernel_class_name(c);
    EXPECT_EQ(f.classes[static_cast<int>(c)].kernels, 30);
  }
  EXPECT_NEAR(f.profile.epilogue_bandwidth(KernelClass::Conv), 2e9, 0.1e9);
  EXPECT_NEAR(f.profile.epilogue_bandwidth(KernelClass::MatMul), 1e9, 0.05e9);
  // Rows move no epilogue bytes: their epilogue bandwidth is not fitted.
  EXPECT_EQ(f.classes[static_cast<int>(KernelClass::Reduction)].with_epilogue, 0);
  EXPECT_EQ(f.profile.fused_classes[static_cast<int>(KernelClass::Reduction)]
                .epilogue_bandwidth_bytes_per_s,
            0);
  // Classes without fused kernels keep the defaults; the unfused rates are untouched.
  EXPECT_EQ(f.profile.fused_scale(KernelClass::Depthwise), 1.0);
  EXPECT_EQ(f.profile.bandwidth(KernelClass::Conv), truth().bandwidth(KernelClass::Conv));
  EXPECT_LT(f.median_abs_rel_error, 0.05);
  EXPECT_GT(f.unfitted_median_abs_rel_error, 0.2);
}

// Generated loops (elementwise) that pay 4 launch overheads of setup on every call
// beyond their class's time at 0.8x, from a few hundred bytes to megabytes, and fused
// convs that pay none: the elementwise fixed cost is recovered with the scale, and the
// anchor class (a library primitive, whose setup its unfused rates carry) gets none.
TEST(FusedFit, RecoversTheFixedCostOfGeneratedKernels) {
  DeviceProfile t = truth();
  const auto ew = std::size_t(KernelClass::Elementwise);
  t.fused_classes[ew] = {0.8, 0, 4 * t.launch_overhead_s};
  t.fused_classes[std::size_t(KernelClass::Conv)] = {0.7, 2e9};
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> logsize(std::log(2e2), std::log(1e7)), noise(0.95, 1.05);
  std::vector<KernelSample> fused;
  for (KernelClass c : {KernelClass::Elementwise, KernelClass::Conv})
    for (int i = 0; i < 60; ++i) {
      KernelTerms k;
      k.kernel_class = c;
      k.fused = true;
      k.bytes = std::exp(logsize(rng));
      k.flops = k.bytes * (c == KernelClass::Conv ? 8.0 : 0.25);
      k.epilogue_bytes = c == KernelClass::Conv ? 0.5 * k.bytes : 0;
      fused.push_back(
          {"k" + std::to_string(fused.size()), k, kernel_time(t, k) * noise(rng) * 1e6});
    }
  const FusedFit f = fit_fused_rates(fused, truth());
  EXPECT_NEAR(f.profile.fused_fixed_s(KernelClass::Elementwise), 12e-6, 0.3 * 12e-6);
  EXPECT_NEAR(f.profile.fused_scale(KernelClass::Elementwise), 0.8, 0.05);
  EXPECT_EQ(f.profile.fused_fixed_s(KernelClass::Conv), 0);
  EXPECT_LT(f.classes[ew].median_abs_rel_error, 0.05);
  // A small loop is timed with its fixed cost: 200 B at 0.8x 6 GB/s is 27 ns.
  KernelTerms small{KernelClass::Elementwise, 200, 50, 1, 0, true};
  EXPECT_NEAR(kernel_time(t, small), 3e-6 + 12e-6 + 0.8 * 200 / 6e9, 1e-12);
  small.fused = false;  // the unfused kernel pays no generated setup
  EXPECT_NEAR(kernel_time(t, small), 3e-6 + 200 / 6e9, 1e-12);
}

TEST(FusedFit, NoFusedKernelsFitsNothing) {
  FusedFit f = fit_fused_rates({}, truth());
  EXPECT_EQ(f.kernels, 0);
  for (int c = 0; c < kKernelClassCount; ++c)
    EXPECT_EQ(f.profile.fused_scale(static_cast<KernelClass>(c)), 1.0);
}

TEST(KernelFit, FusedKernelUsesTheFusedRatesOfItsClass) {
  const DeviceProfile p = fused_truth();
  KernelTerms k{KernelClass::Conv, 1e6, 8e6, 1, 0.5e6, true};
  // launch + 0.7 x max(1 MB / 20 GB/s, 8 MFLOP / 40 GFLOP/s) + 0.5 MB / 2 GB/s
  EXPECT_NEAR(kernel_time(p, k), 3e-6 + 0.7 * 200e-6 + 250e-6, 1e-12);
  // The same terms unfused: the class's time, the epilogue at the elementwise bandwidth.
  k.fused = false;
  EXPECT_NEAR(kernel_time(p, k), 3e-6 + 200e-6 + 0.5e6 / 6e9, 1e-12);
  // A split group: the saving is against all the kernels that ran it after.
  GroupTermsSample g;
  g.unfused = {{KernelClass::Conv, 1e6, 8e6, 1}, {KernelClass::Elementwise, 0.5e6, 0, 1}};
  g.fused = {KernelClass::Conv, 1e6, 8e6, 1, 0.5e6, true};
  const double whole = predict_group_us(p, g);
  EXPECT_NEAR(
      whole,
      (kernel_time(p, g.unfused[0]) + kernel_time(p, g.unfused[1]) - kernel_time(p, g.fused)) * 1e6,
      1e-9);
  g.after_kernels = g.unfused;  // codegen left both apart: nothing saved
  EXPECT_NEAR(predict_group_us(p, g), 0.0, 1e-9);
}

// A before/after result whose unfused kernels were timed on truth(), with one group of
// each kind of the test above.
json result_fixture() {
  json kernels = json::array();
  for (const auto& k : synthetic_kernels())
    kernels.push_back({{"name", k.name},
                       {"op_types", {"X"}},
                       {"nodes", {k.name}},
                       {"calls", 1},
                       {"median_us", k.measured_us},
                       {"cost", kernel_terms_json(k.terms)}});
  kernels.push_back({{"name", "shape"}, {"median_us", 1.0}, {"cost", nullptr}});  // skipped
  const DeviceProfile t = fused_truth();
  json after = json::array();
  for (const auto& k : synthetic_fused_kernels())
    after.push_back({{"name", k.name},
                     {"op_types", {"X", "Y"}},
                     {"nodes", {k.name + "a", k.name + "b"}},
                     {"calls", 1},
                     {"median_us", k.measured_us},
                     {"cost", kernel_terms_json(k.terms)}});
  json groups = json::array();
  for (int i = 1; i <= 4; ++i) {
    GroupTermsSample g;
    g.unfused = {{KernelClass::Conv, i * 1e6, i * 8e6, 1, 0, false, i * 0.4e6},
                 {KernelClass::Elementwise, i * 0.5e6, 0, 1}};
    g.fused = {KernelClass::Conv, i * 1e6, i * 8e6, 1, i * 0.6e6, true};
    json unfused = json::array();
    for (const auto& u : g.unfused) unfused.push_back(kernel_terms_json(u));
    const std::string id = "g" + std::to_string(i);
    // The members' kernels before and the fused kernel after, each with its quartiles
    // over runs (+-5 us): the group's noise.
    const double conv = kernel_time(t, g.unfused[0]) * 1e6, ew = kernel_time(t, g.unfused[1]) * 1e6,
                 fused = kernel_time(t, g.fused) * 1e6;
    auto row = [](const std::string& name, std::vector<std::string> nodes, double us,
                  const KernelTerms& k) {
      return json{
          {"name", name},     {"nodes", nodes},  {"calls", 1},      {"median_us", us},
          {"min_us", us - 8}, {"q1_us", us - 5}, {"q3_us", us + 5}, {"cost", kernel_terms_json(k)}};
    };
    kernels.push_back(row(id + "conv", {id + "conv"}, conv, g.unfused[0]));
    kernels.push_back(row(id + "relu", {id + "relu"}, ew, g.unfused[1]));
    after.push_back(row(id, {id + "conv", id + "relu"}, fused, g.fused));
    groups.push_back(
        {{"id", id},
         {"status", "fused"},
         {"nodes", {id + "conv", id + "relu"}},
         {"bytes_saved", i * 0.75e6},
         {"launches_saved", 1},
         {"predicted_saved_us", 1.0},
         {"measured_saved_us", predict_group_us(t, g)},
         {"cost_terms", {{"unfused", unfused}, {"fused", kernel_terms_json(g.fused)}}}});
  }
  return {{"schema", "fusion-explorer/before-after"},
          {"estimate_profile", "base"},
          {"runs", 16},
          {"before", {{"median_ms", 1.0}, {"kernels", kernels}}},
          {"after", {{"median_ms", 0.5}, {"kernels", after}}},
          {"groups", groups}};
}

TEST(KernelFit, SamplesFromAResult) {
  json doc = result_fixture();
  // 40 per class, 8 group members.
  EXPECT_EQ(kernel_samples(doc, "r.json").size(), 40u * kKernelClassCount + 8);
  EXPECT_EQ(fused_kernel_samples(doc).size(), 94u);
  auto groups = group_terms_samples(doc, "r.json");
  ASSERT_EQ(groups.size(), 4u);
  // Noise: three kernels, each IQR 10 us over 16 runs: 1.2533 x (10 / 1.349) / 4 per
  // kernel's median, in quadrature.
  const double per_kernel = 1.2533 * (10 / 1.349) / 4;
  EXPECT_NEAR(groups[0].noise_us, std::sqrt(3.0) * per_kernel, 1e-9);
  EXPECT_TRUE(groups[0].after_kernels.empty());  // one fused kernel: the group's own terms
  EXPECT_TRUE(groups[0].fused.fused);
  // The conv's relayout bytes come back from the result; results without them read 0.
  EXPECT_DOUBLE_EQ(groups[0].unfused[0].relayout_bytes, 0.4e6);
  EXPECT_DOUBLE_EQ(groups[0].unfused[1].relayout_bytes, 0);
  json older = doc;
  older["groups"][0]["cost_terms"]["unfused"][0].erase("relayout_bytes");
  EXPECT_DOUBLE_EQ(group_terms_samples(older, "r.json")[0].unfused[0].relayout_bytes, 0);
  // Likewise the weights and the depthwise planes (results before them: 0).
  json with_planes = doc;
  with_planes["groups"][0]["cost_terms"]["unfused"][0]["constant_bytes"] = 0.1e6;
  with_planes["groups"][0]["cost_terms"]["unfused"][0]["planes"] = 96;
  const auto planes = group_terms_samples(with_planes, "r.json");
  EXPECT_DOUBLE_EQ(planes[0].unfused[0].constant_bytes, 0.1e6);
  EXPECT_DOUBLE_EQ(planes[0].unfused[0].planes, 96);
  EXPECT_DOUBLE_EQ(groups[0].unfused[0].planes, 0);
  // And the Winograd flag: written and read back; results before it read false.
  EXPECT_FALSE(groups[0].unfused[0].winograd);
  json wino = doc;
  KernelTerms w = groups[0].unfused[0];
  w.winograd = true;
  wino["groups"][0]["cost_terms"]["unfused"][0] = kernel_terms_json(w);
  EXPECT_TRUE(group_terms_samples(wino, "r.json")[0].unfused[0].winograd);
  json pre = doc;
  pre["groups"][0]["cost_terms"]["unfused"][0].erase("winograd");
  EXPECT_FALSE(group_terms_samples(pre, "r.json")[0].unfused[0].winograd);
  // Which kernel ran the group: generated code with an anchor runs the anchor's runtime
  // kernel first (GroupTermsSample::anchor_runtime); oneDNN post-ops, or a result that
  // does not say, fuse the anchor.
  EXPECT_FALSE(groups[0].anchor_runtime);
  json generated = doc;
  generated["groups"][0]["backend"] = "generated-cpp";
  generated["groups"][1]["backend"] = "onednn-postops";
  const auto backends = group_terms_samples(generated, "r.json");
  EXPECT_TRUE(backends[0].anchor_runtime);
  EXPECT_FALSE(backends[1].anchor_runtime);
  // Fastest runs: each kernel 8 us below its median, so the saving is 8 us less.
  auto fastest = group_terms_samples(doc, "r.json", TimingStat::Min);
  EXPECT_NEAR(fastest[0].measured_us, groups[0].measured_us - 8, 1e-9);
  // A group measured below twice its noise is not resolved.
  groups[1].measured_us = groups[1].noise_us;
  EXPECT_EQ(resolved_groups(groups).size(), 3u);
  json old = doc;
  for (auto& k : old["before"]["kernels"]) k.erase("cost");
  EXPECT_THROW(kernel_samples(old, "old.json"), FileError);
  EXPECT_THROW(kernel_samples(json{{"groups", json::array()}}, "x.json"), FileError);
}

TEST(KernelFit, RepeatsMergeToTheMedianSavingWithTheirSpreadAsNoise) {
  auto group = [](const std::string& id, double us, double noise) {
    GroupTermsSample g;
    g.id = id;
    g.measured_us = us;
    g.noise_us = noise;
    return g;
  };
  // "a" in three repeats (100, 110, 130 us; each run's own noise 1 us), "b" in two, "c"
  // in one.
  std::vector<std::vector<GroupTermsSample>> reps = {
      {group("a", 100, 1), group("b", 50, 4)},
      {group("a", 130, 1), group("b", 54, 4), group("c", 7, 2)},
      {group("a", 110, 1)}};
  auto m = merge_repeats(reps);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].id, "a");
  EXPECT_EQ(m[0].repeats, 3);
  EXPECT_DOUBLE_EQ(m[0].measured_us, 110);  // the median
  // Between repeats: sample sd of {100, 130, 110} = sqrt(700 / 3), over sqrt(3), x 1.2533
  // for a median; it is far above the within-run noise (1 / sqrt(3)).
  EXPECT_NEAR(m[0].noise_us, 1.2533 * std::sqrt(700.0 / 3) / std::sqrt(3.0), 1e-9);
  // "b": repeats that agree better than each run's noise keep the within-run noise /
  // sqrt(2) (their spread would claim more precision than either run has).
  EXPECT_EQ(m[1].repeats, 2);
  EXPECT_DOUBLE_EQ(m[1].measured_us, 52);
  EXPECT_NEAR(m[1].noise_us, std::max(1.2533 * std::sqrt(8.0) / std::sqrt(2.0), 4 / std::sqrt(2.0)),
              1e-9);
  // "c", seen once, is as measured.
  EXPECT_EQ(m[2].repeats, 1);
  EXPECT_DOUBLE_EQ(m[2].measured_us, 7);
  EXPECT_DOUBLE_EQ(m[2].noise_us, 2);
  // One repeat: nothing changes.
  auto one = merge_repeats({reps[0]});
  EXPECT_DOUBLE_EQ(one[0].measured_us, 100);
  EXPECT_DOUBLE_EQ(one[0].noise_us, 1);
}

TEST(CalibrateCli, KernelFitWritesPerClassRatesAndJudgesGroups) {
  auto dir = std::filesystem::temp_directory_path() / "fx_kernel_fit_tests";
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "result.json").string(), out = (dir / "fitted.json").string(),
                    base = (dir / "base.json").string();
  std::ofstream(in) << result_fixture().dump();
  save_device_profile(base_profile(), base);
  std::filesystem::remove(out);
  ChildOptions o;
  o.timeout_s = 60;
  auto r = run_child({FX_FXC_PATH, "calibrate", "--from", in, "--evaluate", in, "--device", base,
                      "--out", out, "--json"},
                     o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["kernels"], 40 * kKernelClassCount + 8);
  EXPECT_EQ(j["groups"], 4);
  EXPECT_EQ(j["fused_fit"]["kernels"], 94);
  EXPECT_NEAR(j["fused_fit"]["classes"]["conv"]["scale"].get<double>(), 0.7, 0.05);
  EXPECT_NEAR(j["after"]["median_abs_rel_error"].get<double>(), 0.0, 0.05);
  EXPECT_EQ(j["resolved"]["groups"], 4);
  EXPECT_NEAR(j["after"]["spearman"].get<double>(), 1.0, 1e-9);
  EXPECT_GT(j["before"]["median_abs_rel_error"].get<double>(), 0.5);
  EXPECT_EQ(j["fitted_profile"], "base (calibrated)");
  ASSERT_EQ(j["evaluate"].size(), 1u);
  EXPECT_EQ(j["evaluate"][0]["groups"], 4);
  // The saving model: 4 conv groups are too few for its 6 coefficients, so the class
  // falls back to the difference of fitted kernel times (and says so).
  ASSERT_TRUE(j.contains("saving_model")) << j.dump(1);
  EXPECT_EQ(j["saving_model"]["groups"], 4);
  EXPECT_EQ(j["saving_model"]["classes"]["conv"]["groups"], 4);
  EXPECT_EQ(j["saving_model"]["classes"]["conv"]["fitted"], false);
  EXPECT_NEAR(j["saving_model"]["in_sample"]["median_abs_rel_error"].get<double>(),
              j["after"]["median_abs_rel_error"].get<double>(), 1e-9);
  EXPECT_TRUE(j["saving_model"].contains("leave_one_out"));
  EXPECT_EQ(j["saving_model"]["resolved"]["groups"], 4);
  EXPECT_TRUE(j["evaluate"][0].contains("saving_model"));
  EXPECT_EQ(j["group_rows"][0]["saving_model_fitted"], false);
  // Each row carries the saving model's terms on the fitted profile, to check by hand:
  // the conv's relayout (0.4 MB) at the fitted elementwise bandwidth.
  EXPECT_EQ(j["group_rows"][0]["saving_model_class"], "conv");
  const auto& terms = j["group_rows"][0]["saving_model_terms_us"];
  ASSERT_TRUE(terms.contains("anchor_relayout")) << terms.dump();
  EXPECT_NEAR(terms["anchor_relayout"].get<double>(),
              0.4e6 / j["bandwidth_bytes_per_s"].get<double>() * 1e6, 1e-6);
  DeviceProfile p = load_device_profile(out);
  EXPECT_TRUE(p.calibrated);
  EXPECT_NEAR(p.bandwidth(KernelClass::Conv), 20e9, 1e9);
  EXPECT_NEAR(p.flops(KernelClass::Conv), 40e9, 2e9);
  EXPECT_NEAR(p.fused_scale(KernelClass::MatMul), 1.5, 0.08);
  EXPECT_NEAR(p.epilogue_bandwidth(KernelClass::MatMul), 1e9, 0.08e9);

  // A second result of the same model (a repeat, another process) whose savings are
  // 10 us higher: its groups merge with the first's (median of two = the mean), its
  // kernels are fitted too.
  json again = result_fixture();
  again["model"] = "m.onnx";
  json first = result_fixture();
  first["model"] = "m.onnx";
  for (auto& g : again["groups"])
    g["measured_saved_us"] = g["measured_saved_us"].get<double>() + 10;
  const std::string in1 = (dir / "r1.json").string(), in2 = (dir / "r2.json").string();
  std::ofstream(in1) << first.dump();
  std::ofstream(in2) << again.dump();
  r = run_child({FX_FXC_PATH, "calibrate", "--from", in1, "--from", in2, "--evaluate", in1,
                 "--evaluate", in2, "--device", base, "--out", out, "--json"},
                o);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  j = json::parse(r.out);
  EXPECT_EQ(j["kernels"], 2 * (40 * kKernelClassCount + 8));
  EXPECT_EQ(j["groups"], 4);
  EXPECT_EQ(j["group_rows"][0]["repeats"], 2);
  EXPECT_NEAR(j["group_rows"][0]["measured_us"].get<double>(),
              first["groups"][0]["measured_saved_us"].get<double>() + 5, 1e-6);
  ASSERT_EQ(j["evaluate"].size(), 1u);  // one model, judged once on its merged groups
  EXPECT_EQ(j["evaluate"][0]["groups"], 4);
}

// `fxc calibrate --learn`: a model's result folded into the cached grid calibration, kept
// for later refits, opt-in (nothing is learned without --learn).
TEST(CalibrateCli, LearnFoldsAResultIntoTheCachedGrid) {
  const auto cache = std::filesystem::temp_directory_path() / "fx_learn_test";
  std::filesystem::remove_all(cache);
  const auto fx_cache = cache / "fusion-explorer";
  std::filesystem::create_directories(fx_cache / "calibration-grid");
  std::ofstream(fx_cache / "calibration-grid" / "conv.1.json") << result_fixture().dump();
  DeviceProfile cached = base_profile();
  cached.name = "cpu-host";
  cached.cpu_model = "grid CPU";
  cached.measured_ops = {"Conv", "Relu"};
  cached.source = "measured on this host (calibration grid)";
  save_device_profile(cached, (fx_cache / "cpu-host.json").string());
  const std::string model_result = (cache / "model.json").string();
  std::ofstream(model_result) << result_fixture().dump();

  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  ChildOptions o;
  o.timeout_s = 60;
  auto r = run_child({FX_FXC_PATH, "calibrate", "--learn", model_result}, o);
  auto none = run_child({FX_FXC_PATH, "calibrate", "--learn", (cache / "nope.json").string()}, o);
  if (old)
    setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CACHE_HOME");
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.err;
  EXPECT_TRUE(std::filesystem::exists(fx_cache / "learned" / "model.json"));
  const DeviceProfile p = load_device_profile((fx_cache / "cpu-host.json").string());
  EXPECT_TRUE(p.calibrated);
  EXPECT_NE(p.source.find("1 learned result"), std::string::npos) << p.source;
  EXPECT_EQ(p.cpu_model, "grid CPU");  // still this machine's
  EXPECT_EQ(p.measured_ops, cached.measured_ops);
  EXPECT_NE(r.out.find("before the update"), std::string::npos) << r.out;
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("nope.json"), std::string::npos) << none.err;
  std::filesystem::remove_all(cache);
}

// learn_from_results (what `fxc calibrate --learn` and the GUI call): the learned result
// is kept, the estimate error on its groups is given before and after the update (the
// base profile is far from the "machine", the update is fitted to it), a result learned
// again replaces its copy, a file that is not a result names itself.
TEST(Learn, ReportsTheEstimateErrorBeforeAndAfterTheUpdate) {
  const auto dir = std::filesystem::temp_directory_path() / "fx_learn_core_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "grid");
  std::ofstream(dir / "grid" / "conv.1.json") << result_fixture().dump();
  const std::string model = (dir / "model.json").string();
  std::ofstream(model) << result_fixture().dump();
  LearnOptions o;
  o.results = {model};
  o.grid_dir = (dir / "grid").string();
  o.learned_dir = (dir / "learned").string();
  o.cached = base_profile();
  o.cached.source = "measured on this host (calibration grid) + 3 learned results";
  o.date = "2026-11-27";
  const LearnOutcome l = learn_from_results(o);
  EXPECT_EQ(l.learned_results, 1);
  EXPECT_TRUE(std::filesystem::exists(dir / "learned" / "model.json"));
  EXPECT_EQ(l.profile.source, "measured on this host (calibration grid) + 1 learned result");
  ASSERT_GT(l.after.groups, 0);
  EXPECT_EQ(l.before.groups, l.after.groups);
  EXPECT_LT(l.after.median_abs_rel_error, l.before.median_abs_rel_error);
  EXPECT_EQ(learn_from_results(o).learned_results, 1);  // replaced, not added
  std::ofstream(dir / "bad.json") << "{\"groups\": 3}";
  o.results = {(dir / "bad.json").string()};
  try {
    learn_from_results(o);
    ADD_FAILURE() << "a file that is not a result was learned";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
  o.grid_dir = (dir / "no-grid").string();
  EXPECT_THROW(learn_from_results(o), Error);
  std::filesystem::remove_all(dir);
}

// A machine whose elementwise kernels follow the working-set curve closely and whose
// matmuls ignore it: the fit, started from "every class follows the copy", finds both
// degrees and the rates beyond the caches, from kernels spread over the curve.
TEST(KernelFit, RecoversHowEachClassFollowsTheWorkingSetCurve) {
  BandwidthCurve curve;
  curve.points = {{64e3, 200e9}, {2e6, 80e9}, {64e6, 30e9}, {128e6, 10e9}};
  DeviceProfile t = truth();
  t.bandwidth_curve = curve;
  t.bandwidth_curve.follow[static_cast<std::size_t>(KernelClass::Elementwise)] = 0.8;
  t.bandwidth_curve.follow[static_cast<std::size_t>(KernelClass::MatMul)] = 0.0;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> logsize(std::log(1e4), std::log(5e8));
  std::uniform_real_distribution<double> noise(0.97, 1.03);
  std::vector<KernelSample> s;
  for (KernelClass c : {KernelClass::Elementwise, KernelClass::MatMul})
    for (int i = 0; i < 60; ++i) {
      KernelTerms k;
      k.kernel_class = c;
      k.bytes = std::exp(logsize(rng));
      k.flops = c == KernelClass::MatMul && i % 2 ? 8 * k.bytes : 0;
      s.push_back({"k" + std::to_string(s.size()), k, kernel_time(t, k) * noise(rng) * 1e6});
    }
  DeviceProfile base = base_profile();
  base.bandwidth_curve = curve;  // follow 1 for every class
  KernelFit f = fit_kernel_rates(s, base, "curve");
  EXPECT_NEAR(f.profile.bandwidth_curve.follow[0], 0.8, 0.08);
  EXPECT_NEAR(f.profile.bandwidth_curve.follow[static_cast<std::size_t>(KernelClass::MatMul)], 0.0,
              0.1);
  EXPECT_NEAR(f.profile.bandwidth(KernelClass::Elementwise), 6e9, 0.05 * 6e9);
  EXPECT_NEAR(f.profile.bandwidth(KernelClass::MatMul), 30e9, 0.1 * 30e9);
  EXPECT_LT(f.median_abs_rel_error, 0.03);
  // Without the curve the same kernels cannot be fitted as well.
  KernelFit flat = fit_kernel_rates(s, base_profile(), "flat");
  EXPECT_GT(flat.median_abs_rel_error, 3 * f.median_abs_rel_error);
}

}  // namespace
}  // namespace fx
