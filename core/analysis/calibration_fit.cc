#include "analysis/calibration_fit.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "util/error.h"

namespace fx {
namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    double avg = (double(i) + double(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = double(a.size());
  double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : NAN;
}

double num(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

struct Solution {
  double a = 0, b = 0;  // seconds per byte, seconds per launch
  double sse = std::numeric_limits<double>::infinity();
};

double sse(const std::vector<CalibrationSample>& s, double a, double b) {
  double e = 0;
  for (const auto& x : s) {
    double r = x.bytes_saved * a + x.launches_saved * b - x.measured_us * 1e-6;
    e += r * r;
  }
  return e;
}

}  // namespace

double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return NAN;
  return pearson(ranks(a), ranks(b));
}

PredictionError prediction_error(const std::vector<double>& predicted,
                                 const std::vector<double>& measured) {
  PredictionError e;
  e.groups = static_cast<int>(std::min(predicted.size(), measured.size()));
  e.spearman = spearman_correlation(predicted, measured);
  std::vector<double> rel;
  for (int i = 0; i < e.groups; ++i)
    if (measured[i] != 0)
      rel.push_back(std::fabs(predicted[i] - measured[i]) / std::fabs(measured[i]));
  if (!rel.empty()) {
    std::sort(rel.begin(), rel.end());
    std::size_t n = rel.size();
    e.median_abs_rel_error = n % 2 ? rel[n / 2] : (rel[n / 2 - 1] + rel[n / 2]) / 2;
  }
  return e;
}

std::vector<CalibrationSample> calibration_samples(const nlohmann::json& doc,
                                                   const std::string& origin) {
  if (!doc.is_object() || !doc.contains("before") || !doc.contains("groups") ||
      !doc["groups"].is_array())
    throw FileError(origin,
                    "not a before/after result (no \"before\"/\"groups\"; see "
                    "docs/before_after.md: fxc profile --plan PLAN --json)");
  std::vector<CalibrationSample> out;
  for (const auto& g : doc["groups"]) {
    if (!g.is_object() || g.value("status", "") == "excluded") continue;
    CalibrationSample s;
    s.id = g.value("id", "");
    s.bytes_saved = num(g, "bytes_saved");
    s.launches_saved = num(g, "launches_saved");
    s.predicted_us = num(g, "predicted_saved_us");
    s.measured_us = num(g, "measured_saved_us");
    if (std::isfinite(s.bytes_saved) && std::isfinite(s.launches_saved) &&
        std::isfinite(s.predicted_us) && std::isfinite(s.measured_us))
      out.push_back(std::move(s));
  }
  return out;
}

CalibrationFit fit_calibration(const std::vector<CalibrationSample>& s) {
  if (s.size() < 2)
    throw Error("calibration needs at least 2 measured groups with estimates, got " +
                std::to_string(s.size()));
  // Normal equations of min sum (a x + b y - m)^2.
  double xx = 0, xy = 0, yy = 0, xm = 0, ym = 0;
  for (const auto& v : s) {
    const double x = v.bytes_saved, y = v.launches_saved, m = v.measured_us * 1e-6;
    xx += x * x, xy += x * y, yy += y * y, xm += x * m, ym += y * m;
  }
  if (xx == 0 && yy == 0) throw Error("calibration: no group saves bytes or launches");
  Solution best;
  auto consider = [&](double a, double b) {
    if (a < 0 || b < 0 || !std::isfinite(a) || !std::isfinite(b)) return;
    double e = sse(s, a, b);
    if (e < best.sse) best = {a, b, e};
  };
  const double det = xx * yy - xy * xy;
  if (det > 1e-12 * xx * yy) consider((xm * yy - ym * xy) / det, (ym * xx - xm * xy) / det);
  // On the boundary: one parameter at 0, the other fitted alone (and clamped).
  if (xx > 0) consider(std::max(0.0, xm / xx), 0);
  if (yy > 0) consider(0, std::max(0.0, ym / yy));
  CalibrationFit f;
  f.seconds_per_byte = best.a;
  f.launch_overhead_s = best.b;
  f.rms_residual_us = std::sqrt(best.sse / double(s.size())) * 1e6;
  if (best.a == 0)
    f.note = "bytes saved explain none of the measured savings (1/bandwidth fitted to 0)";
  if (best.b == 0)
    f.note += std::string(f.note.empty() ? "" : "; ") +
              "launches saved explain none of the measured savings (overhead fitted to 0)";
  std::vector<double> pred_before, pred_after, measured;
  for (const auto& v : s) {
    pred_before.push_back(v.predicted_us);
    pred_after.push_back(f.predict_us(v));
    measured.push_back(v.measured_us);
  }
  f.before = prediction_error(pred_before, measured);
  f.after = prediction_error(pred_after, measured);
  return f;
}

DeviceProfile apply_calibration(DeviceProfile p, const CalibrationFit& f,
                                const std::string& source) {
  std::string kept;
  if (f.seconds_per_byte > 0)
    p.memory_bandwidth_bytes_per_s = f.bandwidth_bytes_per_s();
  else
    kept = " (bandwidth kept: the fit gave none)";
  if (f.launch_overhead_s > 0)
    p.launch_overhead_s = f.launch_overhead_s;
  else
    kept += " (launch overhead kept: the fit gave none)";
  p.source = source + kept;
  return p;
}

}  // namespace fx

