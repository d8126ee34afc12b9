// SPDX-License-Identifier: Apache-2.0
#include "calibration/learn.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "analysis/saving_model.h"
#include "calibration/result_samples.h"
#include "calibration/saving_uncertainty.h"
#include "device/device_presets.h"
#include "util/error.h"

namespace fx {

std::string grid_results_dir() {
  return device_cache_dir() + "/calibration-grid";
}
std::string learned_results_dir() {
  return device_cache_dir() + "/learned";
}

std::vector<std::string> json_files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (dir.empty()) return out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

PredictionError judged_on(const DeviceProfile& p, const std::vector<GroupTermsSample>& groups) {
  std::vector<double> predicted, measured;
  for (const GroupTermsSample& g : groups) {
    predicted.push_back(predict_saving(p.saving_model, p, g).saved_us);
    measured.push_back(g.measured_us);
  }
  return prediction_error(predicted, measured);
}

}  // namespace

LearnOutcome learn_from_results(const LearnOptions& o) {
  const std::vector<std::string> grid = json_files_in(o.grid_dir);
  if (grid.empty())
    throw Error("calibrate --learn: no grid results in " + o.grid_dir +
                " (run 'fxc calibrate' first)");
  const TimingStat stat = o.stat == "min" ? TimingStat::Min : TimingStat::Median;
  std::vector<GroupTermsSample> fresh;
  for (const std::string& r : o.results) {
    const auto doc = read_before_after(r);  // a FileError naming it when it is not a result
    auto g = group_terms_samples(doc, r, stat);
    fresh.insert(fresh.end(), g.begin(), g.end());
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(o.learned_dir, ec);
  if (ec) throw FileError(o.learned_dir, "cannot create the learned folder: " + ec.message());
  for (const std::string& r : o.results) {
    const fs::path to = fs::path(o.learned_dir) / fs::path(r).filename();
    if (fs::exists(to) && fs::equivalent(to, r)) continue;
    fs::copy_file(r, to, fs::copy_options::overwrite_existing, ec);
    if (ec) throw FileError(to.string(), "cannot keep the learned result: " + ec.message());
  }
  const std::vector<std::string> learned = json_files_in(o.learned_dir);

  CalibrateFromOptions co;
  co.from = grid;
  co.from.insert(co.from.end(), learned.begin(), learned.end());
  co.stat = o.stat;
  co.base = [&] { return o.cached; };
  co.date = o.date;
  LearnOutcome out;
  out.run = calibrate_from(co);
  out.learned_results = static_cast<int>(learned.size());
  DeviceProfile& p = out.profile;
  p = out.run.profile();
  if (out.run.kernel_fit) p.saving_uncertainty = saving_uncertainty(out.run.kernel_fit->groups, p);
  p.measured_ops = o.cached.measured_ops;
  p.calibration_flags = o.cached.calibration_flags;
  p.cpu_model = o.cached.cpu_model;
  p.fxc_version = o.cached.fxc_version;
  // The grid's part of the provenance, then what was learned on top of it.
  const std::string grid_source = o.cached.source.substr(0, o.cached.source.find(" + "));
  p.source = fmt::format("{} + {} learned result{}", grid_source, learned.size(),
                         learned.size() == 1 ? "" : "s");
  out.before = judged_on(o.cached, fresh);
  out.after = judged_on(p, fresh);
  return out;
}

}  // namespace fx
