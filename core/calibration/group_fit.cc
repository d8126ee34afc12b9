// SPDX-License-Identifier: Apache-2.0
#include "calibration/group_fit.h"

#include <algorithm>
#include <limits>

#include "util/error.h"

namespace fx {
namespace {

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
