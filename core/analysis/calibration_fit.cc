#include "analysis/calibration_fit.h"

#include <algorithm>
#include <limits>
#include <map>
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
  // Results written before "relayout_bytes" was: 0 (no relayout term).
  double k = j.contains("relayout_bytes") ? num(j, "relayout_bytes") : 0.0;
  // ... and before "constant_bytes" and "planes" were: 0 (no weights or planes terms).
  double w = j.contains("constant_bytes") ? num(j, "constant_bytes") : 0.0;
  double p = j.contains("planes") ? num(j, "planes") : 0.0;
  return KernelTerms{*c, b, f, j.value("launches", 1), std::isfinite(e) ? e : 0.0,
                     j.value("fused", false), std::isfinite(k) ? std::clamp(k, 0.0, b) : 0.0,
                     std::isfinite(w) ? std::clamp(w, 0.0, b) : 0.0,
                     std::isfinite(p) ? std::max(p, 0.0) : 0.0,
                     // ... and before "winograd" was: false (the anchor terms as before).
                     j.value("winograd", false)};
}

// A kernel row's terms; results written before "fused" was: a row of several nodes.
std::optional<KernelTerms> row_terms(const nlohmann::json& k) {
  const auto& cost = k.value("cost", nlohmann::json());
  auto t = terms_from_json(cost);
  if (t && !cost.contains("fused")) t->fused = k.value("nodes", nlohmann::json::array()).size() > 1;
  return t;
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

namespace {

// Variance of a kernel's median over `runs` runs, from its quartiles: sigma ~ IQR / 1.349
// for a normal spread, and the median's standard error is ~1.2533 sigma / sqrt(runs).
double median_variance(const nlohmann::json& k, int runs) {
  const double iqr = num(k, "q3_us") - num(k, "q1_us");
  const double se = 1.2533 * (iqr / 1.349) / std::sqrt(double(std::max(1, runs)));
  return std::isfinite(se) ? se * se : 0.0;
}

double rel_noise_of(const nlohmann::json& k, int runs, double us) {
  return us > 0 ? std::sqrt(median_variance(k, runs)) / us : 0.0;
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
    auto t = row_terms(k);
    double us = num(k, stat == TimingStat::Min ? "min_us" : "median_us");
    // A row without a kernel (a constant) has nothing to time.
    if (!t || !(us > 0) || (t->launches == 0 && t->bytes == 0 && t->flops == 0)) continue;
    int calls = std::max(1, k.value("calls", 1));
    t->launches *= calls;  // a row is one step per run; calls > 1 would be several
    out.push_back({k.value("name", ""), *t, us, rel_noise_of(k, doc.value("runs", 1), us)});
  }
  if (out.empty())
    throw FileError(origin, std::string("no \"") + side +
                                "\" kernel has cost terms (\"cost\"): the result predates "
                                "them; run fxc profile --json again");
  return out;
}

std::vector<KernelSample> fused_kernel_samples(const nlohmann::json& doc, TimingStat stat) {
  std::vector<KernelSample> out;
  auto it = doc.find("after");
  if (it == doc.end() || !it->is_object() || !it->contains("kernels")) return out;
  for (const auto& k : (*it)["kernels"]) {
    if (!k.is_object()) continue;
    auto t = row_terms(k);
    double us = num(k, stat == TimingStat::Min ? "min_us" : "median_us");
    if (!t || !t->fused || !(us > 0)) continue;
    t->launches *= std::max(1, k.value("calls", 1));
    out.push_back({k.value("name", ""), *t, us, rel_noise_of(k, doc.value("runs", 1), us)});
  }
  return out;
}

namespace {

// The rows of `side` that compute exactly `members` (none reaches outside, all members
// covered); empty otherwise.
std::vector<const nlohmann::json*> covering_rows(const nlohmann::json& doc, const char* side,
                                                 const std::set<std::string>& members) {
  auto it = doc.find(side);
  if (it == doc.end() || !it->is_object() || !it->contains("kernels")) return {};
  std::set<std::string> covered;
  std::vector<const nlohmann::json*> rows;
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
    if (!inside) return {};
    rows.push_back(&k);
  }
  return covered == members ? rows : std::vector<const nlohmann::json*>{};
}

double sum_of(const std::vector<const nlohmann::json*>& rows, const char* key) {
  double us = 0;
  for (const auto* k : rows) us += num(*k, key);
  return rows.empty() ? NAN : us;
}

}  // namespace

