// SPDX-License-Identifier: Apache-2.0
// The saving model (saving_model.h): per fused-kernel class, coefficients on the terms
// fusion changes, fitted to measured group savings. On synthetic groups whose savings
// are made from known coefficients, the fit recovers them; the physical constraints,
// the prior, the fallback for small classes and the leave-one-out judgement behave as
// documented.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "analysis/saving_model.h"

namespace fx {
namespace {

DeviceProfile profile() {
  DeviceProfile p;
  p.name = "test";
  p.memory_bandwidth_bytes_per_s = 20e9;
  p.peak_flops = 100e9;
  p.launch_overhead_s = 2e-6;
  auto set = [&](KernelClass c, double bw, double fl) {
    p.kernel_classes[static_cast<std::size_t>(c)] = {bw, fl};
  };
  set(KernelClass::Elementwise, 10e9, 5e9);
  set(KernelClass::Conv, 30e9, 80e9);
  set(KernelClass::Reduction, 5e9, 2e9);
  return p;
}

// A conv + BN + Relu group of random, independent sizes (so that the terms are not
// collinear): the anchor, two elementwise members, the fused conv with its epilogue.
GroupTermsSample conv_group(std::mt19937& rng, int i) {
  std::uniform_real_distribution<double> u(0.2, 5.0);
  GroupTermsSample g;
  g.id = "g" + std::to_string(i);
  const double out = u(rng) * 1e6, w = u(rng) * 1e6, flops = u(rng) * 1e8, in = u(rng) * 1e6;
  // Every fourth conv is 1x1: nothing to relayout.
  g.unfused = {{KernelClass::Conv, out + w + in, flops, 1, 0, false, i % 4 ? out + in : 0.0, w},
               {KernelClass::Elementwise, 2 * out, out / 4, 1},
               {KernelClass::Elementwise, 2 * out * u(rng), out / 4, 1}};
  g.fused = {KernelClass::Conv, out + w, flops, 1, out * u(rng), true};
  g.bytes_saved = 4 * out * u(rng);
  g.launches_saved = 1 + i % 3;
  g.noise_us = 1;
  return g;
}

double combine(const std::array<double, kSavingTerms>& c, const SavingFeatures& f) {
  double s = 0;
  for (int i = 0; i < kSavingTerms; ++i) s += c[i] * f.us[i];
  return s;
}

// The savings the profile's model `c` would measure on `n` random conv groups, each
// scattered by a relative normal noise of `rel_noise`.
std::vector<GroupTermsSample> conv_groups_saving(const DeviceProfile& p,
                                                 const std::array<double, kSavingTerms>& c, int n,
                                                 unsigned seed, double rel_noise) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, rel_noise);
  std::vector<GroupTermsSample> groups;
  for (int i = 0; i < n; ++i) {
    GroupTermsSample g = conv_group(rng, i);
    g.measured_us = combine(c, saving_features(p, g)) * (1 + noise(rng));
    groups.push_back(g);
  }
  return groups;
}

