// SPDX-License-Identifier: Apache-2.0
#include "profile/autotune_cache.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "device/device_presets.h"
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
         file_name_of(kVersion) + ".json";
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

void AutotuneCache::record(const std::string& signature, double unfused_us, double fused_us,
                           const std::string& pattern, const std::string& model) {
  AutotuneEntry& e = entries_[signature];
  const double n = e.measurements;
  e.unfused_us = (e.unfused_us * n + unfused_us) / (n + 1);
  e.fused_us = (e.fused_us * n + fused_us) / (n + 1);
  e.measurements += 1;
  e.pattern = pattern;
  e.model = model;
}

void AutotuneCache::save() const {
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [key, e] : entries_)
    groups[key] = {{"unfused_us", e.unfused_us},
                   {"fused_us", e.fused_us},
                   {"measurements", e.measurements},
                   {"pattern", e.pattern},
                   {"model", e.model}};
  const nlohmann::json doc = {{"schema", kSchema}, {"fxc_version", kVersion}, {"groups", groups}};
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
                    "\u00b5s, apart {:.1f} \u00b5s ({} measurement{})",
                    e->fused_us, e->unfused_us, e->measurements, e->measurements == 1 ? "" : "s"));
  }
  for (const auto& [id, reason] : slower)
    if (plan.reject(id, reason)) ++v.rejected;
  return v;
}

}  // namespace fx