// ---- Kernel fit ------------------------------------------------------------------------

namespace fx {
namespace {

constexpr int kParams = 1 + 2 * kKernelClassCount;  // launch, bandwidth[c], flops[c]

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<KernelTerms> terms_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  auto c = kernel_class_from_name(j.value("class", ""));
  double b = num(j, "bytes"), f = num(j, "flops");
  if (!c || !std::isfinite(b) || !std::isfinite(f)) return std::nullopt;
  double e = j.contains("epilogue_bytes") ? num(j, "epilogue_bytes") : 0.0;
  return KernelTerms{*c, b, f, j.value("launches", 1), std::isfinite(e) ? e : 0.0};
}

// Log-parameters of a profile: [log launch, log bw[c]..., log flops[c]...].
std::array<double, kParams> params_of(const DeviceProfile& p) {
  std::array<double, kParams> t{};
  t[0] = std::log(std::max(p.launch_overhead_s, 1e-9));
  for (int c = 0; c < kKernelClassCount; ++c) {
    t[1 + c] = std::log(p.bandwidth(static_cast<KernelClass>(c)));
    t[1 + kKernelClassCount + c] = std::log(p.flops(static_cast<KernelClass>(c)));
  }
  return t;
}

DeviceProfile with_params(DeviceProfile p, const std::array<double, kParams>& t) {
  p.launch_overhead_s = std::exp(t[0]);
  for (int c = 0; c < kKernelClassCount; ++c) {
    p.kernel_classes[c].bandwidth_bytes_per_s = std::exp(t[1 + c]);
    p.kernel_classes[c].flops_per_s = std::exp(t[1 + kKernelClassCount + c]);
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

std::vector<KernelSample> kernel_samples(const nlohmann::json& doc, const std::string& origin,
                                         const char* side, TimingStat stat) {
  if (!doc.is_object() || !doc.contains(side) || !doc[side].is_object() ||
      !doc[side].contains("kernels") || !doc[side]["kernels"].is_array())
    throw FileError(origin, std::string("not a before/after result with \"") + side +
                                "\".kernels (fxc profile MODEL --opt-level N --json)");
  std::vector<KernelSample> out;
  for (const auto& k : doc[side]["kernels"]) {
    if (!k.is_object()) continue;
    auto t = terms_from_json(k.value("cost", nlohmann::json()));
    double us = num(k, stat == TimingStat::Min ? "min_us" : "median_us");
    // A row without a kernel (a constant) has nothing to time.
    if (!t || !(us > 0) || (t->launches == 0 && t->bytes == 0 && t->flops == 0)) continue;
    int calls = std::max(1, k.value("calls", 1));
    t->launches *= calls;  // a row is one step per run; calls > 1 would be several
    out.push_back({k.value("name", ""), *t, us});
  }
  if (out.empty())
    throw FileError(origin, std::string("no \"") + side +
                                "\" kernel has cost terms (\"cost\"): the result predates "
                                "them; run fxc profile --json again");
  return out;
}

namespace {

// Sum of the `min_us` of the rows of `side` that compute exactly `members`; NaN when a
// row reaches outside or a member is not covered.
double fastest_covering(const nlohmann::json& doc, const char* side,
                        const std::set<std::string>& members) {
  auto it = doc.find(side);
  if (it == doc.end() || !it->is_object() || !it->contains("kernels")) return NAN;
  std::set<std::string> covered;
  double us = 0;
  for (const auto& k : (*it)["kernels"]) {
    bool inside = true, touches = false;
    for (const auto& n : k.value("nodes", nlohmann::json::array())) {
      if (!n.is_string()) continue;
      if (members.count(n.get<std::string>()))
        touches = true, covered.insert(n.get<std::string>());
      else
        inside = false;
    }
    if (!touches) continue;
    if (!inside) return NAN;
    us += num(k, "min_us");
  }
  return covered == members ? us : NAN;
}

}  // namespace

std::vector<GroupTermsSample> group_terms_samples(const nlohmann::json& doc,
                                                  const std::string& origin, TimingStat stat) {
  if (!doc.is_object() || !doc.contains("groups") || !doc["groups"].is_array())
    throw FileError(origin, "not a before/after result (no \"groups\")");
  std::vector<GroupTermsSample> out;
  for (const auto& g : doc["groups"]) {
    if (!g.is_object() || g.value("status", "") == "excluded") continue;
    auto ct = g.value("cost_terms", nlohmann::json());
    if (!ct.is_object()) continue;
    auto fused = terms_from_json(ct.value("fused", nlohmann::json()));
    if (!fused) continue;
    GroupTermsSample s;
    s.id = g.value("id", "");
    s.pattern = g.value("pattern", "");
    s.fused = *fused;
    bool ok = true;
    for (const auto& u : ct.value("unfused", nlohmann::json::array())) {
      auto t = terms_from_json(u);
      if (!t)
        ok = false;
      else
        s.unfused.push_back(*t);
    }
    s.predicted_us = num(g, "predicted_saved_us");
    s.measured_us = num(g, "measured_saved_us");
    if (stat == TimingStat::Min && std::isfinite(s.measured_us)) {
      std::set<std::string> members;
      for (const auto& n : g.value("nodes", nlohmann::json::array()))
        if (n.is_string()) members.insert(n.get<std::string>());
      s.measured_us =
          fastest_covering(doc, "before", members) - fastest_covering(doc, "after", members);
    }
    if (ok && std::isfinite(s.predicted_us) && std::isfinite(s.measured_us))
      out.push_back(std::move(s));
  }
  return out;
}

double predict_group_us(const DeviceProfile& p, const GroupTermsSample& g) {
  double before = 0;
  for (const auto& t : g.unfused) before += kernel_time(p, t);
  return (before - kernel_time(p, g.fused)) * 1e6;
}

PredictionError group_error(const DeviceProfile& p, const std::vector<GroupTermsSample>& groups) {
  std::vector<double> pred, meas;
  for (const auto& g : groups)
    pred.push_back(predict_group_us(p, g)), meas.push_back(g.measured_us);
  return prediction_error(pred, meas);
}

PredictionError recorded_group_error(const std::vector<GroupTermsSample>& groups) {
  std::vector<double> pred, meas;
  for (const auto& g : groups) pred.push_back(g.predicted_us), meas.push_back(g.measured_us);
  return prediction_error(pred, meas);
}

KernelFit fit_kernel_rates(const std::vector<KernelSample>& s, const DeviceProfile& base,
                           const std::string& calibration, const KernelFitOptions& o) {
  if (s.size() < 3)
    throw Error("calibration needs at least 3 timed kernels with cost terms, got " +
                std::to_string(s.size()));
  const int n = kParams;
  const auto prior = params_of(base);
  auto theta = prior;
  const double lambda = o.prior_weight;

  // Residuals r_i = log(model_i / measured_i); Jacobian of log(model_i).
  auto eval = [&](const std::array<double, kParams>& t, std::vector<double>& r,
                  std::vector<double>* jac) {
    const double launch = std::exp(t[0]);
    r.resize(s.size());
    if (jac) jac->assign(s.size() * n, 0.0);
    for (std::size_t i = 0; i < s.size(); ++i) {
      const KernelTerms& k = s[i].terms;
      const int c = static_cast<int>(k.kernel_class);
      const double tb = k.bytes / std::exp(t[1 + c]);
      const double tf = k.flops / std::exp(t[1 + kKernelClassCount + c]);
      const double tl = launch * k.launches;
      const double model = std::max(tl + std::max(tb, tf), 1e-12);
      r[i] = std::log(model / (s[i].measured_us * 1e-6));
      if (!jac) continue;
      double* row = jac->data() + i * n;
      row[0] = tl / model;
      if (tb >= tf)
        row[1 + c] = -tb / model;
      else
        row[1 + kKernelClassCount + c] = -tf / model;
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
  auto robust = [&](const std::array<double, kParams>& t) {
    std::vector<double> r;
    eval(t, r, nullptr);
    double e = 0;
    for (double x : r) {
      const double a = std::fabs(x);
      e += a <= o.huber_log ? a * a : 2 * o.huber_log * a - o.huber_log * o.huber_log;
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
        w[i] = std::fabs(r[i]) <= o.huber_log ? 1.0 : o.huber_log / std::fabs(r[i]);
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
        k.terms.bytes / f.profile.bandwidth(k.terms.kernel_class))
      ++f.classes[c].compute_bound;
  }
  for (int c = 0; c < kKernelClassCount; ++c)
    f.classes[c].median_abs_rel_error = median(per_class[c]);
  f.median_abs_rel_error = median(rel);
  f.base_median_abs_rel_error = median(rel_base);
  return f;
}

}  // namespace fx