TEST(SavingModel, FeaturesAreTheTermsFusionChanges) {
  const DeviceProfile p = profile();
  GroupTermsSample g;
  // The conv's 3 MB: 1 MB of weights, 2 MB of activations it converts between layouts.
  g.unfused = {{KernelClass::Conv, 3e6, 6e8, 1, 0, false, 2e6},
               {KernelClass::Elementwise, 2e6, 0, 1}};
  g.fused = {KernelClass::Conv, 3e6, 6e8, 1, 1e6, true};
  g.bytes_saved = 2e6;
  g.launches_saved = 1;
  SavingFeatures f = saving_features(p, g);
  EXPECT_EQ(f.fused_class, KernelClass::Conv);
  EXPECT_NEAR(f.us[0], 2 + 2e6 / 10e9 * 1e6, 1e-9);  // the Relu: launch + 2 MB at 10 GB/s
  EXPECT_NEAR(f.us[1], 2e6 / 10e9 * 1e6, 1e-9);      // intermediates at elementwise bandwidth
  EXPECT_NEAR(f.us[2], 2, 1e-9);                     // one launch avoided
  EXPECT_NEAR(f.us[3], 2e6 / 10e9 * 1e6, 1e-9);      // its relayout, at the copy bandwidth
  EXPECT_NEAR(f.us[4], 6e8 / 80e9 * 1e6, 1e-9);      // the anchor's compute
  EXPECT_NEAR(f.us[5], -1e6 / 10e9 * 1e6, 1e-9);     // the epilogue, a cost
  EXPECT_NEAR(f.us[6], 3e6 / 30e9 * 1e6, 1e-9);      // the anchor's bytes, its class's rate
  EXPECT_EQ(f.us[7], 0);                             // no weights given
  EXPECT_EQ(f.us[8], 0);                             // not depthwise: no planes
  EXPECT_NEAR(f.us[9], -2, 1e-9);                    // one fused kernel's fixed cost
  g.unfused[0].constant_bytes = 1e6;
  EXPECT_NEAR(saving_features(p, g).us[7], 1e6 / 10e9 * 1e6, 1e-9);  // weights, copy rate
  // A member that codegen left apart ran before and after: it cancels.
  g.after_kernels = {g.fused, g.unfused[1]};
  EXPECT_NEAR(saving_features(p, g).us[0], 0, 1e-9);
  // A row kernel has no anchor; its cost is its own time on the reduction rates.
  GroupTermsSample r;
  r.unfused = {{KernelClass::Reduction, 4e6, 1e6, 1}, {KernelClass::Elementwise, 4e6, 1e6, 1}};
  r.fused = {KernelClass::Reduction, 4e6, 2e6, 1, 0, true};
  f = saving_features(p, r);
  EXPECT_EQ(f.fused_class, KernelClass::Reduction);
  EXPECT_EQ(f.us[3], 0);
  EXPECT_EQ(f.us[4], 0);
  for (int i : {6, 7, 8}) EXPECT_EQ(f.us[i], 0) << saving_term_name(i);  // no anchor
  EXPECT_NEAR(f.us[5], -(2 + std::max(4e6 / 5e9, 2e6 / 2e9) * 1e6), 1e-9);
}

TEST(SavingModel, AnAnchorRunByItsRuntimeKernelChangesOnlyWhatItsMembersDid) {
  const DeviceProfile p = profile();
  GroupTermsSample g;
  g.unfused = {{KernelClass::Conv, 3e6, 6e8, 1, 0, false, 2e6, 1e6},
               {KernelClass::Elementwise, 2e6, 0, 1}};
  g.fused = {KernelClass::Conv, 3e6, 6e8, 1, 1e6, true};
  g.bytes_saved = 2e6;
  g.launches_saved = 1;
  const SavingFeatures fused_anchor = saving_features(p, g);
  for (int i : {3, 4, 6, 7}) EXPECT_GT(fused_anchor.us[i], 0) << saving_term_name(i);
  // The fused kernel runs the unfused conv, then its generated epilogue: the anchor's
  // relayout, compute, bytes and weights are what they were unfused.
  g.anchor_runtime = true;
  const SavingFeatures runtime_anchor = saving_features(p, g);
  EXPECT_EQ(runtime_anchor.fused_class, KernelClass::Conv);
  for (int i : {3, 4, 6, 7, 8}) EXPECT_EQ(runtime_anchor.us[i], 0) << saving_term_name(i);
  for (int i : {0, 1, 2, 5, 9})
    EXPECT_DOUBLE_EQ(runtime_anchor.us[i], fused_anchor.us[i]) << saving_term_name(i);
  // A class fitted with a large relayout coefficient predicts such a group from its
  // members alone.
  SavingCoefficients m;
  m.groups = 20;
  auto& conv = m.classes[static_cast<std::size_t>(KernelClass::Conv)];
  conv.fitted = true;
  conv.groups = 20;
  conv.coefficients = {1, 0, 0, 5, 0, 1, 0, 0, 0, 0};
  const double members = runtime_anchor.us[0] + runtime_anchor.us[5];
  EXPECT_NEAR(predict_saving(m, p, g).saved_us, members, 1e-9);
  g.anchor_runtime = false;
  EXPECT_NEAR(predict_saving(m, p, g).saved_us, members + 5 * fused_anchor.us[3], 1e-9);
}

