// SPDX-License-Identifier: Apache-2.0
#pragma once
// The group fit (the older in-sample check, kept for results without per-kernel cost
// terms and for reports): a group's saving modelled as what the cost model charges for
// what fusion removes, on a memory-bound device:
//   saved_s = bytes_saved / bandwidth + launches_saved * launch_overhead
// Least squares over the groups' measured savings gives 1/bandwidth and launch_overhead
// (both kept >= 0: a negative bandwidth or overhead means nothing physical; the best
// non-negative fit is taken instead). FLOP-bound time is left out of the fit.
//
//   auto samples = calibration_samples(doc, "result.json");   // result_samples.h
//   CalibrationFit f = fit_calibration(samples);
//   DeviceProfile p = apply_calibration(resolve_device("cpu-host"), f, "fitted to ...");

#include <cmath>
#include <string>
#include <vector>

#include "device/device_profile.h"
#include "util/statistics.h"

namespace fx {

struct CalibrationSample {
  std::string id;
  double bytes_saved = 0;
  double launches_saved = 0;
  double predicted_us = NAN;  // as the result predicted it (its estimate_profile)
  double measured_us = NAN;
};

struct CalibrationFit {
  double seconds_per_byte = 0;  // 1 / bandwidth; 0: bytes explain nothing
  double launch_overhead_s = 0;
  double rms_residual_us = NAN;
  PredictionError before;  // the result's own predictions
  PredictionError after;   // the fitted model's
  std::string note;        // e.g. which parameter was clamped at 0

  double bandwidth_bytes_per_s() const { return seconds_per_byte > 0 ? 1.0 / seconds_per_byte : 0; }
  double predict_us(const CalibrationSample& s) const {
    return (s.bytes_saved * seconds_per_byte + s.launches_saved * launch_overhead_s) * 1e6;
  }
};

// Throws fx::Error with fewer than 2 samples or when neither bytes nor launches vary.
CalibrationFit fit_calibration(const std::vector<CalibrationSample>& samples);

// `base` with the fitted bandwidth and launch overhead (a parameter fitted to 0 keeps
// the base's value, said in the source) and `source` as its provenance.
DeviceProfile apply_calibration(DeviceProfile base, const CalibrationFit& fit,
                                const std::string& source);

}  // namespace fx
