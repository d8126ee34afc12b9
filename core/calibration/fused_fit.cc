// SPDX-License-Identifier: Apache-2.0
#include "calibration/fused_fit.h"

#include <algorithm>

#include "util/statistics.h"

namespace fx {

FusedFit fit_fused_rates(const std::vector<KernelSample>& fused, const DeviceProfile& unfused_fit,
                         const KernelFitOptions& o) {
  FusedFit f;
  f.profile = unfused_fit;
  f.kernels = static_cast<int>(fused.size());
  auto huber = [&](double r) {
    const double a = std::fabs(r);
    return a <= o.huber_log ? a * a : 2 * o.huber_log * a - o.huber_log * o.huber_log;
  };
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto kc = static_cast<KernelClass>(c);
    // Per kernel: launch, the class's own time and the epilogue bytes; model =
    // L + F + e^a * B + e^b * E with a = log scale, b = log(seconds per epilogue byte)
    // and F the fixed cost per kernel (generated kernels only).
    struct Row {
      double l, b, e, m, trust;
    };
    // A generated loop nest or row kernel (the fused kernels without an anchor) also pays
    // a fixed setup per call; an anchor's fused kernel is the same library primitive as
    // its unfused kernel, whose fixed costs the class's unfused rates already carry.
    const bool generated = kc == KernelClass::Elementwise || kc == KernelClass::Reduction ||
                           kc == KernelClass::DataMovement;
    std::vector<Row> rows;
    for (const auto& k : fused) {
      if (k.terms.kernel_class != kc) continue;
      const KernelTerms& t = k.terms;
      rows.push_back(
          {t.launches * unfused_fit.launch_overhead_s,
           std::max(t.bytes / unfused_fit.bandwidth(kc, t.bytes), t.flops / unfused_fit.flops(kc)),
           t.epilogue_bytes / unfused_fit.cache_gain(KernelClass::Elementwise, t.epilogue_bytes),
           k.measured_us * 1e-6,
           o.huber_log * o.huber_log / (o.huber_log * o.huber_log + k.rel_noise * k.rel_noise)});
      f.classes[c].kernels++;
      f.classes[c].with_epilogue += t.epilogue_bytes > 0;
    }
    if (rows.empty()) continue;
    const std::array<double, 2> prior = {
        0.0, -std::log(unfused_fit.bandwidth(KernelClass::Elementwise))};
    const bool fit_b = f.classes[c].with_epilogue > 0;
    double fixed = 0;  // F / L (per launch), held while a and b are fitted
    auto residuals = [&](const std::array<double, 2>& t, std::vector<double>& r,
                         std::vector<std::array<double, 2>>* jac) {
      r.resize(rows.size());
      if (jac) jac->resize(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const double tb = std::exp(t[0]) * rows[i].b, te = std::exp(t[1]) * rows[i].e;
        const double model = std::max(rows[i].l * (1 + fixed) + tb + te, 1e-12);
        r[i] = std::log(model / rows[i].m);
        if (jac) (*jac)[i] = {tb / model, fit_b ? te / model : 0.0};
      }
    };
    auto objective = [&](const std::array<double, 2>& t, const std::vector<double>* w) {
      std::vector<double> r;
      residuals(t, r, nullptr);
      double e = 0;
      for (std::size_t i = 0; i < r.size(); ++i)
        e += w ? (*w)[i] * r[i] * r[i] : rows[i].trust * huber(r[i]);
      for (int j = 0; j < 2; ++j) e += o.prior_weight * (t[j] - prior[j]) * (t[j] - prior[j]);
      return e;
    };
    // Levenberg-Marquardt on the two log-parameters with Huber weights, from a few starts
    // (a scale far from 1 and an epilogue far from the elementwise rate are both seen).
    auto descend = [&](std::array<double, 2> t) {
      std::vector<double> r, w(rows.size(), 1.0);
      std::vector<std::array<double, 2>> jac;
      double mu = 1e-3;
      for (int it = 0; it < o.max_iterations; ++it) {
        residuals(t, r, &jac);
        for (std::size_t i = 0; i < r.size(); ++i)
          w[i] = rows[i].trust *
                 (std::fabs(r[i]) <= o.huber_log ? 1.0 : o.huber_log / std::fabs(r[i]));
        double a00 = o.prior_weight, a01 = 0, a11 = o.prior_weight;
        double g0 = -o.prior_weight * (t[0] - prior[0]), g1 = -o.prior_weight * (t[1] - prior[1]);
        for (std::size_t i = 0; i < r.size(); ++i) {
          a00 += w[i] * jac[i][0] * jac[i][0];
          a01 += w[i] * jac[i][0] * jac[i][1];
          a11 += w[i] * jac[i][1] * jac[i][1];
          g0 -= w[i] * jac[i][0] * r[i];
          g1 -= w[i] * jac[i][1] * r[i];
        }
        const double current = objective(t, &w);
        bool improved = false;
        double step = 0;
        for (int tries = 0; tries < 12 && !improved; ++tries) {
          const double d00 = a00 * (1 + mu), d11 = a11 * (1 + mu), det = d00 * d11 - a01 * a01;
          if (!(det > 0)) break;
          std::array<double, 2> next = t;
          const double s0 = std::clamp((g0 * d11 - g1 * a01) / det, -2.0, 2.0);
          const double s1 = std::clamp((g1 * d00 - g0 * a01) / det, -2.0, 2.0);
          next[0] += s0, next[1] += s1;
          step = std::max(std::fabs(s0), std::fabs(s1));
          if (objective(next, &w) < current) {
            t = next, improved = true, mu = std::max(mu / 3, 1e-9);
          } else {
            mu *= 4;
          }
        }
        if (!improved || step < 1e-7) break;
      }
      return t;
    };
    // F on a grid of launch overheads (0, then 1/8 to 32 in steps of sqrt 2), a and b
    // fitted for each: the objective is not smooth in F near 0, where most classes sit.
    std::vector<double> fixed_grid = {0.0};
    if (generated)
      for (int k = -6; k <= 10; ++k) fixed_grid.push_back(std::pow(2.0, k / 2.0));
    std::array<double, 2> best_t = prior;
    double best_fixed = 0;
    double best = objective(prior, nullptr);
    for (double fx : fixed_grid) {
      fixed = fx;
      for (double sa : {0.0, std::log(0.5), std::log(2.0)})
        for (double sb : {0.0, std::log(4.0), std::log(0.25)}) {
          auto t = descend({prior[0] + sa, prior[1] + sb});
          const double e = objective(t, nullptr);
          if (e < best) best = e, best_t = t, best_fixed = fx;
        }
    }
    FusedClassRates& rates = f.profile.fused_classes[static_cast<std::size_t>(c)];
    rates.scale = std::exp(best_t[0]);
    if (fit_b) rates.epilogue_bandwidth_bytes_per_s = std::exp(-best_t[1]);
    rates.fixed_s = best_fixed * unfused_fit.launch_overhead_s;
  }
  std::vector<double> rel, rel0;
  std::array<std::vector<double>, kKernelClassCount> per_class, per_class0;
  for (const auto& k : fused) {
    const double m = k.measured_us * 1e-6;
    const int c = static_cast<int>(k.terms.kernel_class);
    rel.push_back(std::fabs(kernel_time(f.profile, k.terms) - m) / m);
    rel0.push_back(std::fabs(kernel_time(unfused_fit, k.terms) - m) / m);
    per_class[c].push_back(rel.back());
    per_class0[c].push_back(rel0.back());
  }
  for (int c = 0; c < kKernelClassCount; ++c) {
    f.classes[c].median_abs_rel_error = median_or_nan(per_class[c]);
    f.classes[c].unfitted_median_abs_rel_error = median_or_nan(per_class0[c]);
  }
  f.median_abs_rel_error = median_or_nan(rel);
  f.unfitted_median_abs_rel_error = median_or_nan(rel0);
  return f;
}

}  // namespace fx
