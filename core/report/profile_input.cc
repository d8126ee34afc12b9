#include "report/profile_input.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "profile/chrome_trace.h"
#include "util/error.h"

namespace fx {
namespace {

using nlohmann::json;

double number(const json& obj, const char* key, double fallback = NAN) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string str(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  return it->is_null() ? std::string() : it->dump();
}

std::vector<std::string> strings(const json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it != obj.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// The kernels of the median run from the trace; the profiler exports the representative
// run only, but an imported trace may hold several, so keep the first.
bool timeline_from_trace(const json& trace, const std::string& origin, RunProfile& run,
                         std::vector<std::string>& warnings) {
  try {
    Timeline t = parse_trace(trace, origin);
    if (t.events.empty()) return false;
    Timeline one = t.single_run(0);
    for (const auto& e : one.events)
      run.timeline.push_back({e.name, e.nodes, e.start_us, e.duration_us});
    return true;
  } catch (const Error& e) {
    warnings.push_back(std::string("trace unreadable, kernels laid end to end instead: ") +
                       e.what());
    return false;
  }
}

RunProfile read_run(const json& j, const std::string& origin, const std::string& what,
                    std::vector<std::string>& warnings) {
  RunProfile run;
  if (!j.is_object()) {
    warnings.push_back(what + " is not an object");
    return run;
  }
  run.median_ms = number(j, "median_ms");
  run.min_ms = number(j, "min_ms");
  run.max_ms = number(j, "max_ms");
  if (std::isnan(run.median_ms)) warnings.push_back(what + ".median_ms missing");
  std::vector<KernelBox> laid;
  double t = 0;
  if (auto k = j.find("kernels"); k != j.end() && k->is_array()) {
    for (const auto& row : *k) {
      if (!row.is_object()) continue;
      double us = number(row, "median_us", 0);
      ++run.kernel_count;
      run.kernel_sum_us += us;
      laid.push_back({str(row, "name"), strings(row, "nodes"), t, us});
      t += us;
    }
  } else {
    warnings.push_back(what + ".kernels missing");
  }
  if (auto tr = j.find("trace"); tr != j.end() && !tr->is_null())
    run.timeline_from_trace =
        timeline_from_trace(*tr, origin + " (" + what + ".trace)", run, warnings);
  if (!run.timeline_from_trace) run.timeline = std::move(laid);
  return run;
}

}  // namespace

ProfileInput read_profile_input(const nlohmann::json& doc, const std::string& origin) {
  if (!doc.is_object()) throw FileError(origin, "a profile result must be a JSON object");
  ProfileInput p;
  p.origin = origin;
  p.before_after = doc.contains("before");
  if (!p.before_after && !doc.contains("kernels"))
    throw FileError(origin,
                    "neither a before/after result (\"before\") nor a profile (\"kernels\")");
  if (p.before_after) {
    std::string schema = str(doc, "schema");
    if (!schema.empty() && schema != "fusion-explorer/before-after")
      p.warnings.push_back("unexpected schema \"" + schema + "\"");
    int version = int(number(doc, "schema_version", 1));
    if (version != 1)
      p.warnings.push_back("schema_version " + std::to_string(version) +
                           " is newer than this report understands (1); read what matches");
  }
  p.model = str(doc, "model");
  p.plan = str(doc, "plan");
  p.device = str(doc, "device");
  p.estimate_profile = str(doc, "estimate_profile");
  p.opt_level = int(number(doc, "opt_level", -1));
  p.runs = int(number(doc, "runs", 0));
  p.warmup = int(number(doc, "warmup", 0));
  p.threads = int(number(doc, "threads", 0));
  p.seed = int64_t(number(doc, "seed", -1));
  if (!p.before_after) {
    p.before = read_run(doc, origin, "profile", p.warnings);
    return p;
  }
  p.before = read_run(doc["before"], origin, "before", p.warnings);
  if (doc.contains("after"))
    p.after = read_run(doc["after"], origin, "after", p.warnings);
  else
    p.warnings.push_back("\"after\" missing");
  p.speedup = number(doc, "speedup");
  if (std::isnan(p.speedup) && p.after.median_ms > 0)
    p.speedup = p.before.median_ms / p.after.median_ms;
  p.max_abs_error = number(doc, "max_abs_error");
  p.max_rel_error = number(doc, "max_rel_error");
  if (auto m = doc.find("outputs_match"); m != doc.end() && m->is_boolean())
    p.outputs_match = m->get<bool>();
  if (auto g = doc.find("groups"); g != doc.end() && g->is_array()) {
    for (const auto& j : *g) {
      if (!j.is_object()) continue;
      MeasuredGroup mg;
      mg.id = str(j, "id");
      mg.pattern = str(j, "pattern");
      mg.status = str(j, "status");
      mg.backend = str(j, "backend");
      mg.reason = str(j, "reason");
      mg.nodes = strings(j, "nodes");
      mg.predicted_saved_us = number(j, "predicted_saved_us");
      mg.measured_saved_us = number(j, "measured_saved_us");
      mg.max_abs_error = number(j, "max_abs_error");
      mg.bytes_saved = number(j, "bytes_saved");
      mg.launches_saved = number(j, "launches_saved");
      p.groups.push_back(std::move(mg));
    }
  } else {
    p.warnings.push_back("\"groups\" missing: no per-group measurements");
  }
  return p;
}

}  // namespace fx
