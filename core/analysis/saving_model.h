// SPDX-License-Identifier: Apache-2.0
#pragma once
// The saving model: a fused group's time saved, predicted directly from what fusion
// changes, and calibrated against measured savings (`fxc calibrate --from`).
//
// The difference-of-times prediction (group_terms.h: predict_group_us) subtracts two
// large predicted times (the unfused members, the fused kernel), so a 10% kernel error
// becomes a 30-50% saving error. Here the saving is a sum of the terms fusion changes,
// each timed on the (kernel-fitted) device profile, with one coefficient per term and
// per fused-kernel class (the class of the kernel that runs the group: conv,
// depthwise, matmul, reduction = row kernel, elementwise = loop nest):
//
//   saved = c0 x members      the unfused members other than the anchor (their launches
//                             and traffic; members codegen left apart cancel)
//         + c1 x traffic      the intermediates not written and read back
//                             (bytes_saved / elementwise bandwidth)
//         + c2 x launches     the launches avoided x launch overhead
//         + c3 x relayout     the activations the unfused anchor converts between
//                             layouts on every call (a spatial conv: input to NHWC,
//                             output back; cost_model.h: relayout_bytes) at the
//                             elementwise bandwidth: the fused conv chain keeps NHWC
//                             between fused convs (codegen's layout plan)
//         + c4 x anchor_flop  the anchor's compute time (flops / its class's FLOP/s): a
//                             fused kernel of another quality (oneDNN post-ops, tiles)
//         - c5 x fused_cost   what the fused kernel adds: the epilogue bytes at the
//                             elementwise bandwidth (anchor groups), or the fused loop /
//                             row kernel's own time on its class's rates
//         + c6 x anchor_memory   the anchor's bytes at its class's bandwidth: the unfused
//                             and the fused anchor are different implementations
//                             (oneDNN's plain NCHW GEMM vs its NHWC brgemm convolution,
//                             the runtime's depthwise loop vs the generated one) whose
//                             difference scales with what the anchor moves, not only with
//                             what it computes
//         + c7 x anchor_weights  the anchor's constant bytes (weights) at the elementwise
//                             bandwidth: the unfused 1x1 conv is one NCHW GEMM that
//                             streams its weight matrix per block of pixels, which costs
//                             most where the weights are large against a small map
//                             (MobileNetV2's 1x1 convs on 7x7: 160x960 weights, 49
//                             pixels); 0 for a depthwise anchor (one small filter per
//                             plane: the next term)
//         + c8 x anchor_planes   the channel planes of an unfused depthwise conv x the
//                             launch overhead: the runtime's NCHW depthwise kernel sets up
//                             each plane on its own (padded copy into stride phases), a
//                             fixed cost per plane that the fused NHWC loop does not pay
//                             (half of a 7x7 depthwise conv's time)
//         - c9 x fused_fixed  the fused kernel's fixed cost beyond one dispatch of the
//                             runtime's (in launch overheads, one per fused kernel): the
//                             generated loop's or primitive's setup, which no term that
//                             scales with bytes or FLOPs carries; it decides the groups
//                             of a few hundred bytes (SE blocks' Sigmoid -> Mul on
//                             [1, C, 1, 1]), which run slower fused
//
// A conv anchor the runtime runs with oneDNN's Winograd convolution (cost_model.h:
// Cost::winograd; ResNet's layer1 3x3 convs) runs so in the unfused and in the fused
// program: both reorder their activations into the blocked layout and back and compute
// alike, so its relayout, anchor_flop, anchor_memory and anchor_weights terms are 0
// (what fusion changes there is the members, traffic, launches and the epilogue). The
// same holds where the fused kernel runs the anchor's own runtime kernel and then the
// rest as generated code (GroupTermsSample::anchor_runtime: an epilogue oneDNN's post-ops
// cannot express, such as x * HardSigmoid(x)).
//
// A group codegen splits into several kernels is predicted from those kernels
// (GroupTermsSample::after_kernels, slowest first): its class is that of the first fused
// one, and the kernels that run a member alone cancel in `members`.
//
// Prior (what the uncalibrated cost model says): c = (1, 0, 0, 0, 0, 1, 0, 0, 0, 0). The
// fit is weighted least squares on the measured savings, each group weighed by
// 1 / (noise^2 + (rel_floor x unfused)^2), unfused = the members' kernel times on the
// profile (noisy groups count less; the floor makes the fit aim at the error relative to
// what the group costs unfused, so that a small group counts as much as a large one
// without the groups that save least outweighing the others), made robust (Huber's
// M-estimate: a group whose residual, in units of that assumed error, is beyond
// `robust_k` robust spreads of all the class's is weighed down, so that the few groups
// the terms cannot explain do not set the coefficients of all the others), ridge
// towards the prior (`ridge`
// groups' worth per coefficient), with c0, c1, c2, c5, c8, c9 kept >= 0 (those terms cannot change
// sign physically; the other anchor terms can: a fused anchor may be faster or slower). A term that
// is 0 for all of a class's groups stays at its prior. A class needs at least
// `min_groups_per_class` groups (12 by default: 2 per term of the original six); below
// that, for classes the fit never saw, and for classes where the fit, judged leaving each
// of its groups out, does no better than the difference of the profile's kernel times,
// the prediction is that difference, and says so (SavingPrediction::fitted).
//
// `fxc calibrate --from` stores the coefficients in the device profile it saves
// (saving_coefficients.h); analysis then predicts each group's saving with them
// (FusionState::estimate), saying which model produced each number.
//
//   SavingModel m = fit_saving_model(groups, fitted_profile);
//   double us = m.predict(fitted_profile, group).saved_us;

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/group_terms.h"
#include "device/device_profile.h"
#include "device/saving_coefficients.h"
#include "util/statistics.h"

