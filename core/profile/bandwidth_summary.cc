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
                                              const std::string& reference, double target) {
  auto ref = std::find_if(samples.begin(), samples.end(),
                          [&](const BandwidthSample& s) { return s.id == reference; });
  if (ref == samples.end()) throw Error("bandwidth: no reference kernel '" + reference + "'");
  const std::size_t reps = ref->ns.size();
  if (reps == 0) throw Error("bandwidth: no repetitions");
  auto gbs_of = [&](const BandwidthSample& s) {
    if (s.ns.size() != reps)
      throw Error("bandwidth: '" + s.id + "' has " + std::to_string(s.ns.size()) +
                  " repetitions, the reference " + std::to_string(reps));
    std::vector<double> g;
    for (double ns : s.ns) {
      if (!(ns > 0)) throw Error("bandwidth: '" + s.id + "' has a time that is not > 0");
      g.push_back(s.bytes / ns);  // bytes per ns = GB/s
    }
    return g;
  };
  const std::vector<double> ref_gbs = gbs_of(*ref);
  const double ref_best = *std::max_element(ref_gbs.begin(), ref_gbs.end());
  std::vector<BandwidthRow> rows;
  for (const BandwidthSample& s : samples) {
    BandwidthRow r;
    r.id = s.id;
    r.gbs = gbs_of(s);
    for (std::size_t k = 0; k < reps; ++k) r.ratio.push_back(r.gbs[k] / ref_gbs[k]);
    r.best_gbs = *std::max_element(r.gbs.begin(), r.gbs.end());
    r.median_gbs = median_of(r.gbs);
    r.ratio_min = *std::min_element(r.ratio.begin(), r.ratio.end());
    r.ratio_median = median_of(r.ratio);
    r.best_vs_best = r.best_gbs / ref_best;
    r.meets_target = r.ratio_median >= target && r.best_vs_best >= target;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace fx
