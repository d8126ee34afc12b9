// SPDX-License-Identifier: Apache-2.0
#include "profile/autotune_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "device/device_presets.h"
#include "util/build_id.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/version.h"

namespace fx {
namespace {

constexpr const char* kSchema = "fusion-explorer-autotune";

// A CPU model as a file name: letters, digits, '.', '-' and '_' kept, runs of anything
// else one '_' ("AMD EPYC 9R14 96-Core Processor" -> "AMD_EPYC_9R14_96-Core_Processor").
std::string file_name_of(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    if (keep)
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "unknown-cpu" : out;
}

// FNV-1a, 64 bits: stable across runs and builds (std::hash is not promised to be).
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

bool AutotuneCache::enabled() {
  const char* v = std::getenv("FX_AUTOTUNE_CACHE");
  if (!v) return true;
  const std::string s = v;
  return s != "off" && s != "0";
}

std::string AutotuneCache::default_path(const std::string& cpu_model) {
  return device_cache_dir() + "/autotune/" + file_name_of(cpu_model) + "-fxc-" +
         file_name_of(kVersion) + "-" + build_id() + ".json";
}

AutotuneCache AutotuneCache::open(const std::string& path) {
  AutotuneCache c;
  c.path_ = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return c;
  c.entries_ = load_json_file(path, "autotune cache", [](const nlohmann::json& doc) {
    if (!doc.is_object() || doc.value("schema", "") != kSchema)
      throw Error(std::string("not an autotune cache (no \"schema\": \"") + kSchema + "\")");
    std::map<std::string, AutotuneEntry> entries;
    for (const auto& [key, e] : doc.at("groups").items()) {
      AutotuneEntry a;
      a.unfused_us = e.at("unfused_us").get<double>();
      a.fused_us = e.at("fused_us").get<double>();
      a.measurements = e.value("measurements", 1);
      if (e.contains("noise_us") && e["noise_us"].is_number())
        a.noise_us = e["noise_us"].get<double>();
      a.noise_measurements = e.value("noise_measurements", std::isnan(a.noise_us) ? 0 : 1);
      // Files written before the spread was kept: its differences' spread is unknown
      // (NaN, and stays so), not zero.
      a.diff_m2 =
          e.contains("diff_m2") && e["diff_m2"].is_number() ? e["diff_m2"].get<double>() : NAN;
      a.pattern = e.value("pattern", "");
      a.model = e.value("model", "");
      entries[key] = a;
    }
    return entries;
  });
  return c;
}

const AutotuneEntry* AutotuneCache::find(const std::string& signature) const {
  auto it = entries_.find(signature);
  return it == entries_.end() ? nullptr : &it->second;
}

double AutotuneEntry::margin_us() const {
  double m = noise_us;
  if (measurements >= 2 && !std::isnan(diff_m2)) {
    const double sd = std::sqrt(diff_m2 / (measurements - 1));
    m = std::isnan(m) ? sd : std::max(m, sd);
  }
  return m;
}

bool AutotuneEntry::fused_slower() const {
  const double m = margin_us();
  return !std::isnan(m) && fused_us - unfused_us > m;
}

void AutotuneCache::record(const std::string& signature, double unfused_us, double fused_us,
                           double noise_us, const std::string& pattern, const std::string& model) {
  AutotuneEntry& e = entries_[signature];
  const double n = e.measurements;
  // Welford's update of the differences' mean and squared deviations.
  const double old_diff = e.fused_us - e.unfused_us, diff = fused_us - unfused_us;
  e.unfused_us = (e.unfused_us * n + unfused_us) / (n + 1);
  e.fused_us = (e.fused_us * n + fused_us) / (n + 1);
  if (n > 0) e.diff_m2 += (diff - old_diff) * (diff - (e.fused_us - e.unfused_us));
  if (!std::isnan(noise_us)) {
    const double k = e.noise_measurements;
    e.noise_us = k == 0 ? noise_us : (e.noise_us * k + noise_us) / (k + 1);
    e.noise_measurements += 1;
  }
  e.measurements += 1;
  e.pattern = pattern;
  e.model = model;
}

void AutotuneCache::save() const {
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [key, e] : entries_) {
    groups[key] = {{"unfused_us", e.unfused_us},
                   {"fused_us", e.fused_us},
                   {"measurements", e.measurements},
                   {"pattern", e.pattern},
                   {"model", e.model}};
    if (!std::isnan(e.diff_m2)) groups[key]["diff_m2"] = e.diff_m2;
    if (!std::isnan(e.noise_us)) {
      groups[key]["noise_us"] = e.noise_us;
      groups[key]["noise_measurements"] = e.noise_measurements;
    }
  }
  const nlohmann::json doc = {
      {"schema", kSchema}, {"fxc_version", kVersion}, {"build_id", build_id()}, {"groups", groups}};
  std::error_code ec;
  const std::filesystem::path p(path_);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  // Written beside and renamed, so that a reader never sees half a file.
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) throw FileError(path_, "cannot write the autotune cache");
    f << doc.dump(1) << "\n";
    if (!f) throw FileError(path_, "cannot write the autotune cache");
  }
  std::filesystem::rename(tmp, path_, ec);
  if (ec) throw FileError(path_, "cannot write the autotune cache: " + ec.message());
}

