#include "analysis/calibration_fit.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>

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
