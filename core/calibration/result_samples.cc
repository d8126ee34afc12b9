// SPDX-License-Identifier: Apache-2.0
#include "calibration/result_samples.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "calibration/merge_repeats.h"
#include "profile/before_after_document.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fx {
namespace {

// Every function here reads the document through the one before/after reader
// (profile/before_after_document.h) and only picks what the fits need from it.
BeforeAfterDocument typed(const nlohmann::json& doc, const std::string& origin) {
  if (!doc.is_object()) throw FileError(origin, "not a before/after result (not a JSON object)");
  return read_before_after_document(doc, origin);
}

// Variance of a kernel's median over `runs` runs, from its quartiles: sigma ~ IQR / 1.349
// for a normal spread, and the median's standard error is ~1.2533 sigma / sqrt(runs).
double median_variance(const KernelRow& k, int runs) {
  const double iqr = k.q3_us - k.q1_us;
  const double se = 1.2533 * (iqr / 1.349) / std::sqrt(double(std::max(1, runs)));
  return std::isfinite(se) ? se * se : 0.0;
}

double rel_noise_of(const KernelRow& k, int runs, double us) {
  return us > 0 ? std::sqrt(median_variance(k, runs)) / us : 0.0;
}

double time_of(const KernelRow& k, TimingStat stat) {
  return stat == TimingStat::Min ? k.min_us : k.median_us;
}

// The rows of `run` that compute exactly `members` (none reaches outside, all members
// covered); empty otherwise.
std::vector<const KernelRow*> covering_rows(const RunDocument& run,
                                            const std::set<std::string>& members) {
  std::set<std::string> covered;
  std::vector<const KernelRow*> rows;
  for (const KernelRow& k : run.kernels) {
    bool inside = true, touches = false;
    for (const std::string& n : k.nodes) {
      if (members.count(n))
        touches = true, covered.insert(n);
      else
        inside = false;
    }
    if (!touches) continue;
    if (!inside) return {};
    rows.push_back(&k);
  }
  return covered == members ? rows : std::vector<const KernelRow*>{};
}

double sum_of_min(const std::vector<const KernelRow*>& rows) {
  double us = 0;
  for (const KernelRow* k : rows) us += k->min_us;
  return rows.empty() ? NAN : us;
}

std::vector<KernelSample> run_samples(const RunDocument& run, int runs, TimingStat stat,
                                      bool fused_only) {
  std::vector<KernelSample> out;
  for (const KernelRow& k : run.kernels) {
    if (!k.cost) continue;
    KernelTerms t = *k.cost;
    const double us = time_of(k, stat);
    if (!(us > 0)) continue;
    if (fused_only && !t.fused) continue;
    // A row without a kernel (a constant) has nothing to time.
    if (t.launches == 0 && t.bytes == 0 && t.flops == 0) continue;
    t.launches *= std::max(1, k.calls);  // a row is one step per run; calls > 1 would be several
    out.push_back({k.name, t, us, rel_noise_of(k, runs, us)});
  }
  return out;
}

std::optional<GroupTermsSample> group_sample(const BeforeAfterDocument& d,
                                             const BeforeAfterGroup& g, TimingStat stat) {
  if (g.excluded() || !g.cost_terms || !g.cost_terms->complete()) return std::nullopt;
  GroupTermsSample s;
  s.id = g.id;
  s.pattern = g.pattern;
  s.fused = g.cost_terms->fused;
  for (const auto& [node, terms] : g.cost_terms->unfused) s.unfused.push_back(*terms);
  const std::set<std::string> members(g.nodes.begin(), g.nodes.end());
  const auto before = covering_rows(d.before, members);
  const auto after = covering_rows(d.after, members);
  // The kernels that ran the group after, when codegen split it or left members apart.
  if (after.size() > 1) {
    for (const KernelRow* k : after) {
      if (!k->cost) {
        s.after_kernels.clear();
        break;
      }
      s.after_kernels.push_back(*k->cost);
    }
  }
  // One generated kernel with an anchor first runs the anchor's runtime kernel
  // (GroupTermsSample::anchor_runtime); oneDNN post-ops fuse the anchor itself. Split
  // groups ran the anchor as a kernel of its own (after_kernels).
  s.anchor_runtime = g.backend == "generated-cpp" && after.size() <= 1;
  s.predicted_us = g.predicted_saved_us;
  s.measured_us = g.measured_saved_us;
  if (std::isfinite(g.bytes_saved)) s.bytes_saved = g.bytes_saved;
  if (std::isfinite(g.launches_saved)) s.launches_saved = g.launches_saved;
  if (stat == TimingStat::Min && std::isfinite(s.measured_us))
    s.measured_us = sum_of_min(before) - sum_of_min(after);
  if (!before.empty() && !after.empty() && before.front()->has_quartiles()) {
    double var = 0;
    for (const KernelRow* k : before) var += median_variance(*k, d.runs);
    for (const KernelRow* k : after) var += median_variance(*k, d.runs);
    s.noise_us = std::sqrt(var);
  }
  if (!std::isfinite(s.predicted_us) || !std::isfinite(s.measured_us)) return std::nullopt;
  return s;
}

std::vector<GroupTermsSample> group_samples(const BeforeAfterDocument& d, TimingStat stat) {
  if (!d.has_groups) throw FileError(d.origin, "not a before/after result (no \"groups\")");
  std::vector<GroupTermsSample> out;
  for (const BeforeAfterGroup& g : d.groups)
    if (auto s = group_sample(d, g, stat)) out.push_back(std::move(*s));
  return out;
}

}  // namespace

