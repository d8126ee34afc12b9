// SPDX-License-Identifier: Apache-2.0
#include "calibration/calibrate_from.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "calibration/lone_kernel_fit.h"
#include "profile/before_after_document.h"
#include "util/error.h"

namespace fx {
namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// File names without their folders, at most four then a count: the saving model's
// provenance is repeated beside every estimate it makes.
std::string short_names(const std::vector<std::string>& files) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < files.size() && i < (files.size() > 4 ? 3 : 4); ++i)
    names.push_back(std::filesystem::path(files[i]).filename().string());
  std::string s = join(names);
  if (files.size() > 4) s += fmt::format(" and {} more", files.size() - 3);
  return s;
}

// The older fit: least squares of the group savings on bytes and launches saved.
GroupFitCalibration fit_groups(const CalibrationRun& run, const nlohmann::json& doc) {
  GroupFitCalibration g;
  g.from = run.options.from.front();
  auto samples = calibration_samples(doc, g.from);
  g.fit = fit_calibration(samples);
  g.groups = static_cast<int>(samples.size());
  g.profile = apply_calibration(run.base, g.fit,
                                fmt::format("fitted {} to {} groups measured in {} (fxc "
                                            "calibrate --from)",
                                            run.options.date, samples.size(), g.from));
  // A saving model the base carried was fitted on the rates this fit changes.
  g.profile.saving_model = {};
  return g;
}

// Stages 1 and 2, and the profile's provenance.
void fit_rates(const CalibrationRun& run, const std::vector<KernelSample>& kernels,
               const std::vector<KernelSample>& fused, KernelFitCalibration& k) {
  const CalibrateFromOptions& o = run.options;
  const std::string what =
      fmt::format("fitted {} to the {} times of {} unfused kernels of {} (fxc calibrate --from)",
                  o.date, o.stat, kernels.size(), join(o.from));
  k.kernel_fit = fit_kernel_rates(kernels, run.base, what);
  k.fused_fit = fit_fused_rates(fused, k.kernel_fit.profile);
  DeviceProfile& p = k.profile;
  p = k.fused_fit.profile;
  p.calibration = what + fmt::format("; fused rates fitted to {} fused kernels", fused.size());
  // The base may itself be a fitted profile: keep only what was measured, so that
  // fitting again replaces the earlier fit's statement instead of appending to it.
  const std::string measured = run.base.source.substr(0, run.base.source.find("; kernel rates "));
  p.source = measured + "; kernel rates " + p.calibration;
  // A base that carried a saving model fitted on other rates: its coefficients do not
  // apply to these; the one fitted in stage 3 replaces it.
  p.saving_model = {};
}

JudgedGroups judge(const CalibrationRun& run, const KernelFitCalibration& k,
                   const std::string& from, const std::vector<GroupTermsSample>& g) {
  auto r = resolved_groups(g);
  return JudgedGroups{from,
                      int(g.size()),
                      int(r.size()),
                      recorded_group_error(g),
                      group_error(run.base, g),
                      group_error(k.kernel_fit.profile, g),
                      group_error(k.profile, g),
                      recorded_group_error(r),
                      group_error(k.profile, r),
                      saving_error(k.saving, k.profile, g),
                      saving_error(k.saving, k.profile, r)};
}

// Stage 3 and the judgement on the fitted and the --evaluate results.
void fit_savings(const CalibrationRun& run, TimingStat stat, KernelFitCalibration& k) {
  const CalibrateFromOptions& o = run.options;
  // The saving model (saving_model.h), fitted to the same results' group savings on the
  // fitted rates, and saved with them: analysis on this profile predicts each group's
  // saving with it for the classes that kept their fit.
  k.saving = fit_saving_model(k.groups, k.profile);
  k.profile.saving_model = k.saving.coefficients(
      fmt::format("{}, {} measured group savings of {} (fxc calibrate --from)", o.date,
                  k.saving.groups, short_names(o.from)));
  k.fitted_results = judge(run, k, join(o.from), k.groups);
  // On the fitted results the saving model is judged in-sample (it saw these savings)
  // and leave-one-group-out (each group predicted by a fit to the others).
  k.leave_one_out = leave_one_out_error(k.groups, k.profile);
  k.leave_one_out_resolved = leave_one_out_error(k.groups, k.profile, {}, true);
  std::vector<nlohmann::json> evaluated;
  for (const auto& e : o.evaluate) evaluated.push_back(read_before_after(e));
  const auto by_model = groups_by_model(evaluated, o.evaluate, stat);
  std::vector<GroupTermsSample> all;
  for (const auto& m : by_model) {
    k.held_out.push_back(judge(run, k, join(m.files), m.groups));
    all.insert(all.end(), m.groups.begin(), m.groups.end());
  }
  if (by_model.size() > 1) k.held_out.push_back(judge(run, k, "all --evaluate results", all));
}

}  // namespace

CalibrationRun calibrate_from(const CalibrateFromOptions& o) {
  if (o.stat != "median" && o.stat != "min")
    throw Error("calibrate: --stat must be median or min, not '" + o.stat + "'");
  const TimingStat stat = o.stat == "min" ? TimingStat::Min : TimingStat::Median;
  CalibrationRun run;
  run.options = o;
  std::vector<nlohmann::json> docs;
  for (const auto& f : o.from) docs.push_back(read_before_after(f));
  run.estimate_profile = docs.at(0).value("estimate_profile", "?");
  std::vector<KernelSample> kernels;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    std::vector<KernelSample> k;
    try {
      k = kernel_samples(docs[i], o.from[i], "before", stat);
    } catch (const FileError&) {
      if (docs.size() != 1) throw;
      run.base = o.base();
      run.group_fit = fit_groups(run, docs[0]);
      return run;
    }
    kernels.insert(kernels.end(), k.begin(), k.end());
  }
  KernelFitCalibration k;
  // Every repeat's kernels are fitted; a model's repeats give one merged group each.
  int model = 0;
  for (const auto& m : groups_by_model(docs, o.from, stat)) {
    k.groups.insert(k.groups.end(), m.groups.begin(), m.groups.end());
    k.group_model.insert(k.group_model.end(), m.groups.size(), model++);
  }
  run.base = o.base();
  // Stage 2 fits the fused kernels of the same results' "after" timelines.
  std::vector<KernelSample> fused;
  for (const auto& d : docs) {
    auto f = fused_kernel_samples(d, stat);
    fused.insert(fused.end(), f.begin(), f.end());
  }
  fit_rates(run, kernels, fused, k);
  // What the fused programs of these results saved on the kernels they left alone, per
  // model (its repeats summed): the median is over models, not over repeats of one.
  std::vector<std::string> model_of;
  std::vector<LoneKernelTimes> lone;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const BeforeAfterDocument d = read_before_after_document(docs[i], o.from[i]);
    const std::string m = d.model.empty() ? o.from[i] : d.model;
    const auto at = std::find(model_of.begin(), model_of.end(), m);
    const std::size_t j = std::size_t(at - model_of.begin());
    if (at == model_of.end()) model_of.push_back(m), lone.emplace_back();
    lone[j] += lone_kernel_times(d, stat, &k.profile);
  }
  k.profile.lone_kernel_saving = fit_lone_kernel_saving(lone);
  fit_savings(run, stat, k);
  run.kernel_fit = std::move(k);
  return run;
}

}  // namespace fx