TEST(SavingModel, RecoversKnownCoefficientsFromSyntheticGroups) {
  const DeviceProfile p = profile();
  // Planes stay 0 (no depthwise anchor here): that coefficient stays at its prior.
  const std::array<double, kSavingTerms> truth = {0.8, 0.5, 3.0, -0.2, 0.1, 1.5, 0.3, -0.4, 0};
  // 0.2% noise: launches are a small term.
  const std::vector<GroupTermsSample> groups = conv_groups_saving(p, truth, 60, 11, 0.002);
  SavingModelOptions o;
  o.ridge = 0.001;  // the data say it all
  SavingModel m = fit_saving_model(groups, p, o);
  const SavingClassFit& c = m.classes[static_cast<std::size_t>(KernelClass::Conv)];
  EXPECT_EQ(c.groups, 60);
  EXPECT_TRUE(c.fitted);  // and better than the difference of times, leaving groups out
  EXPECT_LT(c.leave_one_out_error, c.difference_error);
  // The launches term is the smallest (a few us against hundreds): weighed relative to
  // each group's unfused time, the 0.2% noise leaves its coefficient within 10%.
  for (int i = 0; i < kSavingTerms; ++i)
    EXPECT_NEAR(c.coefficients[i], truth[i],
                (i == 2 ? 0.1 : 0.05) * std::max(1.0, std::fabs(truth[i])))
        << saving_term_name(i);
  PredictionError e = saving_error(m, p, groups);
  EXPECT_LT(e.median_abs_rel_error, 0.02);
  EXPECT_GT(e.spearman, 0.99);
  // Each group predicted by a fit to the other 59 is nearly as good.
  PredictionError loo = leave_one_out_error(groups, p, o);
  EXPECT_EQ(loo.groups, 60);
  EXPECT_LT(loo.median_abs_rel_error, 0.03);
}

TEST(SavingModel, AFewGroupsTheTermsCannotExplainDoNotSetTheCoefficients) {
  const DeviceProfile p = profile();
  const std::array<double, kSavingTerms> truth = {0.8, 0.5, 3.0, -0.2, 0.1, 1.5, 0.3, -0.4, 0};
  std::vector<GroupTermsSample> groups = conv_groups_saving(p, truth, 80, 23, 0.02);
  // One group in ten saves far more than its terms say (the runtime ran another
  // implementation on its shape): no coefficient can explain it.
  for (int i = 3; i < 80; i += 10) groups[i].measured_us += 2 * unfused_group_us(p, groups[i]);
  auto error_on_the_others = [&](const SavingModelOptions& o) {
    const SavingModel m = fit_saving_model(groups, p, o);
    std::vector<double> pred, meas;
    for (int i = 0; i < 80; ++i)
      if (i % 10 != 3)
        pred.push_back(m.predict(p, groups[i]).saved_us), meas.push_back(groups[i].measured_us);
    return prediction_error(pred, meas).median_abs_rel_error;
  };
  SavingModelOptions robust, plain;
  plain.robust_k = 0;
  const double r = error_on_the_others(robust), l = error_on_the_others(plain);
  // Huber's weights bound each such group's pull on the coefficients; least squares lets
  // it grow with the excess, and spreads the excess over every group.
  EXPECT_LT(r, 0.15);
  EXPECT_GT(l, 3 * r);
}

// A depthwise conv + Clip group: the runtime's NCHW depthwise kernel (planes = channels)
// and the Clip apart, the fused depthwise with its epilogue.
GroupTermsSample depthwise_group(double channels, double map, double flops_per_byte) {
  GroupTermsSample g;
  const double bytes = 4 * channels * map * 2;  // input and output planes
  g.unfused = {{KernelClass::Depthwise, bytes, bytes * flops_per_byte, 1, 0, false, 0,
                channels * 40, channels},
               {KernelClass::Elementwise, bytes, bytes / 8, 1}};
  g.fused = {KernelClass::Depthwise, bytes, bytes * flops_per_byte, 1, bytes / 2, true};
  g.bytes_saved = bytes;
  g.launches_saved = 1;
  g.noise_us = 0.5;
  return g;
}

// Real groups scatter around any linear model by a share of what they cost (their
// neighbours' layouts, cache state): weighing each group by 1 / (its saving)^2 would let
// the groups that happened to save little pull every coefficient down, and the class be
// under-predicted as a whole. Weighed relative to the unfused time, the fit stays
// unbiased: its predictions sum to the measured savings.
TEST(SavingModel, ScatterRelativeToTheUnfusedTimeLeavesTheFitUnbiased) {
  const DeviceProfile p = profile();
  const std::array<double, kSavingTerms> truth = {0.8, 0.5, 3.0, -0.2, 0.1, 1.5, 0.3, -0.4, 0};
  std::mt19937 rng(5);
  std::normal_distribution<double> scatter(0, 1);
  std::vector<GroupTermsSample> groups;
  double measured = 0;
  for (int i = 0; i < 200; ++i) {
    GroupTermsSample g = conv_group(rng, i);
    const double saved = combine(truth, saving_features(p, g));
    g.measured_us =
        saved + 0.3 * saved * scatter(rng) + 0.02 * unfused_group_us(p, g) * scatter(rng);
    measured += g.measured_us;
    groups.push_back(g);
  }
  const SavingModel m = fit_saving_model(groups, p);
  double predicted = 0;
  for (const auto& g : groups) predicted += m.predict(p, g).saved_us;
  EXPECT_NEAR(predicted / measured, 1.0, 0.1);
}

