// SPDX-License-Identifier: Apache-2.0
#include "profile/bandwidth_summary.h"

#include <algorithm>

#include "util/error.h"

namespace fx {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<BandwidthRow> summarize_bandwidth(const std::vector<BandwidthSample>& samples,
                                              const std::string& reference, double target,
                                              int runs_per_rep) {
  auto ref = std::find_if(samples.begin(), samples.end(),
                          [&](const BandwidthSample& s) { return s.id == reference; });
  if (ref == samples.end()) throw Error("bandwidth: no reference kernel '" + reference + "'");
  const std::size_t runs = ref->ns.size(), per = static_cast<std::size_t>(runs_per_rep);
  if (runs_per_rep < 1 || runs == 0 || runs % per != 0)
    throw Error("bandwidth: " + std::to_string(runs) + " runs are not whole repetitions of " +
                std::to_string(runs_per_rep));
  const std::size_t reps = runs / per;
  for (const BandwidthSample& s : samples) {
    if (s.ns.size() != runs)
      throw Error("bandwidth: '" + s.id + "' has " + std::to_string(s.ns.size()) +
                  " runs, the reference " + std::to_string(runs));
    for (double ns : s.ns)
      if (!(ns > 0)) throw Error("bandwidth: '" + s.id + "' has a time that is not > 0");
  }
  // GB/s (bytes per ns) of each repetition's median run.
  auto rep_gbs = [&](const BandwidthSample& s) {
    std::vector<double> g;
    for (std::size_t k = 0; k < reps; ++k)
      g.push_back(s.bytes /
                  median_of({s.ns.begin() + long(k * per), s.ns.begin() + long((k + 1) * per)}));
    return g;
  };
  // The fastest single run: on a shared machine the moments when the memory is not
  // contended are short, and a repetition's median rarely falls into one.
  auto best_run = [](const BandwidthSample& s) {
    return s.bytes / *std::min_element(s.ns.begin(), s.ns.end());
  };
  const double ref_best = best_run(*ref);
  std::vector<BandwidthRow> rows;
  for (const BandwidthSample& s : samples) {
    BandwidthRow r;
    r.id = s.id;
    r.gbs = rep_gbs(s);
    for (std::size_t k = 0; k < reps; ++k) {
      std::vector<double> round;  // this kernel's GB/s over the copy's, round by round
      for (std::size_t i = k * per; i < (k + 1) * per; ++i)
        round.push_back((s.bytes / s.ns[i]) / (ref->bytes / ref->ns[i]));
      r.ratio.push_back(median_of(round));
    }
    r.best_gbs = best_run(s);
    r.median_gbs = median_of(r.gbs);
    r.ratio_min = *std::min_element(r.ratio.begin(), r.ratio.end());
    r.ratio_median = median_of(r.ratio);
    r.best_vs_best = r.best_gbs / ref_best;
    r.meets_target = r.ratio_median >= target;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace fx
