#pragma once
// Fits the cost model to before/after measurements (`fxc calibrate --from RESULT.json`),
// and says how far predictions were from measurements before and after the fit.
//
// Kernel fit (fit_kernel_rates, what `fxc calibrate --from` does): the device profile's
// launch overhead and per-class effective rates (bandwidth and FLOP/s of elementwise,
// reduction, conv, depthwise, matmul, data_movement kernels; cost_model.h) are fitted to
// the per-kernel times of the *unfused* ("before") timeline, each kernel timed by the
// cost model as launch + max(bytes / bandwidth(class), flops / flops(class)). The fit is
// in log space (relative errors, so a 3 us Relu counts like a 3 ms Conv), robust (Huber
// weights: a kernel hit by a scheduler slice does not drag the rates) and regularized
// towards the base profile (a class with no or only memory-bound kernels keeps the base
// FLOP/s). Stage 2 (fit_fused_rates) then fits, per class, the fused kernels' scale and
// epilogue bandwidth (device_profile.h) to the fused kernels of the "after" timeline,
// the unfused rates held. Neither stage sees the group savings; those are predicted from
// the group's cost terms (sum of the unfused members' times - the time of the kernels
// that run the group fused) and compared with the measured ones. On the results the fit
// was made on, that comparison is in-sample (the savings are differences of fitted
// kernels' times); `--evaluate` judges results the fit never saw.
//
// Stage 3 (saving_model.h) fits, per fused-kernel class, coefficients on the terms fusion
// changes to the measured savings themselves, instead of subtracting two predicted times.
//
// Noise: each group's measured saving has a standard error from its kernels' spread over
// runs (quartiles, in quadrature); groups measured within 2x of it are "unresolved":
// their rank and sign are not measured, and the judgement is also given without them.
//
// Group fit (fit_calibration, the older in-sample check kept for reports): a group's
// saving modelled as what the cost model charges for what fusion removes,
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

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/cost_model.h"
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

// ---- Kernel fit ------------------------------------------------------------------------

struct KernelSample {
  std::string name;
  KernelTerms terms;
  double measured_us = NAN;  // median per run
  // Standard error of measured_us relative to it, from the kernel's quartiles over runs
  // (0: unknown). The fits weigh a kernel by huber^2 / (huber^2 + rel_noise^2): a kernel
  // that a loaded machine spread over a factor of two says little about its rate.
  double rel_noise = 0;
};

// A group as the cost model sees it: its members apart and its fused kernel.
struct GroupTermsSample {
  std::string id, pattern;
  std::vector<KernelTerms> unfused;
  KernelTerms fused;  // the group as one kernel (what the plan estimated)
  // The kernels that computed the group after (its fused step, or generated parts and
  // members left apart when codegen split it), with their cost terms; empty: `fused`.
  // Which kernels run is known from codegen before timing; their times are not used.
  std::vector<KernelTerms> after_kernels;
  double predicted_us = NAN;  // as the result predicted it
  double measured_us = NAN;
  // What the plan estimated fusion avoids: intermediates' bytes not written and read
  // back, kernel launches (0 when the result does not say).
  double bytes_saved = 0, launches_saved = 0;
  // Standard error of measured_us from the run-to-run spread of its kernels (quartiles
  // over runs, in quadrature); NaN when the result has no quartiles. After
  // merge_repeats: of the median over the repeats.
  double noise_us = NAN;
  int repeats = 1;  // results (separate processes) the measured saving is the median of
};

// Repeats: results of one model and plan, each measured by its own process. A group's
// measured saving differs between processes more than its kernels' spread within one
// run says (on the 2-core bench machine 5-12% of the saving against 1-3%: memory
// placement, load that changes over seconds), so one run's saving carries that error
// whatever the statistic. Merged, a group's saving is the median over the repeats, and
// its noise the standard error of that median from the repeats' spread (1.2533 x sample
// standard deviation / sqrt(n)), never below the within-run noise / sqrt(n). Groups are
// matched by id, in the first repeat's order; one missing from a repeat is merged over
// the repeats that have it. The first repeat's terms are kept (they are the same).
std::vector<GroupTermsSample> merge_repeats(
    const std::vector<std::vector<GroupTermsSample>>& repeats);

// Which per-kernel statistic of the timed runs the fit and the judgement use: the
// median (`median_us`, what measured_saved_us is made of) or the fastest run (`min_us`:
// the least disturbed by other processes on a loaded machine).
enum class TimingStat { Median, Min };