TEST(SavingModel, PerPlaneSetupOfDepthwiseConvsIsFittedAndRaisesSmallMapsSavings) {
  DeviceProfile p = profile();
  p.kernel_classes[static_cast<std::size_t>(KernelClass::Depthwise)] = {15e9, 20e9};
  // Savings made with a per-plane cost of 0.1 launch overheads (0.2 us per plane) on top
  // of the members and a third of the anchor's memory time.
  const std::array<double, kSavingTerms> truth = {1.0, 0.2, 0.5, 0, 0, 1.0, 0.3, 0, 0.1};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const double maps[] = {49, 196, 784, 3136, 12544};
  std::vector<GroupTermsSample> groups;
  for (int i = 0; i < 40; ++i) {
    GroupTermsSample g = depthwise_group(32 * (1 + int(u(rng) * 30)), maps[i % 5], 2 + u(rng));
    g.id = "dw" + std::to_string(i);
    g.measured_us = combine(truth, saving_features(p, g));
    groups.push_back(g);
  }
  SavingModelOptions o;
  o.ridge = 0.001;
  const SavingModel m = fit_saving_model(groups, p, o);
  const SavingClassFit& c = m.classes[static_cast<std::size_t>(KernelClass::Depthwise)];
  ASSERT_TRUE(c.fitted);
  EXPECT_NEAR(c.coefficients[8], 0.1, 0.01);
  // The same bytes over 20x more planes (960 channels of 7x7 against 48 of 980 pixels):
  // the fitted model predicts the extra per-plane setup as saved.
  GroupTermsSample few = depthwise_group(48, 980, 2.5), many = depthwise_group(960, 49, 2.5);
  const double extra = (960 - 48) * 0.1 * p.launch_overhead_s * 1e6;
  EXPECT_NEAR(many.unfused[0].bytes, few.unfused[0].bytes, 1e-6);
  EXPECT_NEAR(m.predict(p, many).saved_us - m.predict(p, few).saved_us, extra, 0.05 * extra);
  // Without the term (older fits: coefficient 0) the two would be predicted alike.
  SavingModel old = m;
  old.classes[static_cast<std::size_t>(KernelClass::Depthwise)].coefficients[8] = 0;
  EXPECT_NEAR(old.predict(p, many).saved_us, old.predict(p, few).saved_us, 0.05 * extra);
  // A depthwise anchor's weights go with its planes, not the weights term.
  EXPECT_EQ(saving_features(p, many).us[7], 0);
}

TEST(SavingModel, TermsThatCannotChangeSignStayNonNegative) {
  const DeviceProfile p = profile();
  // Savings that would want a negative launch coefficient.
  const std::array<double, kSavingTerms> truth = {1.0, 0.0, -5.0, 0.0, 0.0, 1.0};
  std::mt19937 rng(3);
  std::vector<GroupTermsSample> groups;
  for (int i = 0; i < 40; ++i) {
    GroupTermsSample g = conv_group(rng, i);
    g.measured_us = combine(truth, saving_features(p, g));
    groups.push_back(g);
  }
  SavingModel m = fit_saving_model(groups, p);
  const auto& c = m.classes[static_cast<std::size_t>(KernelClass::Conv)].coefficients;
  for (int i : {0, 1, 2, 5, 8, 9}) EXPECT_GE(c[i], 0.0) << saving_term_name(i);
  EXPECT_EQ(c[2], 0.0);
}

// An elementwise chain (Sigmoid -> Mul) fused into one generated loop, of `bytes` per
// tensor: two runtime kernels before, one loop after that reads the input once.
GroupTermsSample swish_group(double bytes) {
  GroupTermsSample g;
  g.unfused = {{KernelClass::Elementwise, 2 * bytes, bytes / 4, 1},
               {KernelClass::Elementwise, 3 * bytes, bytes / 4, 1}};
  g.fused = {KernelClass::Elementwise, 2 * bytes, bytes / 2, 1, 0, true};
  g.bytes_saved = 2 * bytes;
  g.launches_saved = 1;
  g.noise_us = 0.05;
  return g;
}

