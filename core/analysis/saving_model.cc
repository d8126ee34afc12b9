// SPDX-License-Identifier: Apache-2.0
#include "analysis/saving_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fx {
namespace {

constexpr std::array<double, kSavingTerms> kPrior = {1, 0, 0, 0, 0, 1, 0, 0, 0};
// Coefficients whose term cannot change sign (members, traffic, launches, fused cost,
// the per-plane setup the fused kernel does not do).
constexpr std::array<int, 5> kNonNegative = {0, 1, 2, 5, 8};

bool is_anchor_class(KernelClass c) {
  return c == KernelClass::Conv || c == KernelClass::Depthwise || c == KernelClass::MatMul;
}

// Time of one kernel on the class rates, without the fused scale or epilogue.
double class_time(const DeviceProfile& p, const KernelTerms& t) {
  return CostModel::time(p, t.bytes, t.flops, t.launches, t.kernel_class);
}

// Gaussian elimination with partial pivoting; false when singular.
bool solve_small(std::vector<double> a, std::vector<double> b, std::vector<double>& x) {
  const int n = static_cast<int>(b.size());
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(a[r * n + c]) > std::fabs(a[piv * n + c])) piv = r;
    if (!(std::fabs(a[piv * n + c]) > 1e-300)) return false;
    if (piv != c) {
      for (int k = 0; k < n; ++k) std::swap(a[c * n + k], a[piv * n + k]);
      std::swap(b[c], b[piv]);
    }
    for (int r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r * n + c] / a[c * n + c];
      if (f == 0) continue;
      for (int k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      b[r] -= f * b[c];
    }
  }
  x.resize(n);
  for (int i = 0; i < n; ++i) x[i] = b[i] / a[i * n + i];
  return true;
}

// min (y - X c)' W (y - X c) + sum_i d_i (c_i - prior_i)^2 with the non-negative
// coefficients >= 0: each subset of them held at 0 is solved exactly (32 systems of at
// most 9 unknowns) and the best feasible one kept.
std::array<double, kSavingTerms> constrained_fit(const std::vector<SavingFeatures>& x,
                                                 const std::vector<double>& y,
                                                 const std::vector<double>& w, double ridge) {
  constexpr int n = kSavingTerms;
  std::array<double, n * n> h{};
  std::array<double, n> r{};
  double yy = 0;
  for (std::size_t g = 0; g < x.size(); ++g) {
    yy += w[g] * y[g] * y[g];
    for (int i = 0; i < n; ++i) {
      r[i] += w[g] * x[g].us[i] * y[g];
      for (int j = 0; j < n; ++j) h[i * n + j] += w[g] * x[g].us[i] * x[g].us[j];
    }
  }
  // Ridge per coefficient in units of an average group's information on it, so that it
  // weighs the same whatever the term's scale; a term no group has stays at its prior.
  const double groups = std::max<double>(1, double(x.size()));
  for (int i = 0; i < n; ++i) {
    const double d = h[i * n + i] > 0 ? ridge * h[i * n + i] / groups : 1.0;
    h[i * n + i] += d;
    r[i] += d * kPrior[i];
    yy += d * kPrior[i] * kPrior[i];
  }
  std::array<double, n> best = kPrior;
  double best_obj = std::numeric_limits<double>::infinity();
  for (int mask = 0; mask < (1 << kNonNegative.size()); ++mask) {
    std::vector<int> free;
    for (int i = 0; i < n; ++i) {
      bool held = false;
      for (std::size_t k = 0; k < kNonNegative.size(); ++k)
        held = held || ((mask >> k) & 1 && kNonNegative[k] == i);
      if (!held) free.push_back(i);
    }
    const int m = static_cast<int>(free.size());
    std::vector<double> a(m * m), b(m), sol;
    for (int i = 0; i < m; ++i) {
      b[i] = r[free[i]];
      for (int j = 0; j < m; ++j) a[i * m + j] = h[free[i] * n + free[j]];
    }
    if (!solve_small(a, b, sol)) continue;
    std::array<double, n> c{};
    for (int i = 0; i < m; ++i) c[free[i]] = sol[i];
    bool feasible = true;
    for (int i : kNonNegative) feasible = feasible && c[i] >= 0;
    if (!feasible) continue;
    double obj = yy;
    for (int i = 0; i < n; ++i) {
      obj -= 2 * c[i] * r[i];
      for (int j = 0; j < n; ++j) obj += c[i] * h[i * n + j] * c[j];
    }
    if (obj < best_obj) best_obj = obj, best = c;
  }
  return best;
}

}  // namespace