std::vector<GroupTermsSample> group_terms_samples(const nlohmann::json& doc,
                                                  const std::string& origin, TimingStat stat) {
  if (!doc.is_object() || !doc.contains("groups") || !doc["groups"].is_array())
    throw FileError(origin, "not a before/after result (no \"groups\")");
  const int runs = doc.value("runs", 1);
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
    if (!ct["fused"].contains("fused")) s.fused.fused = s.unfused.size() > 1;
    std::set<std::string> members;
    for (const auto& n : g.value("nodes", nlohmann::json::array()))
      if (n.is_string()) members.insert(n.get<std::string>());
    const auto before = covering_rows(doc, "before", members);
    const auto after = covering_rows(doc, "after", members);
    // The kernels that ran the group after, when codegen split it or left members apart.
    if (after.size() > 1) {
      for (const auto* k : after) {
        auto t = row_terms(*k);
        if (!t) {
          s.after_kernels.clear();
          break;
        }
        s.after_kernels.push_back(*t);
      }
    }
    s.predicted_us = num(g, "predicted_saved_us");
    s.measured_us = num(g, "measured_saved_us");
    if (double b = num(g, "bytes_saved"); std::isfinite(b)) s.bytes_saved = b;
    if (double l = num(g, "launches_saved"); std::isfinite(l)) s.launches_saved = l;
    if (stat == TimingStat::Min && std::isfinite(s.measured_us))
      s.measured_us = sum_of(before, "min_us") - sum_of(after, "min_us");
    if (!before.empty() && !after.empty() && before.front()->contains("q1_us")) {
      double var = 0;
      for (const auto* k : before) var += median_variance(*k, runs);
      for (const auto* k : after) var += median_variance(*k, runs);
      s.noise_us = std::sqrt(var);
    }
    if (ok && std::isfinite(s.predicted_us) && std::isfinite(s.measured_us))
      out.push_back(std::move(s));
  }
  return out;
}

std::vector<GroupTermsSample> merge_repeats(
    const std::vector<std::vector<GroupTermsSample>>& repeats) {
  std::vector<GroupTermsSample> out;
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<const GroupTermsSample*>> seen;
  for (const auto& rep : repeats)
    for (const auto& g : rep) {
      auto [it, fresh] = index.emplace(g.id, out.size());
      if (fresh) out.push_back(g), seen.emplace_back();
      seen[it->second].push_back(&g);
    }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto& all = seen[i];
    const double n = double(all.size());
    out[i].repeats = static_cast<int>(all.size());
    if (all.size() < 2) continue;
    std::vector<double> v;
    double within = 0;  // mean within-run variance
    bool within_known = true;
    for (const auto* g : all) {
      v.push_back(g->measured_us);
      within_known = within_known && std::isfinite(g->noise_us);
      within += std::isfinite(g->noise_us) ? g->noise_us * g->noise_us / n : 0;
    }
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    const double between_se = 1.2533 * std::sqrt(ss / (n - 1)) / std::sqrt(n);
    const double within_se = std::sqrt(within / n);
    out[i].measured_us = median(v);
    out[i].noise_us = within_known ? std::max(between_se, within_se) : between_se;
  }
  return out;
}

