// SPDX-License-Identifier: Apache-2.0
// `fxc calibrate --from ... --json`: the calibration run as a JSON document
// (calibrate_from.h: to_json).

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "calibration/calibrate_from.h"

namespace fx {
namespace {

using nlohmann::json;

json num_or_null(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json error_json(const PredictionError& e) {
  return {{"groups", e.groups},
          {"spearman", num_or_null(e.spearman)},
          {"median_abs_rel_error", num_or_null(e.median_abs_rel_error)}};
}

json judged_json(const JudgedGroups& j) {
  return json{{"from", j.from},
              {"groups", j.groups},
              {"before", error_json(j.recorded)},
              {"base_model", error_json(j.base_model)},
              {"unfused_fit_only", error_json(j.unfused_only)},
              {"after", error_json(j.fitted)},
              {"resolved",
               {{"groups", j.resolved},
                {"note", "groups whose measured saving is >= 2x its noise"},
                {"before", error_json(j.resolved_recorded)},
                {"after", error_json(j.resolved_fitted)},
                {"saving_model", error_json(j.resolved_saving)}}},
              {"saving_model", error_json(j.saving)}};
}

json group_fit_json(const CalibrationRun& run, const GroupFitCalibration& g,
                    const std::string& written_to) {
  const CalibrationFit& f = g.fit;
  return {{"from", g.from},
          {"method", "group-fit (in-sample; the result has no kernel cost terms)"},
          {"estimate_profile", run.estimate_profile},
          {"groups", g.groups},
          {"bandwidth_bytes_per_s", f.bandwidth_bytes_per_s()},
          {"launch_overhead_s", f.launch_overhead_s},
          {"rms_residual_us", f.rms_residual_us},
          {"note", f.note},
          {"before", error_json(f.before)},
          {"after", error_json(f.after)},
          {"profile", to_json(g.profile)},
          {"written_to", written_to}};
}

json kernel_fit_json(const KernelFitCalibration& k) {
  const DeviceProfile& p = k.profile;
  json classes = json::object(), fused_classes = json::object();
  for (int c = 0; c < kKernelClassCount; ++c) {
    auto kc = static_cast<KernelClass>(c);
    const auto& cf = k.kernel_fit.classes[c];
    classes[kernel_class_name(kc)] = {
        {"kernels", cf.kernels},
        {"compute_bound", cf.compute_bound},
        {"bandwidth_bytes_per_s", p.bandwidth(kc)},
        {"flops_per_s", p.flops(kc)},
        {"median_abs_rel_error", num_or_null(cf.median_abs_rel_error)}};
    const auto& ff = k.fused_fit.classes[c];
    if (ff.kernels == 0) continue;
    fused_classes[kernel_class_name(kc)] = {
        {"kernels", ff.kernels},
        {"with_epilogue", ff.with_epilogue},
        {"scale", p.fused_scale(kc)},
        {"epilogue_bandwidth_bytes_per_s", p.epilogue_bandwidth(kc)},
        {"fixed_s", p.fused_fixed_s(kc)},
        {"median_abs_rel_error_unfitted", num_or_null(ff.unfitted_median_abs_rel_error)},
        {"median_abs_rel_error", num_or_null(ff.median_abs_rel_error)}};
  }
  return {
      {"kernel_fit",
       {{"kernels", k.kernel_fit.kernels},
        {"iterations", k.kernel_fit.iterations},
        {"median_abs_rel_error_base", num_or_null(k.kernel_fit.base_median_abs_rel_error)},
        {"median_abs_rel_error", num_or_null(k.kernel_fit.median_abs_rel_error)},
        {"classes", classes}}},
      {"fused_fit",
       {{"kernels", k.fused_fit.kernels},
        {"median_abs_rel_error_unfitted", num_or_null(k.fused_fit.unfitted_median_abs_rel_error)},
        {"median_abs_rel_error", num_or_null(k.fused_fit.median_abs_rel_error)},
        {"classes", fused_classes}}}};
}

json saving_model_json(const KernelFitCalibration& k) {
  const SavingModel& saving = k.saving;
  json saving_classes = json::object();
  for (int c = 0; c < kKernelClassCount; ++c) {
    const auto& sc = saving.classes[c];
    if (sc.groups == 0) continue;
    json coef = json::object();
    for (int i = 0; i < kSavingTerms; ++i) coef[saving_term_name(i)] = sc.coefficients[i];
    saving_classes[kernel_class_name(static_cast<KernelClass>(c))] = {
        {"groups", sc.groups},
        {"fitted", sc.fitted},
        {"why_not_fitted", sc.why},
        {"leave_one_out_error", num_or_null(sc.leave_one_out_error)},
        {"difference_of_times_error", num_or_null(sc.difference_error)},
        {"coefficients", coef}};
  }
  return {{"method",
           "saved = sum of c_i x term_i per fused-kernel class (terms: members, traffic, "
           "launches, anchor_relayout, anchor_compute, -fused_cost, anchor_memory, "
           "anchor_weights, anchor_planes, -fused_fixed, timed on the fitted profile); weighted "
           "least squares on the measured savings (1 / (noise^2 + (0.2 x measured)^2)), ridge "
           "to the prior (1,0,0,0,0,1,0,0,0,0); classes with fewer than " +
               std::to_string(saving.options.min_groups_per_class) +
               " groups, or whose fit leaving each group out does no better than the "
               "difference of fitted kernel times, use that difference"},
          {"groups", saving.groups},
          {"classes", saving_classes},
          {"in_sample", error_json(k.fitted_results.saving)},
          {"leave_one_out", error_json(k.leave_one_out)},
          {"resolved",
           {{"groups", k.fitted_results.resolved},
            {"in_sample", error_json(k.fitted_results.resolved_saving)},
            {"leave_one_out", error_json(k.leave_one_out_resolved)}}}};
}

// The saving model's terms of each fitted group on the fitted profile (us), so that a
// reader can check a prediction by hand.
json group_rows_json(const KernelFitCalibration& k) {
  json rows = json::array();
  for (const auto& g : k.groups) {
    const SavingFeatures sf = saving_features(k.profile, g);
    const SavingPrediction sp = k.saving.predict(k.profile, g);
    json terms = json::object();
    for (int i = 0; i < kSavingTerms; ++i) terms[saving_term_name(i)] = sf.us[i];
    rows.push_back({{"id", g.id},
                    {"pattern", g.pattern},
                    {"measured_us", g.measured_us},
                    {"noise_us", num_or_null(g.noise_us)},
                    {"repeats", g.repeats},
                    {"predicted_us_before", g.predicted_us},
                    {"predicted_us_after", predict_group_us(k.profile, g)},
                    {"predicted_us_saving_model", sp.saved_us},
                    {"saving_model_fitted", sp.fitted},
                    {"saving_model_class", kernel_class_name(sf.fused_class)},
                    {"saving_model_terms_us", terms}});
  }
  return rows;
}

}  // namespace

json to_json(const CalibrationRun& run, const std::string& written_to) {
  if (run.group_fit) return group_fit_json(run, *run.group_fit, written_to);
  const KernelFitCalibration& k = *run.kernel_fit;
  const CalibrateFromOptions& o = run.options;
  const DeviceProfile& p = k.profile;
  const JudgedGroups& in = k.fitted_results;
  json ev = json::array();
  for (const auto& h : k.held_out) ev.push_back(judged_json(h));
  json j = kernel_fit_json(k);
  j.update(
      json{{"from", o.from.size() == 1 ? json(o.from[0]) : json(o.from)},
           {"method",
            "kernel-fit: launch + max(bytes/bandwidth, flops/flops) per kernel class, fitted in "
            "log space (Huber) to the unfused kernels' times; then per class a fused scale and "
            "epilogue bandwidth fitted to the fused kernels' times; group savings predicted "
            "from cost terms"},
           {"estimate_profile", run.estimate_profile},
           {"stat", o.stat},
           {"base_profile", run.base.label()},
           {"fitted_profile", p.label()},
           {"groups", in.groups},
           {"kernels", k.kernel_fit.kernels},
           {"bandwidth_bytes_per_s", p.bandwidth(KernelClass::Elementwise)},
           {"launch_overhead_s", p.launch_overhead_s},
           {"before", error_json(in.recorded)},
           {"base_model", error_json(in.base_model)},
           {"unfused_fit_only", error_json(in.unfused_only)},
           {"after", error_json(in.fitted)},
           {"resolved", judged_json(in)["resolved"]},
           {"saving_model", saving_model_json(k)},
           {"evaluate", ev},
           {"group_rows", group_rows_json(k)},
           {"profile", to_json(p)},
           {"written_to", written_to}});
  return j;
}

}  // namespace fx