SavingFeatures saving_features(const DeviceProfile& p, const GroupTermsSample& g) {
  SavingFeatures f;
  // The kernel that runs the group fused; kernels codegen left apart ran before too.
  const KernelTerms* fused = g.after_kernels.empty() ? &g.fused : nullptr;
  double apart_s = 0;
  for (const auto& k : g.after_kernels) {
    if (k.fused && !fused)
      fused = &k;
    else
      apart_s += kernel_time(p, k);
  }
  if (!fused) fused = &g.fused;
  f.fused_class = fused->kernel_class;
  const KernelTerms* anchor = nullptr;
  if (is_anchor_class(f.fused_class))
    for (const auto& u : g.unfused)
      if (is_anchor_class(u.kernel_class) && (!anchor || u.flops > anchor->flops)) anchor = &u;
  double members_s = -apart_s;
  for (const auto& u : g.unfused)
    if (&u != anchor) members_s += kernel_time(p, u);
  f.us[0] = members_s * 1e6;
  f.us[1] = g.bytes_saved / p.bandwidth(KernelClass::Elementwise, g.bytes_saved) * 1e6;
  f.us[2] = g.launches_saved * p.launch_overhead_s * 1e6;
  if (anchor && anchor->winograd) {
    // oneDNN's Winograd convolution in both programs (cost_model.h: Cost::winograd):
    // each reorders its activations into the blocked layout and back, and computes
    // alike, so the anchor's relayout, compute, memory and weights terms change nothing.
    f.us[5] =
        -fused->epilogue_bytes / p.bandwidth(KernelClass::Elementwise, fused->epilogue_bytes) * 1e6;
  } else if (anchor) {
    // The activations the unfused anchor converts between layouts on every call, at the
    // elementwise (copy) bandwidth: the fused conv chain keeps NHWC between fused convs.
    f.us[3] = anchor->relayout_bytes /
              p.bandwidth(KernelClass::Elementwise, anchor->relayout_bytes) * 1e6;
    f.us[4] = anchor->flops / p.flops(anchor->kernel_class) * 1e6;
    f.us[5] =
        -fused->epilogue_bytes / p.bandwidth(KernelClass::Elementwise, fused->epilogue_bytes) * 1e6;
    f.us[6] = anchor->bytes / p.bandwidth(anchor->kernel_class, anchor->bytes) * 1e6;
    // A depthwise conv's few weights go with its planes (one filter each): that term.
    if (anchor->kernel_class != KernelClass::Depthwise)
      f.us[7] = anchor->constant_bytes /
                p.bandwidth(KernelClass::Elementwise, anchor->constant_bytes) * 1e6;
    f.us[8] = anchor->planes * p.launch_overhead_s * 1e6;
  } else {
    f.us[5] = -class_time(p, *fused) * 1e6;
  }
  return f;
}

namespace {

SavingPrediction predict_with(const std::array<SavingClassFit, kKernelClassCount>& classes,
                              const DeviceProfile& p, const GroupTermsSample& g) {
  const SavingFeatures f = saving_features(p, g);
  const SavingClassFit& c = classes[static_cast<std::size_t>(f.fused_class)];
  if (!c.fitted) return {predict_group_us(p, g), false, f.fused_class};
  double us = 0;
  for (int i = 0; i < kSavingTerms; ++i) us += c.coefficients[i] * f.us[i];
  return {us, true, f.fused_class};
}

}  // namespace

SavingPrediction SavingModel::predict(const DeviceProfile& p, const GroupTermsSample& g) const {
  return predict_with(classes, p, g);
}

