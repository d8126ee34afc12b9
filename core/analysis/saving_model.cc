// SPDX-License-Identifier: Apache-2.0
#include "analysis/saving_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fx {
namespace {

constexpr std::array<double, kSavingTerms> kPrior = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0};
// Coefficients whose term cannot change sign (members, traffic, launches, fused cost,
// the per-plane setup the fused kernel does not do, the fused kernel's fixed cost).
constexpr std::array<int, 6> kNonNegative = {0, 1, 2, 5, 8, 9};

bool is_anchor_class(KernelClass c) {
  return c == KernelClass::Conv || c == KernelClass::Depthwise || c == KernelClass::Pooling ||
         c == KernelClass::MatMul;
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

// The weighted normal equations of the fit over a set of groups (X'WX, X'Wy, y'Wy and
// how many): the equations of a union of sets are the sum of theirs, so that every
// leave-one-out fit of a class comes from prefix and suffix sums, never from summing
// the other groups again.
struct NormalEquations {
  static constexpr int n = kSavingTerms;
  std::array<double, n * n> h{};
  std::array<double, n> r{};
  double yy = 0, count = 0;

  void add(const SavingFeatures& x, double y, double w) {
    yy += w * y * y;
    count += 1;
    for (int i = 0; i < n; ++i) {
      r[i] += w * x.us[i] * y;
      for (int j = 0; j < n; ++j) h[i * n + j] += w * x.us[i] * x.us[j];
    }
  }
  NormalEquations operator+(const NormalEquations& o) const {
    NormalEquations s = *this;
    for (int i = 0; i < n * n; ++i) s.h[i] += o.h[i];
    for (int i = 0; i < n; ++i) s.r[i] += o.r[i];
    s.yy += o.yy;
    s.count += o.count;
    return s;
  }
};

// min (y - X c)' W (y - X c) + sum_i d_i (c_i - prior_i)^2 with the non-negative
// coefficients >= 0: each subset of them held at 0 is solved exactly (64 systems of at
// most 10 unknowns) and the best feasible one kept.
std::array<double, kSavingTerms> constrained_solve(NormalEquations e, double ridge) {
  constexpr int n = kSavingTerms;
  auto& h = e.h;
  auto& r = e.r;
  double yy = e.yy;
  // Ridge per coefficient in units of an average group's information on it, so that it
  // weighs the same whatever the term's scale; a term no group has stays at its prior.
  const double groups = std::max<double>(1, e.count);
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

std::array<double, kSavingTerms> constrained_fit(const std::vector<SavingFeatures>& x,
                                                 const std::vector<double>& y,
                                                 const std::vector<double>& w, double ridge) {
  NormalEquations e;
  for (std::size_t g = 0; g < x.size(); ++g) e.add(x[g], y[g], w[g]);
  return constrained_solve(e, ridge);
}

double combine(const std::array<double, kSavingTerms>& c, const SavingFeatures& f) {
  double us = 0;
  for (int t = 0; t < kSavingTerms; ++t) us += c[t] * f.us[t];
  return us;
}

// The coefficients and the weights they were fitted with: Huber's M-estimate by
// iteratively reweighted least squares. Each group's residual is taken in units of its
// assumed error (1 / sqrt(w): its noise and the floor), and their spread estimated
// robustly (1.4826 x their median absolute value: the standard deviation, were they
// normal); a group whose residual exceeds robust_k spreads is weighed down by
// robust_k x spread / |r|, so that a few groups the terms cannot explain (an
// implementation the runtime switches to on some shapes, a measurement disturbed by the
// machine) pull the class's coefficients no more than their absolute error. The median
// error over groups is what the fit is judged on.
struct RobustFit {
  std::array<double, kSavingTerms> c{};
  std::vector<double> w;
};
RobustFit robust_fit(const std::vector<SavingFeatures>& x, const std::vector<double>& y,
                     const std::vector<double>& w, const SavingModelOptions& o) {
  RobustFit f{constrained_fit(x, y, w, o.ridge), w};
  if (!(o.robust_k > 0)) return f;
  for (int it = 0; it < o.robust_iterations; ++it) {
    std::vector<double> r(x.size());
    for (std::size_t g = 0; g < x.size(); ++g)
      r[g] = std::fabs(y[g] - combine(f.c, x[g])) * std::sqrt(w[g]);
    std::vector<double> sorted = r;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double spread = 1.4826 * sorted[sorted.size() / 2];
    if (!(spread > 0)) break;
    std::vector<double> next(w.size());
    for (std::size_t g = 0; g < x.size(); ++g)
      next[g] = w[g] * (r[g] > o.robust_k * spread ? o.robust_k * spread / r[g] : 1.0);
    const auto c = constrained_fit(x, y, next, o.ridge);
    double change = 0, size = 0;
    for (int t = 0; t < kSavingTerms; ++t)
      change = std::max(change, std::fabs(c[t] - f.c[t])), size = std::max(size, std::fabs(c[t]));
    f = {c, std::move(next)};
    if (change <= 1e-6 * std::max(1.0, size)) break;
  }
  return f;
}

// Each group of a class predicted by the coefficients fitted to the class's other
// groups: O(groups) solves (prefix and suffix sums of the normal equations).
std::vector<double> class_leave_one_out(const std::vector<SavingFeatures>& x,
                                        const std::vector<double>& y, const std::vector<double>& w,
                                        double ridge) {
  const std::size_t n = x.size();
  std::vector<NormalEquations> suffix(n + 1);
  for (std::size_t i = n; i-- > 0;) {
    suffix[i] = suffix[i + 1];
    suffix[i].add(x[i], y[i], w[i]);
  }
  std::vector<double> out(n);
  NormalEquations prefix;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = combine(constrained_solve(prefix + suffix[i + 1], ridge), x[i]);
    prefix.add(x[i], y[i], w[i]);
  }
  return out;
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
  // The fused kernel's fixed cost beyond a runtime kernel's dispatch, in dispatches: a
  // constant per group that no other term carries (they all scale with bytes, FLOPs or
  // the launches saved), and that decides the groups whose tensors are a few hundred
  // bytes (a squeeze-excitation's Sigmoid -> Mul on [1, C, 1, 1] runs slower fused).
  f.us[9] = -double(std::max(1, fused->launches)) * p.launch_overhead_s * 1e6;
  if (anchor && (anchor->winograd || g.anchor_runtime)) {
    // oneDNN's Winograd convolution in both programs (cost_model.h: Cost::winograd):
    // each reorders its activations into the blocked layout and back, and computes
    // alike, so the anchor's relayout, compute, memory and weights terms change nothing.
    // So too where the fused kernel runs the anchor's own runtime kernel before its
    // generated epilogue (GroupTermsSample::anchor_runtime): the anchor is the unfused
    // one, and fusion changes only what its members did.
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

namespace {

// The groups with a measured saving, per fused-kernel class: features, saving, weight,
// the difference of kernel times, and each one's place in the caller's groups.
struct ClassGroups {
  std::vector<SavingFeatures> x;
  std::vector<double> y, w, difference;
  std::vector<std::size_t> index;
};

std::array<ClassGroups, kKernelClassCount> by_class(const std::vector<GroupTermsSample>& groups,
                                                    const DeviceProfile& p,
                                                    const SavingModelOptions& o) {
  std::array<ClassGroups, kKernelClassCount> out;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GroupTermsSample& g = groups[i];
    if (!std::isfinite(g.measured_us)) continue;
    SavingFeatures f = saving_features(p, g);
    ClassGroups& d = out[static_cast<std::size_t>(f.fused_class)];
    const double noise = std::isfinite(g.noise_us) ? g.noise_us : 0.0;
    // The floor scales with the group's unfused time on the profile, not with its
    // measured saving: weighing each group by 1 / saving^2 lets the groups that save
    // little (whose relative error is the largest for the same absolute error) pull every
    // coefficient towards 0, and the fit then under-predicts the class as a whole.
    const double floor = o.rel_floor * unfused_group_us(p, g);
    const double var = noise * noise + floor * floor;
    d.x.push_back(f);
    d.difference.push_back(predict_group_us(p, g));
    d.y.push_back(g.measured_us);
    d.w.push_back(var > 0 ? 1.0 / var : 1.0);
    d.index.push_back(i);
  }
  return out;
}

}  // namespace

namespace {

// One class's fit, and each of its groups predicted by the fit to the class's others
// (`loo`, when asked for or needed to choose between the fit and the difference of
// times): the robust fit runs once, and its weights serve the leave-one-out fits.
struct ClassFit {
  SavingClassFit fit;
  std::vector<double> loo;
};

ClassFit fit_class(const ClassGroups& d, const SavingModelOptions& o, bool leave_one_out) {
  ClassFit out;
  SavingClassFit& cf = out.fit;
  cf.groups = static_cast<int>(d.x.size());
  if (cf.groups == 0) return out;
  if (cf.groups < o.min_groups_per_class) {
    cf.why = "too few groups";
    return out;
  }
  const RobustFit fit = robust_fit(d.x, d.y, d.w, o);
  cf.coefficients = fit.c;
  cf.fitted = true;
  if (!leave_one_out && !o.select_by_leave_one_out) return out;
  // The robust weights are those of the fit to all the class's groups: decided once,
  // like the class's choice, which keeps each leave-one-out fit a sum of the others.
  out.loo = class_leave_one_out(d.x, d.y, fit.w, o.ridge);
  if (!o.select_by_leave_one_out) return out;
  cf.leave_one_out_error = prediction_error(out.loo, d.y).median_abs_rel_error;
  cf.difference_error = prediction_error(d.difference, d.y).median_abs_rel_error;
  if (!(cf.leave_one_out_error < cf.difference_error)) {
    cf.fitted = false;
    cf.why = "not better leaving groups out";
  }
  return out;
}

}  // namespace

SavingModel fit_saving_model(const std::vector<GroupTermsSample>& groups, const DeviceProfile& p,
                             const SavingModelOptions& o) {
  SavingModel m;
  m.options = o;
  m.groups = static_cast<int>(groups.size());
  const auto data = by_class(groups, p, o);
  for (int c = 0; c < kKernelClassCount; ++c)
    m.classes[c] = fit_class(data[static_cast<std::size_t>(c)], o, false).fit;
  return m;
}

std::vector<SavingPrediction> leave_one_out_predictions(const std::vector<GroupTermsSample>& groups,
                                                        const DeviceProfile& p,
                                                        const SavingModelOptions& o) {
  const auto data = by_class(groups, p, o);
  SavingModel full;
  full.options = o;
  full.groups = static_cast<int>(groups.size());
  std::array<std::vector<double>, kKernelClassCount> loo;
  for (int c = 0; c < kKernelClassCount; ++c) {
    ClassFit f = fit_class(data[static_cast<std::size_t>(c)], o, true);
    full.classes[c] = f.fit;
    loo[c] = std::move(f.loo);
  }
  std::vector<SavingPrediction> out;
  out.reserve(groups.size());
  // A group without a measured saving was in no fit: the full model is fitted without it.
  for (const auto& g : groups) out.push_back(full.predict(p, g));
  for (int c = 0; c < kKernelClassCount; ++c) {
    const ClassGroups& d = data[static_cast<std::size_t>(c)];
    const auto kc = static_cast<KernelClass>(c);
    const bool fits = full.classes[c].fitted && int(d.x.size()) - 1 >= o.min_groups_per_class;
    for (std::size_t k = 0; k < d.x.size(); ++k)
      out[d.index[k]] = fits ? SavingPrediction{loo[c][k], true, kc}
                             : SavingPrediction{d.difference[k], false, kc};
  }
  return out;
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
  const std::vector<SavingPrediction> loo = leave_one_out_predictions(groups, p, o);
  std::vector<double> pred, meas;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    if (resolved_only && !(std::isfinite(g.noise_us) && std::fabs(g.measured_us) >= 2 * g.noise_us))
      continue;
    pred.push_back(loo[i].saved_us);
    meas.push_back(g.measured_us);
  }
  return prediction_error(pred, meas);
}

}  // namespace fx
