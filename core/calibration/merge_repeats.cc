// SPDX-License-Identifier: Apache-2.0
#include "calibration/merge_repeats.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "util/statistics.h"

namespace fx {

std::vector<GroupTermsSample> merge_repeats(
    const std::vector<std::vector<GroupTermsSample>>& repeats) {
  std::vector<GroupTermsSample> out;
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<const GroupTermsSample*>> seen;
  for (const auto& rep : repeats)
    for (const auto& g : rep) {
      auto [it, fresh] = index.emplace(g.id, out.size());
      if (fresh) out.push_back(g), seen.emplace_back();
      seen[it->second].push_back(&g);
    }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto& all = seen[i];
    const double n = double(all.size());
    out[i].repeats = static_cast<int>(all.size());
    if (all.size() < 2) continue;
    std::vector<double> v;
    double within = 0;  // mean within-run variance
    bool within_known = true;
    for (const auto* g : all) {
      v.push_back(g->measured_us);
      within_known = within_known && std::isfinite(g->noise_us);
      within += std::isfinite(g->noise_us) ? g->noise_us * g->noise_us / n : 0;
    }
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    const double between_se = 1.2533 * std::sqrt(ss / (n - 1)) / std::sqrt(n);
    const double within_se = std::sqrt(within / n);
    out[i].measured_us = median_or_nan(v);
    out[i].noise_us = within_known ? std::max(between_se, within_se) : between_se;
  }
  return out;
}

}  // namespace fx