// Rows of `before.kernels` with cost terms ("cost") and a positive time. Throws
// FileError when the result has no such rows (made before cost terms were written:
// run fxc profile again).
std::vector<KernelSample> kernel_samples(const nlohmann::json& doc, const std::string& origin,
                                         const char* side = "before",
                                         TimingStat stat = TimingStat::Median);
// Groups not excluded with cost terms and numeric predicted/measured savings. With Min,
// the measured saving is recomputed from the kernels' fastest runs (the members' rows
// before minus the rows that compute them after; groups where that is not possible are
// left out).
std::vector<GroupTermsSample> group_terms_samples(const nlohmann::json& doc,
                                                  const std::string& origin,
                                                  TimingStat stat = TimingStat::Median);

// Results of the same model (their "model" path, else the file) are repeats measured by
// separate processes: per model, in the order first seen, its files and its groups from
// every repeat merged (merge_repeats). `files` names each of `docs`.
struct ModelGroups {
  std::vector<std::string> files;
  std::vector<GroupTermsSample> groups;
};
std::vector<ModelGroups> groups_by_model(const std::vector<nlohmann::json>& docs,
                                         const std::vector<std::string>& files,
                                         TimingStat stat = TimingStat::Median);

// sum(kernel_time(unfused)) - sum(kernel_time(after kernels)), in us, on `p`.
double predict_group_us(const DeviceProfile& p, const GroupTermsSample& g);
// The groups whose measured saving is at least `k` times its noise (noise known):
// below that, its sign and rank are not measured.
std::vector<GroupTermsSample> resolved_groups(const std::vector<GroupTermsSample>& groups,
                                              double k = 2);
// Group savings on `p` (after) against the result's own predictions (before).
PredictionError group_error(const DeviceProfile& p, const std::vector<GroupTermsSample>& groups);
PredictionError recorded_group_error(const std::vector<GroupTermsSample>& groups);

struct KernelFitOptions {
  double huber_log = 0.25;     // log-residual beyond which a kernel's weight falls (~28%)
  double prior_weight = 0.05;  // per parameter, in kernels' worth: a weak pull to the base
  int max_iterations = 200;
};

struct KernelClassFit {
  int kernels = 0;        // samples of this class
  int compute_bound = 0;  // of them, timed by FLOPs on the fitted profile
  double median_abs_rel_error = NAN;
};

struct KernelFit {
  DeviceProfile profile;  // the base with fitted rates, calibrated = true
  int kernels = 0;
  double median_abs_rel_error = NAN;       // per kernel, fitted profile (the fitting data)
  double base_median_abs_rel_error = NAN;  // per kernel, base profile
  std::array<KernelClassFit, kKernelClassCount> classes{};
  int iterations = 0;
};

// Stage 2: the fused kernels (terms.fused) of the "after" timeline, timed by the
// profile's fused formula (cost_model.h): per kernel class a scale on the class's time
// and an epilogue bandwidth, fitted (log space, Huber, weak prior towards scale 1 and
// the elementwise bandwidth) with the unfused rates of `unfused_fit` held. Classes
// without fused kernels keep the defaults.
std::vector<KernelSample> fused_kernel_samples(const nlohmann::json& doc,
                                               TimingStat stat = TimingStat::Median);

struct FusedClassFit {
  int kernels = 0;
  int with_epilogue = 0;                       // of them, moving epilogue bytes
  double median_abs_rel_error = NAN;           // fitted
  double unfitted_median_abs_rel_error = NAN;  // scale 1, elementwise epilogue bandwidth
};

struct FusedFit {
  DeviceProfile profile;  // `unfused_fit` with fused_classes fitted
  int kernels = 0;
  double median_abs_rel_error = NAN;
  double unfitted_median_abs_rel_error = NAN;
  std::array<FusedClassFit, kKernelClassCount> classes{};
};

// Fits nothing (returns `unfused_fit` as is) when `fused` is empty.
FusedFit fit_fused_rates(const std::vector<KernelSample>& fused, const DeviceProfile& unfused_fit,
                         const KernelFitOptions& o = {});

// Throws fx::Error with fewer than 3 samples.
KernelFit fit_kernel_rates(const std::vector<KernelSample>& samples, const DeviceProfile& base,
                           const std::string& calibration, const KernelFitOptions& o = {});

}  // namespace fx
