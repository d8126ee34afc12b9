// SPDX-License-Identifier: Apache-2.0
#include "calibration/lone_kernel_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "util/statistics.h"

namespace fx {
namespace {

double time_of(const KernelRow& k, TimingStat stat) {
  return stat == TimingStat::Min ? k.min_us : k.median_us;
}

}  // namespace

LoneKernelTimes lone_kernel_times(const BeforeAfterDocument& doc, TimingStat stat,
                                  const DeviceProfile* profile) {
  LoneKernelTimes t;
  std::set<std::string> grouped;
  bool fused = false;
  for (const BeforeAfterGroup& g : doc.groups) {
    if (g.status != "fused") continue;
    fused = true;
    grouped.insert(g.nodes.begin(), g.nodes.end());
  }
  const RunDocument* before = doc.run("before");
  const RunDocument* after = doc.run("after");
  if (!before || !after) return t;
  std::map<std::string, const KernelRow*> after_of, before_of;
  for (const KernelRow& k : after->kernels)
    if (k.nodes.size() == 1 && !k.group_id) after_of[k.nodes[0]] = &k;
  for (const KernelRow& k : before->kernels)
    if (k.nodes.size() == 1) before_of[k.nodes[0]] = &k;
  for (const KernelRow& k : before->kernels) {
    if (k.nodes.size() != 1 || !k.cost || grouped.count(k.nodes[0])) continue;
    auto it = after_of.find(k.nodes[0]);
    if (it == after_of.end()) continue;
    const double b = time_of(k, stat), a = time_of(*it->second, stat);
    if (!std::isfinite(b) || !std::isfinite(a) || !(b > 0)) continue;
    const KernelTerms& terms = *k.cost;
    if (terms.kernel_class == KernelClass::Conv && !terms.winograd) {
      if (terms.relayout_bytes > 0) {
        t.spatial_saved_us += b - a;
        t.spatial_relayout_bytes += terms.relayout_bytes;
      } else {
        t.other_conv_before_us += b;
        t.other_conv_after_us += a;
      }
    }
    if (!fused) continue;
    const auto c = static_cast<std::size_t>(terms.kernel_class);
    t.before_us[c] += b;
    t.after_us[c] += a;
  }
  // Steps of a Pad and its AveragePool outside every group: merged by the fused program
  // itself (its other merges, a BatchNormalization with its Relu, save what their class
  // shares say).
  for (const KernelRow& k : after->kernels) {
    if (k.nodes.size() != 2 || k.group_id ||
        k.op_types != std::vector<std::string>{"Pad", "AveragePool"})
      continue;
    double b = 0, predicted = profile ? 0 : NAN;
    for (const std::string& n : k.nodes) {
      auto it = before_of.find(n);
      if (it == before_of.end() || grouped.count(n)) {
        b = NAN;
        break;
      }
      b += time_of(*it->second, stat);
      if (profile)
        predicted += it->second->cost ? kernel_time(*profile, *it->second->cost) * 1e6 : NAN;
    }
    const double a = time_of(k, stat);
    if (!std::isfinite(b) || !std::isfinite(a) || !(b > 0)) continue;
    t.merged_before_us += b;
    t.merged_after_us += a;
    if (std::isfinite(predicted) && predicted > 0)
      t.merged_predicted_us += predicted;
    else
      t.merged_unpredicted = true;
  }
  return t;
}

LoneKernelSaving fit_lone_kernel_saving(const std::vector<LoneKernelTimes>& models) {
  LoneKernelSaving s;
  std::array<std::vector<double>, kKernelClassCount> shares;
  for (const LoneKernelTimes& r : models) {
    bool any = false;
    for (std::size_t c = 0; c < shares.size(); ++c) {
      if (!(r.before_us[c] > 0)) continue;
      shares[c].push_back((r.before_us[c] - r.after_us[c]) / r.before_us[c]);
      any = true;
    }
    s.results += any;
  }
  for (std::size_t c = 0; c < shares.size(); ++c)
    if (static_cast<int>(shares[c].size()) >= kMinLoneResults)
      s.share[c] = std::min(median_or_nan(shares[c]), kMaxLoneShare);
  std::vector<double> spatial, other, merged;
  for (const LoneKernelTimes& r : models) {
    if (r.spatial_relayout_bytes > 0)
      spatial.push_back(r.spatial_saved_us / r.spatial_relayout_bytes);
    if (r.other_conv_before_us > 0)
      other.push_back(1 - r.other_conv_after_us / r.other_conv_before_us);
    if (r.merged_before_us > 0)
      merged.push_back((r.merged_before_us - r.merged_after_us) /
                       (r.merged_unpredicted ? r.merged_before_us : r.merged_predicted_us));
  }
  // Never a negative saving: a kind that measured slower on the median saves nothing.
  auto fit = [](const std::vector<double>& v, double hi) {
    return static_cast<int>(v.size()) >= kMinLoneResults ? std::clamp(median_or_nan(v), 0.0, hi)
                                                         : std::numeric_limits<double>::quiet_NaN();
  };
  s.spatial_conv_s_per_byte = fit(spatial, 1e6) * 1e-6;  // us per byte -> s per byte
  s.other_conv_share = fit(other, kMaxLoneShare);
  s.merged_share = fit(merged, kMaxMergedRatio);
  return s;
}

}  // namespace fx
