// SPDX-License-Identifier: Apache-2.0
#include "calibration/kernel_fit.h"

#include <algorithm>

#include "util/error.h"
#include "util/statistics.h"

namespace fx {
namespace {

// launch, bandwidth[c], flops[c], follow[c] (how closely class c follows the working-set
// curve; device/device_profile.h: bandwidth_curve).
constexpr int kParams = 1 + 3 * kKernelClassCount;
constexpr int kFollow = 1 + 2 * kKernelClassCount;
// A class may ignore the curve (0) or follow it somewhat more steeply than a copy does.
constexpr double kMaxFollow = 1.5;

// Parameters of a profile: [log launch, log bw[c]..., log flops[c]..., follow[c]...].
std::array<double, kParams> params_of(const DeviceProfile& p) {
  std::array<double, kParams> t{};
  t[0] = std::log(std::max(p.launch_overhead_s, 1e-9));
  for (int c = 0; c < kKernelClassCount; ++c) {
    t[1 + c] = std::log(p.bandwidth(static_cast<KernelClass>(c)));
    t[1 + kKernelClassCount + c] = std::log(p.flops(static_cast<KernelClass>(c)));
    t[kFollow + c] = p.bandwidth_curve.follow[static_cast<std::size_t>(c)];
  }
  return t;
}

DeviceProfile with_params(DeviceProfile p, const std::array<double, kParams>& t) {
  p.launch_overhead_s = std::exp(t[0]);
  for (int c = 0; c < kKernelClassCount; ++c) {
    p.kernel_classes[c].bandwidth_bytes_per_s = std::exp(t[1 + c]);
    p.kernel_classes[c].flops_per_s = std::exp(t[1 + kKernelClassCount + c]);
    p.bandwidth_curve.follow[static_cast<std::size_t>(c)] = t[kFollow + c];
  }
  return p;
}

// Solves A x = b (n x n, symmetric positive definite after damping) in place.
bool solve(std::vector<double> a, std::vector<double> b, int n, std::vector<double>& x) {
  for (int i = 0; i < n; ++i) {
    int piv = i;
    for (int r = i + 1; r < n; ++r)
      if (std::fabs(a[r * n + i]) > std::fabs(a[piv * n + i])) piv = r;
    if (std::fabs(a[piv * n + i]) < 1e-300) return false;
    for (int k = 0; k < n; ++k) std::swap(a[i * n + k], a[piv * n + k]);
    std::swap(b[i], b[piv]);
    for (int r = i + 1; r < n; ++r) {
      double f = a[r * n + i] / a[i * n + i];
      for (int k = i; k < n; ++k) a[r * n + k] -= f * a[i * n + k];
      b[r] -= f * b[i];
    }
  }
  x.assign(n, 0);
  for (int i = n - 1; i >= 0; --i) {
    double s = b[i];
    for (int k = i + 1; k < n; ++k) s -= a[i * n + k] * x[k];
    x[i] = s / a[i * n + i];
  }
  return true;
}

}  // namespace

KernelFit fit_kernel_rates(const std::vector<KernelSample>& s, const DeviceProfile& base,
                           const std::string& calibration, const KernelFitOptions& o) {
  if (s.size() < 3)
    throw Error("calibration needs at least 3 timed kernels with cost terms, got " +
                std::to_string(s.size()));
  const int n = kParams;
  const auto prior = params_of(base);
  auto theta = prior;
  const double lambda = o.prior_weight;

  // Each kernel's place on the working-set curve (0 for all without one).
  std::vector<double> gain(s.size()), relayout_gain(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    gain[i] = base.bandwidth_curve.log_gain(s[i].terms.bytes);
    relayout_gain[i] = base.bandwidth_curve.log_gain(s[i].terms.relayout_bytes);
  }
  constexpr int kMove = static_cast<int>(KernelClass::DataMovement);

  // Residuals r_i = log(model_i / measured_i); Jacobian of log(model_i).
  auto eval = [&](const std::array<double, kParams>& t, std::vector<double>& r,
                  std::vector<double>* jac) {
    const double launch = std::exp(t[0]);
    r.resize(s.size());
    if (jac) jac->assign(s.size() * n, 0.0);
    for (std::size_t i = 0; i < s.size(); ++i) {
      const KernelTerms& k = s[i].terms;
      const int c = static_cast<int>(k.kernel_class);
      const double tb = k.bytes / std::exp(t[1 + c] + t[kFollow + c] * gain[i]);
      const double tf = k.flops / std::exp(t[1 + kKernelClassCount + c]);
      const double tl = launch * k.launches;
      // An unfused spatial conv's relayout at the data-movement rate (cost_model.h:
      // relayout_time), so that the class rates are its own kernel's.
      const double tr =
          relayout_time(base, k) > 0
              ? k.relayout_bytes / std::exp(t[1 + kMove] + t[kFollow + kMove] * relayout_gain[i])
              : 0.0;
      const double model = std::max(tl + std::max(tb, tf) + tr, 1e-12);
      r[i] = std::log(model / (s[i].measured_us * 1e-6));
      if (!jac) continue;
      double* row = jac->data() + i * n;
      row[0] = tl / model;
      if (tb >= tf) {
        row[1 + c] = -tb / model;
        row[kFollow + c] = -tb / model * gain[i];
      } else
        row[1 + kKernelClassCount + c] = -tf / model;
      row[1 + kMove] += -tr / model;
      row[kFollow + kMove] += -tr / model * relayout_gain[i];
    }
  };
  auto loss = [&](const std::array<double, kParams>& t, const std::vector<double>& w) {
    std::vector<double> r;
    eval(t, r, nullptr);
    double e = 0;
    for (std::size_t i = 0; i < r.size(); ++i) e += w[i] * r[i] * r[i];
    for (int j = 0; j < n; ++j) e += lambda * (t[j] - prior[j]) * (t[j] - prior[j]);
    return e;
  };

  // Robust objective of a parameter vector: Huber on the log residuals + the prior.
  // Measurement weights: a kernel whose median is uncertain counts less.
  std::vector<double> trust(s.size());
  for (std::size_t i = 0; i < s.size(); ++i)
    trust[i] =
        o.huber_log * o.huber_log / (o.huber_log * o.huber_log + s[i].rel_noise * s[i].rel_noise);
  auto robust = [&](const std::array<double, kParams>& t) {
    std::vector<double> r;
    eval(t, r, nullptr);
    double e = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const double a = std::fabs(r[i]);
      e += trust[i] * (a <= o.huber_log ? a * a : 2 * o.huber_log * a - o.huber_log * o.huber_log);
    }
    for (int j = 0; j < n; ++j) e += lambda * (t[j] - prior[j]) * (t[j] - prior[j]);
    return e;
  };
  // Levenberg-Marquardt with Huber weights (iteratively reweighted) from `theta`.
  auto descend = [&](std::array<double, kParams> theta, int& it) {
    std::vector<double> w(s.size(), 1.0), r, jac;
    double mu = 1e-3;
    for (it = 0; it < o.max_iterations; ++it) {
      eval(theta, r, &jac);
      // Huber weights of the current residuals (iteratively reweighted).
      for (std::size_t i = 0; i < r.size(); ++i)
        w[i] = trust[i] * (std::fabs(r[i]) <= o.huber_log ? 1.0 : o.huber_log / std::fabs(r[i]));
      std::vector<double> a(n * n, 0.0), g(n, 0.0);
      for (std::size_t i = 0; i < s.size(); ++i) {
        const double* row = jac.data() + i * n;
        for (int j = 0; j < n; ++j) {
          if (row[j] == 0) continue;
          g[j] -= w[i] * row[j] * r[i];
          for (int k = 0; k < n; ++k) a[j * n + k] += w[i] * row[j] * row[k];
        }
      }
      for (int j = 0; j < n; ++j) {
        a[j * n + j] += lambda;
        g[j] -= lambda * (theta[j] - prior[j]);
      }
      const double current = loss(theta, w);
      bool improved = false;
      double step_norm = 0;
      for (int tries = 0; tries < 12 && !improved; ++tries) {
        std::vector<double> damped = a, dx;
        for (int j = 0; j < n; ++j) damped[j * n + j] += mu * (a[j * n + j] + 1e-9);
        if (!solve(damped, g, n, dx)) break;
        auto next = theta;
        step_norm = 0;
        for (int j = 0; j < n; ++j) {
          // At most a factor e^2 per step: the max() switches branch on large steps.
          double d = std::clamp(dx[j], -2.0, 2.0);
          next[j] += d;
          if (j >= kFollow) next[j] = std::clamp(next[j], 0.0, kMaxFollow);
          step_norm = std::max(step_norm, std::fabs(d));
        }
        if (loss(next, w) < current) {
          theta = next;
          mu = std::max(mu / 3, 1e-9);
          improved = true;
        } else {
          mu *= 4;
        }
      }
      if (!improved || step_norm < 1e-7) break;
    }

    return theta;
  };
  // The max() makes the fit start-dependent: a class whose compute-bound kernels are
  // timed by bytes at the start never moves its FLOP/s. Several starts (FLOP/s and
  // bandwidths scaled down from the base), the best robust objective wins.
  int it = 0;
  double best = std::numeric_limits<double>::infinity();
  for (double fs : {1.0, 0.1, 0.01})
    for (double bs : {1.0, 0.3}) {
      auto start = prior;
      for (int c = 0; c < kKernelClassCount; ++c) {
        start[1 + c] += std::log(bs);
        start[1 + kKernelClassCount + c] += std::log(fs);
      }
      int iters = 0;
      auto t = descend(start, iters);
      const double e = robust(t);
      if (e < best) best = e, theta = t, it = iters;
    }