// A fused kernel's fixed cost beyond one runtime dispatch is a constant per group that
// no term scaling with bytes, FLOPs or launches saved carries: fitted, it makes a group
// of a few hundred bytes (an SE block's [1, C, 1, 1]) lose, as measured, while the large
// ones still save what their traffic says.
TEST(SavingModel, FusedKernelsFixedCostMakesTinyGroupsLose) {
  const DeviceProfile p = profile();
  std::array<double, kSavingTerms> truth{};
  truth[0] = 1, truth[5] = 1, truth[9] = 1.5;  // the loop costs 1.5 dispatches more
  std::vector<GroupTermsSample> groups;
  for (double bytes = 256; bytes <= 16e6; bytes *= 1.6) {
    GroupTermsSample g = swish_group(bytes);
    g.measured_us = combine(truth, saving_features(p, g));
    groups.push_back(g);
  }
  ASSERT_GE(groups.size(), 20u);
  SavingModelOptions o;
  o.ridge = 0.001;
  SavingModel m = fit_saving_model(groups, p, o);
  const SavingClassFit& c = m.classes[static_cast<std::size_t>(KernelClass::Elementwise)];
  ASSERT_TRUE(c.fitted);
  EXPECT_GT(c.coefficients[9], 0) << "fused_fixed";
  const GroupTermsSample tiny = swish_group(512), large = swish_group(8e6);
  // The difference of kernel times says the tiny group saves a launch; it loses.
  EXPECT_GT(predict_group_us(p, tiny), 0);
  EXPECT_LT(m.predict(p, tiny).saved_us, 0);
  EXPECT_NEAR(m.predict(p, tiny).saved_us, combine(truth, saving_features(p, tiny)), 0.1);
  EXPECT_NEAR(m.predict(p, large).saved_us, combine(truth, saving_features(p, large)),
              0.02 * combine(truth, saving_features(p, large)));
}

TEST(SavingModel, SmallOrUnseenClassesFallBackToTheDifferenceOfTimes) {
  const DeviceProfile p = profile();
  std::mt19937 rng(5);
  std::vector<GroupTermsSample> groups;
  for (int i = 0; i < 5; ++i) {  // fewer than 2 per coefficient
    GroupTermsSample g = conv_group(rng, i);
    g.measured_us = 100 + i;
    groups.push_back(g);
  }
  SavingModel m = fit_saving_model(groups, p);
  EXPECT_EQ(m.classes[static_cast<std::size_t>(KernelClass::Conv)].groups, 5);
  EXPECT_FALSE(m.classes[static_cast<std::size_t>(KernelClass::Conv)].fitted);
  EXPECT_EQ(m.classes[static_cast<std::size_t>(KernelClass::Conv)].why, "too few groups");
  SavingPrediction s = m.predict(p, groups[0]);
  EXPECT_FALSE(s.fitted);
  EXPECT_DOUBLE_EQ(s.saved_us, predict_group_us(p, groups[0]));
  // A row-kernel group: no reduction group was fitted either.
  GroupTermsSample r;
  r.unfused = {{KernelClass::Reduction, 4e6, 1e6, 1}, {KernelClass::Elementwise, 4e6, 1e6, 1}};
  r.fused = {KernelClass::Reduction, 4e6, 2e6, 1, 0, true};
  EXPECT_FALSE(m.predict(p, r).fitted);
  EXPECT_DOUBLE_EQ(m.predict(p, r).saved_us, predict_group_us(p, r));
}

TEST(SavingModel, KeepsTheDifferenceOfTimesWhereTheFitDoesNoBetterLeavingGroupsOut) {
  const DeviceProfile p = profile();
  std::mt19937 rng(13);
  std::vector<GroupTermsSample> groups;
  for (int i = 0; i < 20; ++i) {
    GroupTermsSample g = conv_group(rng, i);
    g.measured_us = predict_group_us(p, g);  // the difference of times is exact
    groups.push_back(g);
  }
  SavingModel m = fit_saving_model(groups, p);
  const SavingClassFit& c = m.classes[static_cast<std::size_t>(KernelClass::Conv)];
  EXPECT_FALSE(c.fitted);
  EXPECT_EQ(c.why, "not better leaving groups out");
  EXPECT_NEAR(c.difference_error, 0.0, 1e-12);
  EXPECT_GE(c.leave_one_out_error, c.difference_error);
  EXPECT_DOUBLE_EQ(m.predict(p, groups[0]).saved_us, predict_group_us(p, groups[0]));
  // Without the selection the fit is kept.
  SavingModelOptions o;
  o.select_by_leave_one_out = false;
  EXPECT_TRUE(fit_saving_model(groups, p, o).classes[2].fitted);
}