namespace fx {

struct SavingFeatures {
  KernelClass fused_class = KernelClass::Elementwise;  // of the kernel that runs it fused
  std::array<double, kSavingTerms> us{};  // the terms above, in us (fused_cost negated)
};
SavingFeatures saving_features(const DeviceProfile& p, const GroupTermsSample& g);

struct SavingModelOptions {
  double ridge = 0.1;      // pull to the prior, in groups' worth per coefficient
  double rel_floor = 0.2;  // error (share of the unfused time) assumed beyond the noise
  // Huber's threshold, in robust spreads of the groups' residuals (each in units of its
  // assumed error: its noise and rel_floor): groups beyond it are weighed down
  // (iteratively reweighted least squares); 1.345, the textbook value, loses 5% of least
  // squares' efficiency were the residuals normal. 0: plain weighted least squares.
  double robust_k = 1.345;
  int robust_iterations = 20;
  // Two per term of the first six; the anchor terms added later are 0 for most classes
  // (anchor_planes: depthwise only) and the ridge holds a term the data do not pin down.
  int min_groups_per_class = 2 * kSavingTermsRequired;
  // Keep a class's fit only when, each of its groups predicted by a fit to the class's
  // other groups, its median relative error beats the difference of kernel times on
  // the same groups (a choice made on the fitting data alone).
  bool select_by_leave_one_out = true;
};

struct SavingPrediction {
  double saved_us = 0;
  bool fitted = false;  // false: fell back to the difference of kernel times
  KernelClass fused_class = KernelClass::Elementwise;  // whose coefficients (when fitted)
};

struct SavingModel {
  std::array<SavingClassFit, kKernelClassCount> classes{};
  SavingModelOptions options;
  int groups = 0;
  SavingPrediction predict(const DeviceProfile& p, const GroupTermsSample& g) const;
  // The coefficients as a device profile carries them (DeviceProfile::saving_model).
  SavingCoefficients coefficients(std::string fitted_to) const;
};

// A group's saving with coefficients a profile carries: those of the fused kernel's
// class when that class is fitted, else the difference of the kernel times on `p`.
SavingPrediction predict_saving(const SavingCoefficients& m, const DeviceProfile& p,
                                const GroupTermsSample& g);

SavingModel fit_saving_model(const std::vector<GroupTermsSample>& groups, const DeviceProfile& p,
                             const SavingModelOptions& o = {});

// Each group's saving predicted by the model fitted to all the other groups (leave one
// group out), in O(groups) solves: the fit's normal equations are sums over groups, so
// each leave-one-out fit comes from prefix and suffix sums. Whether a class keeps its
// fit or the difference of kernel times (select_by_leave_one_out) is decided once, on
// all groups: one bit per class that a single group hardly moves, where deciding it
// again per left-out group cost O(groups^3).
std::vector<SavingPrediction> leave_one_out_predictions(const std::vector<GroupTermsSample>& groups,
                                                        const DeviceProfile& p,
                                                        const SavingModelOptions& o = {});

// Savings of `groups` predicted by `m` on `p`, judged against the measured ones.
PredictionError saving_error(const SavingModel& m, const DeviceProfile& p,
                             const std::vector<GroupTermsSample>& groups);
// Each group predicted by a model fitted to all the others (leave-one-group-out): how the
// fit does on a group it has not seen. Judged over all groups, or only those whose
// measured saving is >= 2x their noise (`resolved_only`).
PredictionError leave_one_out_error(const std::vector<GroupTermsSample>& groups,
                                    const DeviceProfile& p, const SavingModelOptions& o = {},
                                    bool resolved_only = false);

}  // namespace fx