nlohmann::json read_before_after(const std::string& path) {
  return read_json_file(path, "before/after result");
}

std::vector<KernelSample> kernel_samples(const nlohmann::json& doc, const std::string& origin,
                                         const char* side, TimingStat stat) {
  const BeforeAfterDocument d = typed(doc, origin);
  const RunDocument* run = d.before_after ? d.run(side) : nullptr;
  if (!run || !run->has_kernels)
    throw FileError(origin, std::string("not a before/after result with \"") + side +
                                "\".kernels (fxc profile MODEL --opt-level N --json)");
  std::vector<KernelSample> out = run_samples(*run, d.runs, stat, false);
  if (out.empty())
    throw FileError(origin, std::string("no \"") + side +
                                "\" kernel has cost terms (\"cost\"): the result predates "
                                "them; run fxc profile --json again");
  return out;
}

std::vector<KernelSample> fused_kernel_samples(const nlohmann::json& doc, TimingStat stat) {
  if (!doc.is_object() || !doc.contains("after")) return {};
  const BeforeAfterDocument d = read_before_after_document(doc, "before/after result");
  return run_samples(d.after, d.runs, stat, true);
}

std::vector<GroupTermsSample> group_terms_samples(const nlohmann::json& doc,
                                                  const std::string& origin, TimingStat stat) {
  if (!doc.is_object() || !doc.contains("groups"))
    throw FileError(origin, "not a before/after result (no \"groups\")");
  return group_samples(typed(doc, origin), stat);
}

std::vector<CalibrationSample> calibration_samples(const nlohmann::json& doc,
                                                   const std::string& origin) {
  const char* what =
      "not a before/after result (no \"before\"/\"groups\"; see "
      "docs/before_after.md: fxc profile --plan PLAN --json)";
  if (!doc.is_object() || !doc.contains("before")) throw FileError(origin, what);
  const BeforeAfterDocument d = typed(doc, origin);
  if (!d.before_after || !d.has_groups) throw FileError(origin, what);
  std::vector<CalibrationSample> out;
  for (const BeforeAfterGroup& g : d.groups) {
    if (g.excluded()) continue;
    CalibrationSample s;
    s.id = g.id;
    s.bytes_saved = g.bytes_saved;
    s.launches_saved = g.launches_saved;
    s.predicted_us = g.predicted_saved_us;
    s.measured_us = g.measured_saved_us;
    if (std::isfinite(s.bytes_saved) && std::isfinite(s.launches_saved) &&
        std::isfinite(s.predicted_us) && std::isfinite(s.measured_us))
      out.push_back(std::move(s));
  }
  return out;
}

std::vector<ModelGroups> groups_by_model(const std::vector<nlohmann::json>& docs,
                                         const std::vector<std::string>& files, TimingStat stat) {
  std::vector<std::string> keys;
  std::vector<ModelGroups> out;
  std::vector<std::vector<std::vector<GroupTermsSample>>> repeats;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (!docs[i].is_object() || !docs[i].contains("groups"))
      throw FileError(files[i], "not a before/after result (no \"groups\")");
    const BeforeAfterDocument d = typed(docs[i], files[i]);
    const std::string key = d.model.empty() ? files[i] : d.model;
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(key);
      out.emplace_back();
      repeats.emplace_back();
      it = keys.end() - 1;
    }
    const auto k = static_cast<std::size_t>(it - keys.begin());
    out[k].files.push_back(files[i]);
    repeats[k].push_back(group_samples(d, stat));
  }
  for (std::size_t k = 0; k < out.size(); ++k) out[k].groups = merge_repeats(repeats[k]);
  return out;
}

}  // namespace fx