  KernelFit f;
  f.iterations = it;
  f.kernels = static_cast<int>(s.size());
  f.profile = with_params(base, theta);
  f.profile.calibrated = true;
  f.profile.calibration = calibration;
  std::vector<double> rel, rel_base;
  std::array<std::vector<double>, kKernelClassCount> per_class;
  for (const auto& k : s) {
    const double m = k.measured_us * 1e-6;
    const double fitted = kernel_time(f.profile, k.terms);
    rel.push_back(std::fabs(fitted - m) / m);
    rel_base.push_back(std::fabs(kernel_time(base, k.terms) - m) / m);
    const int c = static_cast<int>(k.terms.kernel_class);
    per_class[c].push_back(rel.back());
    ++f.classes[c].kernels;
    if (k.terms.flops / f.profile.flops(k.terms.kernel_class) >
        k.terms.bytes / f.profile.bandwidth(k.terms.kernel_class, k.terms.bytes))
      ++f.classes[c].compute_bound;
  }
  for (int c = 0; c < kKernelClassCount; ++c)
    f.classes[c].median_abs_rel_error = median_or_nan(per_class[c]);
  f.median_abs_rel_error = median_or_nan(rel);
  f.base_median_abs_rel_error = median_or_nan(rel_base);
  return f;
}

}  // namespace fx