TEST(SavingModel, TermsNoGroupHasKeepTheirPrior) {
  const DeviceProfile p = profile();
  // Row kernels: no anchor terms. Savings = 1.2 x members - 0.5 x fused cost.
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(0.5, 8.0);
  std::vector<GroupTermsSample> groups;
  for (int i = 0; i < 30; ++i) {
    GroupTermsSample g;
    const double b = u(rng) * 1e6;
    g.unfused = {{KernelClass::Reduction, b, b / 4, 1},
                 {KernelClass::Elementwise, b * u(rng), b / 4, 1},
                 {KernelClass::Elementwise, b * u(rng), b / 4, 1}};
    g.fused = {KernelClass::Reduction, b * u(rng), b / 2, 1, 0, true};
    g.bytes_saved = 0;
    g.launches_saved = 0;
    SavingFeatures f = saving_features(p, g);
    g.measured_us = 1.2 * f.us[0] + 0.5 * f.us[5];
    g.noise_us = 0.5;
    groups.push_back(g);
  }
  SavingModelOptions o;
  o.ridge = 0.001;
  SavingModel m = fit_saving_model(groups, p, o);
  const auto& c = m.classes[static_cast<std::size_t>(KernelClass::Reduction)];
  ASSERT_TRUE(c.fitted);
  EXPECT_NEAR(c.coefficients[0], 1.2, 0.01);
  EXPECT_NEAR(c.coefficients[5], 0.5, 0.01);
  EXPECT_EQ(c.coefficients[1], 0.0);  // traffic: no group moves any, the prior (0) stays
  EXPECT_EQ(c.coefficients[3], 0.0);  // anchor terms: no anchor
  EXPECT_EQ(c.coefficients[4], 0.0);
}

// leave_one_out_predictions (prefix and suffix sums of the normal equations) gives what
// refitting without each group gives, group by group; a class too small to fit without
// the left-out group falls back to the difference of times, as a refit would.
TEST(SavingModel, LeaveOneOutPredictionsAreThoseOfRefitsWithoutEachGroup) {
  const DeviceProfile p = profile();
  const std::array<double, kSavingTerms> truth = {0.8, 0.5, 3.0, -0.2, 0.1, 1.5, 0.3, -0.4, 0};
  std::vector<GroupTermsSample> groups = conv_groups_saving(p, truth, 40, 17, 0.1);
  for (int i = 0; i < 40; ++i) groups[i].noise_us = 0.5 + i % 3;
  groups[5].measured_us = NAN;  // in no fit: predicted by the fit to all the others
  SavingModelOptions o;
  o.select_by_leave_one_out = false;  // the refits below make no selection either
  // Exact for least squares; the robust fit's weights are those of the fit to all the
  // groups (decided once, as the class's choice), which a refit would decide again.
  o.robust_k = 0;
  const std::vector<SavingPrediction> fast = leave_one_out_predictions(groups, p, o);
  ASSERT_EQ(fast.size(), groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::vector<GroupTermsSample> rest;
    for (std::size_t j = 0; j < groups.size(); ++j)
      if (j != i) rest.push_back(groups[j]);
    const SavingPrediction refit = fit_saving_model(rest, p, o).predict(p, groups[i]);
    EXPECT_TRUE(fast[i].fitted) << i;
    EXPECT_NEAR(fast[i].saved_us, refit.saved_us, 1e-9 * std::max(1.0, std::fabs(refit.saved_us)))
        << i;
  }
  // leave_one_out_error judges exactly these predictions.
  std::vector<double> pred, meas;
  for (std::size_t i = 0; i < groups.size(); ++i)
    pred.push_back(fast[i].saved_us), meas.push_back(groups[i].measured_us);
  EXPECT_DOUBLE_EQ(leave_one_out_error(groups, p, o).median_abs_rel_error,
                   prediction_error(pred, meas).median_abs_rel_error);
  // At the class minimum, a left-out group leaves too few: the difference of times.
  std::vector<GroupTermsSample> few(groups.begin() + 6,
                                    groups.begin() + 6 + o.min_groups_per_class);
  for (const auto& f : leave_one_out_predictions(few, p, o)) EXPECT_FALSE(f.fitted);
  EXPECT_DOUBLE_EQ(leave_one_out_predictions(few, p, o)[0].saved_us, predict_group_us(p, few[0]));
}

}  // namespace
}  // namespace fx
