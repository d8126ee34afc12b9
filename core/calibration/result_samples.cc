#include "calibration/result_samples.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "calibration/merge_repeats.h"
#include "util/error.h"

namespace fx {
namespace {

double num(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

std::optional<KernelTerms> terms_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  auto c = kernel_class_from_name(j.value("class", ""));
  double b = num(j, "bytes"), f = num(j, "flops");
  if (!c || !std::isfinite(b) || !std::isfinite(f)) return std::nullopt;
  double e = j.contains("epilogue_bytes") ? num(j, "epilogue_bytes") : 0.0;
  // Results written before "relayout_bytes" was: 0 (no relayout term).
  double k = j.contains("relayout_bytes") ? num(j, "relayout_bytes") : 0.0;
  // ... and before "constant_bytes" and "planes" were: 0 (no weights or planes terms).
  double w = j.contains("constant_bytes") ? num(j, "constant_bytes") : 0.0;
  double p = j.contains("planes") ? num(j, "planes") : 0.0;
  return KernelTerms{*c, b, f, j.value("launches", 1), std::isfinite(e) ? e : 0.0,
                     j.value("fused", false), std::isfinite(k) ? std::clamp(k, 0.0, b) : 0.0,
                     std::isfinite(w) ? std::clamp(w, 0.0, b) : 0.0,
                     std::isfinite(p) ? std::max(p, 0.0) : 0.0,
                     // ... and before "winograd" was: false (the anchor terms as before).
                     j.value("winograd", false)};
}

// A kernel row's terms; results written before "fused" was: a row of several nodes.
std::optional<KernelTerms> row_terms(const nlohmann::json& k) {
  const auto& cost = k.value("cost", nlohmann::json());
  auto t = terms_from_json(cost);
  if (t && !cost.contains("fused")) t->fused = k.value("nodes", nlohmann::json::array()).size() > 1;
  return t;
}

// Variance of a kernel's median over `runs` runs, from its quartiles: sigma ~ IQR / 1.349
// for a normal spread, and the median's standard error is ~1.2533 sigma / sqrt(runs).
double median_variance(const nlohmann::json& k, int runs) {
  const double iqr = num(k, "q3_us") - num(k, "q1_us");
  const double se = 1.2533 * (iqr / 1.349) / std::sqrt(double(std::max(1, runs)));
  return std::isfinite(se) ? se * se : 0.0;
}

double rel_noise_of(const nlohmann::json& k, int runs, double us) {
  return us > 0 ? std::sqrt(median_variance(k, runs)) / us : 0.0;
}

}  // namespace

nlohmann::json read_before_after(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FileError(path, "cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw FileError(path, std::string("not JSON: ") + e.what());
  }
}

std::vector<KernelSample> kernel_samples(const nlohmann::json& doc, const std::string& origin,
                                         const char* side, TimingStat stat) {
  if (!doc.is_object() || !doc.contains(side) || !doc[side].is_object() ||
      !doc[side].contains("kernels") || !doc[side]["kernels"].is_array())
    throw FileError(origin, std::string("not a before/after result with \"") + side +
                                "\".kernels (fxc profile MODEL --opt-level N --json)");
  std::vector<KernelSample> out;
  for (const auto& k : doc[side]["kernels"]) {
    if (!k.is_object()) continue;
    auto t = row_terms(k);
    double us = num(k, stat == TimingStat::Min ? "min_us" : "median_us");
    // A row without a kernel (a constant) has nothing to time.
    if (!t || !(us > 0) || (t->launches == 0 && t->bytes == 0 && t->flops == 0)) continue;
    int calls = std::max(1, k.value("calls", 1));
    t->launches *= calls;  // a row is one step per run; calls > 1 would be several
    out.push_back({k.value("name", ""), *t, us, rel_noise_of(k, doc.value("runs", 1), us)});
  }
  if (out.empty())
    throw FileError(origin, std::string("no \"") + side +
                                "\" kernel has cost terms (\"cost\"): the result predates "
                                "them; run fxc profile --json again");
  return out;
}

std::vector<KernelSample> fused_kernel_samples(const nlohmann::json& doc, TimingStat stat) {
  std::vector<KernelSample> out;
  auto it = doc.find("after");
  if (it == doc.end() || !it->is_object() || !it->contains("kernels")) return out;
  for (const auto& k : (*it)["kernels"]) {
    if (!k.is_object()) continue;
    auto t = row_terms(k);
    double us = num(k, stat == TimingStat::Min ? "min_us" : "median_us");
    if (!t || !t->fused || !(us > 0)) continue;
    t->launches *= std::max(1, k.value("calls", 1));
    out.push_back({k.value("name", ""), *t, us, rel_noise_of(k, doc.value("runs", 1), us)});
  }
  return out;
}

namespace {

// The rows of `side` that compute exactly `members` (none reaches outside, all members
// covered); empty otherwise.
std::vector<const nlohmann::json*> covering_rows(const nlohmann::json& doc, const char* side,
                                                 const std::set<std::string>& members) {
  auto it = doc.find(side);
  if (it == doc.end() || !it->is_object() || !it->contains("kernels")) return {};
  std::set<std::string> covered;
  std::vector<const nlohmann::json*> rows;
  for (const auto& k : (*it)["kernels"]) {
    bool inside = true, touches = false;
    for (const auto& n : k.value("nodes", nlohmann::json::array())) {
      if (!n.is_string()) continue;
      if (members.count(n.get<std::string>()))
        touches = true, covered.insert(n.get<std::string>());
      else
        inside = false;
    }
    if (!touches) continue;
    if (!inside) return {};
    rows.push_back(&k);
  }
  return covered == members ? rows : std::vector<const nlohmann::json*>{};
}

double sum_of(const std::vector<const nlohmann::json*>& rows, const char* key) {
  double us = 0;
  for (const auto* k : rows) us += num(*k, key);
  return rows.empty() ? NAN : us;
}

}  // namespace

std::vector<GroupTermsSample> group_terms_samples(const nlohmann::json& doc,
                                                  const std::string& origin, TimingStat stat) {
  if (!doc.is_object() || !doc.contains("groups") || !doc["groups"].is_array())
    throw FileError(origin, "not a before/after result (no \"groups\")");
  const int runs = doc.value("runs", 1);
  std::vector<GroupTermsSample> out;
  for (const auto& g : doc["groups"]) {
    if (!g.is_object() || g.value("status", "") == "excluded") continue;
    auto ct = g.value("cost_terms", nlohmann::json());
    if (!ct.is_object()) continue;
    auto fused = terms_from_json(ct.value("fused", nlohmann::json()));
    if (!fused) continue;
    GroupTermsSample s;
    s.id = g.value("id", "");
    s.pattern = g.value("pattern", "");
    s.fused = *fused;
    bool ok = true;
    for (const auto& u : ct.value("unfused", nlohmann::json::array())) {
      auto t = terms_from_json(u);
      if (!t)
        ok = false;
      else
        s.unfused.push_back(*t);
    }
    if (!ct["fused"].contains("fused")) s.fused.fused = s.unfused.size() > 1;
    std::set<std::string> members;
    for (const auto& n : g.value("nodes", nlohmann::json::array()))
      if (n.is_string()) members.insert(n.get<std::string>());
    const auto before = covering_rows(doc, "before", members);
    const auto after = covering_rows(doc, "after", members);
    // The kernels that ran the group after, when codegen split it or left members apart.
    if (after.size() > 1) {
      for (const auto* k : after) {
        auto t = row_terms(*k);
        if (!t) {
          s.after_kernels.clear();
          break;
        }
        s.after_kernels.push_back(*t);
      }
    }
    s.predicted_us = num(g, "predicted_saved_us");
    s.measured_us = num(g, "measured_saved_us");
    if (double b = num(g, "bytes_saved"); std::isfinite(b)) s.bytes_saved = b;
    if (double l = num(g, "launches_saved"); std::isfinite(l)) s.launches_saved = l;
    if (stat == TimingStat::Min && std::isfinite(s.measured_us))
      s.measured_us = sum_of(before, "min_us") - sum_of(after, "min_us");
    if (!before.empty() && !after.empty() && before.front()->contains("q1_us")) {
      double var = 0;
      for (const auto* k : before) var += median_variance(*k, runs);
      for (const auto* k : after) var += median_variance(*k, runs);
      s.noise_us = std::sqrt(var);
    }
    if (ok && std::isfinite(s.predicted_us) && std::isfinite(s.measured_us))
      out.push_back(std::move(s));
  }
  return out;
}

std::vector<CalibrationSample> calibration_samples(const nlohmann::json& doc,
                                                   const std::string& origin) {
  if (!doc.is_object() || !doc.contains("before") || !doc.contains("groups") ||
      !doc["groups"].is_array())
    throw FileError(origin,
                    "not a before/after result (no \"before\"/\"groups\"; see "
                    "docs/before_after.md: fxc profile --plan PLAN --json)");
  std::vector<CalibrationSample> out;
  for (const auto& g : doc["groups"]) {
    if (!g.is_object() || g.value("status", "") == "excluded") continue;
    CalibrationSample s;
    s.id = g.value("id", "");
    s.bytes_saved = num(g, "bytes_saved");
    s.launches_saved = num(g, "launches_saved");
    s.predicted_us = num(g, "predicted_saved_us");
    s.measured_us = num(g, "measured_saved_us");
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
    const std::string key = docs[i].value("model", files[i]);
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) {
      keys.push_back(key);
      out.emplace_back();
      repeats.emplace_back();
      it = keys.end() - 1;
    }
    const auto k = static_cast<std::size_t>(it - keys.begin());
    out[k].files.push_back(files[i]);
    repeats[k].push_back(group_terms_samples(docs[i], files[i], stat));
  }
  for (std::size_t k = 0; k < out.size(); ++k) out[k].groups = merge_repeats(repeats[k]);
  return out;
}

}  // namespace fx