SavingCoefficients SavingModel::coefficients(std::string fitted_to) const {
  SavingCoefficients c;
  c.classes = classes;
  c.groups = groups;
  c.fitted_to = std::move(fitted_to);
  return c;
}

SavingPrediction predict_saving(const SavingCoefficients& m, const DeviceProfile& p,
                                const GroupTermsSample& g) {
  return predict_with(m.classes, p, g);
}

SavingModel fit_saving_model(const std::vector<GroupTermsSample>& groups, const DeviceProfile& p,
                             const SavingModelOptions& o) {
  SavingModel m;
  m.options = o;
  m.groups = static_cast<int>(groups.size());
  std::array<std::vector<SavingFeatures>, kKernelClassCount> x;
  std::array<std::vector<double>, kKernelClassCount> y, w, difference;
  for (const auto& g : groups) {
    if (!std::isfinite(g.measured_us)) continue;
    SavingFeatures f = saving_features(p, g);
    const auto c = static_cast<std::size_t>(f.fused_class);
    const double noise = std::isfinite(g.noise_us) ? g.noise_us : 0.0;
    const double floor = o.rel_floor * std::fabs(g.measured_us);
    const double var = noise * noise + floor * floor;
    x[c].push_back(f);
    difference[c].push_back(predict_group_us(p, g));
    y[c].push_back(g.measured_us);
    w[c].push_back(var > 0 ? 1.0 / var : 1.0);
  }
  for (int c = 0; c < kKernelClassCount; ++c) {
    SavingClassFit& cf = m.classes[c];
    cf.groups = static_cast<int>(x[c].size());
    if (cf.groups == 0) continue;
    if (cf.groups < o.min_groups_per_class) {
      cf.why = "too few groups";
      continue;
    }
    cf.coefficients = constrained_fit(x[c], y[c], w[c], o.ridge);
    cf.fitted = true;
    if (!o.select_by_leave_one_out) continue;
    std::vector<double> loo, diff;
    for (std::size_t i = 0; i < x[c].size(); ++i) {
      auto xs = x[c];
      auto ys = y[c];
      auto ws = w[c];
      xs.erase(xs.begin() + i), ys.erase(ys.begin() + i), ws.erase(ws.begin() + i);
      const auto k = constrained_fit(xs, ys, ws, o.ridge);
      double us = 0;
      for (int t = 0; t < kSavingTerms; ++t) us += k[t] * x[c][i].us[t];
      loo.push_back(us);
      diff.push_back(difference[c][i]);
    }
    cf.leave_one_out_error = prediction_error(loo, y[c]).median_abs_rel_error;
    cf.difference_error = prediction_error(diff, y[c]).median_abs_rel_error;
    if (!(cf.leave_one_out_error < cf.difference_error)) {
      cf.fitted = false;
      cf.why = "not better leaving groups out";
    }
  }
  return m;
}

PredictionError saving_error(const SavingModel& m, const DeviceProfile& p,
                             const std::vector<GroupTermsSample>& groups) {
  std::vector<double> pred, meas;
  for (const auto& g : groups)
    pred.push_back(m.predict(p, g).saved_us), meas.push_back(g.measured_us);
  return prediction_error(pred, meas);
}

PredictionError leave_one_out_error(const std::vector<GroupTermsSample>& groups,
                                    const DeviceProfile& p, const SavingModelOptions& o,
                                    bool resolved_only) {
  std::vector<double> pred, meas;
  std::vector<GroupTermsSample> rest;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    if (resolved_only && !(std::isfinite(g.noise_us) && std::fabs(g.measured_us) >= 2 * g.noise_us))
      continue;
    rest.clear();
    for (std::size_t j = 0; j < groups.size(); ++j)
      if (j != i) rest.push_back(groups[j]);
    pred.push_back(fit_saving_model(rest, p, o).predict(p, g).saved_us);
    meas.push_back(g.measured_us);
  }
  return prediction_error(pred, meas);
}

}  // namespace fx
