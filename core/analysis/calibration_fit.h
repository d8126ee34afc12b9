#pragma once
// Fits the cost model to before/after measurements (`fxc calibrate --from RESULT.json`),
// and says how far predictions were from measurements before and after the fit.
//
// A group's saving is modelled as what the cost model charges for what fusion removes,
// on a memory-bound device:
//   saved_s = bytes_saved / bandwidth + launches_saved * launch_overhead
// Least squares over the groups' measured savings gives 1/bandwidth and launch_overhead
// (both kept >= 0: a negative bandwidth or overhead means nothing physical; the best
// non-negative fit is taken instead). FLOP-bound time is left out of the fit.
//
// Errors: Spearman rank correlation between predicted and measured savings, and the
// median of |predicted - measured| / |measured| (groups measured at exactly 0 skipped).
//
//   auto samples = calibration_samples(doc, "result.json");
//   CalibrationFit f = fit_calibration(samples);
//   DeviceProfile p = apply_calibration(resolve_device("cpu-host"), f, "fitted to ...");

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/device_profile.h"

namespace fx {

struct CalibrationSample {
  std::string id;
  double bytes_saved = 0;
  double launches_saved = 0;
  double predicted_us = NAN;  // as the result predicted it (its estimate_profile)
  double measured_us = NAN;
};

struct PredictionError {
  int groups = 0;
  double spearman = NAN;              // NaN with fewer than 2 groups or no spread
  double median_abs_rel_error = NAN;  // 0.15 = 15%
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

// Spearman's rho with average ranks for ties; NaN for fewer than 2 pairs or no spread.
double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b);
PredictionError prediction_error(const std::vector<double>& predicted,
                                 const std::vector<double>& measured);

// The measured groups of a before/after result (docs/before_after.md): those not
// excluded, with numeric predicted/measured savings and the estimate's bytes/launches.
// Throws FileError(origin, ...) for a document that is not a before/after result.
std::vector<CalibrationSample> calibration_samples(const nlohmann::json& doc,
                                                   const std::string& origin);

// Throws fx::Error with fewer than 2 samples or when neither bytes nor launches vary.
CalibrationFit fit_calibration(const std::vector<CalibrationSample>& samples);

// `base` with the fitted bandwidth and launch overhead (a parameter fitted to 0 keeps
// the base's value, said in the source) and `source` as its provenance.
DeviceProfile apply_calibration(DeviceProfile base, const CalibrationFit& fit,
                                const std::string& source);

}  // namespace fx