namespace {

// Over the kernels that run any of `members`: the sum of (q3 - median) when `upper`,
// else of (median - q1); NaN when one lacks quartiles or none touches them.
double half_widths(const std::vector<KernelRow>& kernels, const std::set<std::string>& members,
                   bool upper) {
  double sum = 0;
  bool any = false;
  for (const KernelRow& k : kernels) {
    const bool touches = std::any_of(k.nodes.begin(), k.nodes.end(),
                                     [&](const std::string& n) { return members.count(n) > 0; });
    if (!touches) continue;
    if (!k.has_quartiles() || std::isnan(k.median_us)) return NAN;
    sum += std::max(0.0, upper ? k.q3_us - k.median_us : k.median_us - k.q1_us);
    any = true;
  }
  return any ? sum : NAN;
}

}  // namespace

double measured_noise_us(const BeforeAfterDocument& d, const std::vector<std::string>& nodes) {
  const std::set<std::string> members(nodes.begin(), nodes.end());
  return half_widths(d.before.kernels, members, /*upper=*/true) +
         half_widths(d.after.kernels, members, /*upper=*/false);
}

std::string group_signature(const Graph& g, const FusionGroup& group, int threads) {
  std::vector<NodeId> ids = group.node_ids;
  if (ids.size() != group.nodes.size()) {
    ids.clear();
    for (const std::string& name : group.nodes) ids.push_back(g.find_node(name));
  }
  // Values a member writes, by (member, output) position; anything else is described.
  std::map<ValueId, std::string> inside;
  std::string text = fmt::format("threads {}\n", threads);
  for (std::size_t m = 0; m < ids.size(); ++m) {
    if (ids[m] == kNoNode) return group.pattern + ":unbound";
    const Node& n = g.node(ids[m]);
    text += n.qualified_op();
    for (const auto& [name, value] : n.attrs.all())
      text += " " + name + "=" + attribute_to_string(value);
    text += "\n in";
    for (ValueId v : n.inputs) {
      if (v == kNoValue) {
        text += " -";
        continue;
      }
      if (auto it = inside.find(v); it != inside.end()) {
        text += " " + it->second;
        continue;
      }
      const Value& val = g.value(v);
      text += fmt::format(" {}{}{}", dtype_name(val.dtype), val.shape.str(),
                          val.is_constant() ? "c" : "");
    }
    text += "\n out";
    for (std::size_t o = 0; o < n.outputs.size(); ++o) {
      const ValueId v = n.outputs[o];
      if (v == kNoValue) continue;
      inside[v] = fmt::format("m{}.{}", m, o);
      const Value& val = g.value(v);
      text += fmt::format(" {}{}", dtype_name(val.dtype), val.shape.str());
    }
    text += "\n";
  }
  return fmt::format("{}:{:016x}", group.pattern, fnv1a(text));
}

AutotuneVerdict reject_autotuned_slower(FusionPlan& plan, const Graph& g, int threads,
                                        const AutotuneCache& cache) {
  AutotuneVerdict v;
  std::vector<std::pair<std::string, std::string>> slower;  // id, reason
  for (const FusionGroup& group : plan.groups()) {
    if (group.status != GroupStatus::Accepted) continue;
    const AutotuneEntry* e = cache.find(group_signature(g, group, threads));
    if (!e) continue;
    ++v.consulted;
    if (!e->fused_slower()) continue;
    slower.emplace_back(
        group.id,
        fmt::format("measured slower on this CPU (autotune cache): fused {:.1f} "
                    "\u00b5s, apart {:.1f} \u00b5s, beyond its noise of {:.1f} \u00b5s ({} "
                    "measurement{})",
                    e->fused_us, e->unfused_us, e->margin_us(), e->measurements,
                    e->measurements == 1 ? "" : "s"));
  }
  for (const auto& [id, reason] : slower)
    if (plan.reject(id, reason)) ++v.rejected;
  return v;
}

}  // namespace fx