std::vector<ModelGroups> groups_by_model(const std::vector<nlohmann::json>& docs,
                                         const std::vector<std::string>& files, TimingStat stat) {
  std::vector<std::string> keys;
  std::vector<ModelGroups> out;
  std::vector<std::vector<std::vector<GroupTermsSample>>> repeats;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const std::string key = docs[i].value("model", files[i]);
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(key);
      out.emplace_back();
      repeats.emplace_back();
      it = keys.end() - 1;
    }
    const auto k = static_cast<std::size_t>(it - keys.begin());
    out[k].files.push_back(files[i]);
    repeats[k].push_back(group_terms_samples(docs[i], files[i], stat));
  }
  for (std::size_t k = 0; k < out.size(); ++k) out[k].groups = merge_repeats(repeats[k]);
  return out;
}

double predict_group_us(const DeviceProfile& p, const GroupTermsSample& g) {
  double before = 0, after = 0;
  for (const auto& t : g.unfused) before += kernel_time(p, t);
  if (g.after_kernels.empty()) after = kernel_time(p, g.fused);
  for (const auto& t : g.after_kernels) after += kernel_time(p, t);
  return (before - after) * 1e6;
}

std::vector<GroupTermsSample> resolved_groups(const std::vector<GroupTermsSample>& groups,
                                              double k) {
  std::vector<GroupTermsSample> out;
  for (const auto& g : groups)
    if (std::isfinite(g.noise_us) && std::fabs(g.measured_us) >= k * g.noise_us) out.push_back(g);
  return out;
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
    // L + e^a * B + e^b * E with a = log scale, b = log(seconds per epilogue byte).
    struct Row {
      double l, b, e, m, trust;
    };
    std::vector<Row> rows;
    for (const auto& k : fused) {
      if (k.terms.kernel_class != kc) continue;
      const KernelTerms& t = k.terms;
      rows.push_back(
          {t.launches * unfused_fit.launch_overhead_s,
           std::max(t.bytes / unfused_fit.bandwidth(kc), t.flops / unfused_fit.flops(kc)),
           t.epilogue_bytes, k.measured_us * 1e-6,
           o.huber_log * o.huber_log / (o.huber_log * o.huber_log + k.rel_noise * k.rel_noise)});
      f.classes[c].kernels++;
      f.classes[c].with_epilogue += t.epilogue_bytes > 0;
    }
    if (rows.empty()) continue;
    const std::array<double, 2> prior = {
        0.0, -std::log(unfused_fit.bandwidth(KernelClass::Elementwise))};
    const bool fit_b = f.classes[c].with_epilogue > 0;
    auto residuals = [&](const std::array<double, 2>& t, std::vector<double>& r,
                         std::vector<std::array<double, 2>>* jac) {
      r.resize(rows.size());
      if (jac) jac->resize(rows.size());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const double tb = std::exp(t[0]) * rows[i].b, te = std::exp(t[1]) * rows[i].e;
        const double model = std::max(rows[i].l + tb + te, 1e-12);
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
    std::array<double, 2> best_t = prior;
    double best = objective(prior, nullptr);
    for (double sa : {0.0, std::log(0.5), std::log(2.0)})
      for (double sb : {0.0, std::log(4.0), std::log(0.25)}) {
        auto t = descend({prior[0] + sa, prior[1] + sb});
        const double e = objective(t, nullptr);
        if (e < best) best = e, best_t = t;
      }
    FusedClassRates& rates = f.profile.fused_classes[static_cast<std::size_t>(c)];
    rates.scale = std::exp(best_t[0]);
    if (fit_b) rates.epilogue_bandwidth_bytes_per_s = std::exp(-best_t[1]);
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
    f.classes[c].median_abs_rel_error = median(per_class[c]);
    f.classes[c].unfitted_median_abs_rel_error = median(per_class0[c]);
  }
  f.median_abs_rel_error = median(rel);
  f.unfitted_median_abs_rel_error = median(rel0);
  return f;
}

}  // namespace fx
