// SPDX-License-Identifier: Apache-2.0
#include "calibration/grid_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "analysis/fusion_finder.h"
#include "analysis/fusion_plan.h"
#include "calibration/cpu_calibration.h"
#include "calibration/saving_uncertainty.h"
#include "profile/before_after.h"
#include "profile/before_after_json.h"
#include "util/error.h"
#include "util/statistics.h"
#include "util/version.h"

namespace fx {

std::vector<std::string> GridCalibration::findings() const {
  std::vector<std::string> f = implausible;
  f.insert(f.end(), busy.begin(), busy.end());
  return f;
}

std::vector<std::string> grid_op_types(const std::vector<GridFamily>& grid) {
  std::vector<std::string> ops;
  for (const GridFamily& f : grid)
    for (std::size_t i = 0; i < f.graph.node_count(); ++i)
      ops.push_back(f.graph.node(NodeId(i)).op_type);
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

GridCalibration calibrate_grid(const GridCalibrationOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  auto say = [&](const std::string& s) {
    if (o.progress) o.progress(s);
  };
  GridCalibration c;
  c.facts = host_machine_facts();
  c.busy_before = probe_busy();
  say("measuring copy bandwidth, GEMM and dispatch");
  DeviceProfile base = measure_cpu_host();
  c.copy = measure_copy_curve(c.facts.caches);
  // Every kernel's bandwidth follows the working set from here on: the fits below
  // find each class's rate beyond the caches and how closely it follows the copy.
  base.bandwidth_curve = bandwidth_curve_of(c.copy);

  namespace fs = std::filesystem;
  const fs::path dir = o.work_dir.empty()
                           ? fs::temp_directory_path() /
                                 fmt::format("fxc-calibrate-{}", static_cast<long>(::getpid()))
                           : fs::path(o.work_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw FileError(dir.string(), "cannot create the calibration folder: " + ec.message());

  // The measured base beside the results (not a result: no .json), so that the same
  // results can be fitted again on another base (bench/steps/55_validate.sh compares the
  // profile with and without the working-set curve on one set of measurements).
  save_device_profile(base, (dir / "base-profile.json.txt").string());

  const std::vector<GridFamily> grid = calibration_grid(c.facts.caches);
  std::vector<double> dispersions;
  for (const GridFamily& fam : grid) {
    FusionOptions fo;
    fo.opt_level = 2;
    fo.threshold = 0;
    FusionPlan plan(analyze_fusion(fam.graph, base, fo), "calibration-grid/" + fam.name);
    for (const FusionGroup& g : plan.groups()) plan.accept(g.id, "calibration grid");
    for (int rep = 0; rep < std::max(1, o.repeats); ++rep) {
      say(fmt::format("timing the {} grid ({} nodes, {} groups), measurement {} of {}", fam.name,
                      fam.graph.node_count(), plan.groups().size(), rep + 1, o.repeats));
      BeforeAfterOptions bo;
      bo.profile.runs = std::max(3, o.runs);
      bo.profile.threads = o.threads;
      bo.profile.seed = uint64_t(rep + 1);
      bo.codegen.threads = o.threads;
      bo.codegen.stem = "calibration_" + fam.name;
      const BeforeAfterResult r = run_before_after(fam.graph, plan.accepted(), bo);
      for (const KernelStats& k : r.before.kernels)
        if (k.median_us > 0) dispersions.push_back((k.q3_us - k.q1_us) / 1.349 / k.median_us);
      BeforeAfterMeta meta;
      meta.model = "calibration-grid/" + fam.name;
      meta.opt_level = 2;
      meta.seed = bo.profile.seed;
      const std::string path = (dir / fmt::format("{}.{}.json", fam.name, rep + 1)).string();
      std::ofstream out(path);
      out << before_after_json(r, meta).dump() << "\n";
      if (!out) throw FileError(path, "cannot write a calibration result");
      c.result_files.push_back(path);
    }
  }
  c.median_kernel_dispersion = median_or_nan(dispersions);

  say("fitting kernel classes, fused kernels and the saving model");
  CalibrateFromOptions co;
  co.from = c.result_files;
  co.base = [&] { return base; };
  co.date = o.date;
  c.run = calibrate_from(co);
  c.profile = c.run.profile();
  if (c.run.kernel_fit) {
    c.groups = static_cast<int>(c.run.kernel_fit->groups.size());
    c.profile.saving_uncertainty = saving_uncertainty(c.run.kernel_fit->groups, c.profile);
  }
  c.profile.measured_ops = grid_op_types(grid);
  c.profile.cpu_model = c.facts.cpu_model;
  c.profile.fxc_version = kVersion;
  c.profile.source =
      fmt::format("measured on this host {} (calibration grid: {} groups)", o.date, c.groups);
  c.profile.calibration =
      fmt::format("{}, calibration grid of {} families x {} measurements (fxc calibrate)", o.date,
                  grid.size(), o.repeats);

  c.busy_after = probe_busy();
  c.implausible = implausible_figures(c.profile, c.facts, c.copy);
  c.busy = busy_findings(c.busy_before, c.busy_after, c.facts.threads, c.median_kernel_dispersion,
                         o.limits);
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

}  // namespace fx
