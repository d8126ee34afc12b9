// SPDX-License-Identifier: Apache-2.0
#include "profile/before_after_document.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "device/kernel_class.h"
#include "profile/chrome_trace.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fx {
namespace {

using nlohmann::json;

double number(const json& obj, const char* key, double fallback = NAN) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

// A field shown as text: a string as is, null as "", anything else as its JSON.
std::string text(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// A field that only means something as a string ("" otherwise).
std::string string_only(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool boolean(const json& obj, const char* key, bool fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::vector<std::string> strings(const json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it != obj.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// A term added after the first results: 0 when absent or not finite.
double later_term(const json& obj, const char* key) {
  double v = number(obj, key, 0.0);
  return std::isfinite(v) ? v : 0.0;
}

KernelRow read_kernel_row(const json& j) {
  KernelRow k;
  k.name = text(j, "name");
  k.op_types = strings(j, "op_types");
  k.nodes = strings(j, "nodes");
  if (auto g = j.find("group_id"); g != j.end() && g->is_number_integer())
    k.group_id = g->get<int>();
  k.calls = int(number(j, "calls", 1));
  k.median_us = number(j, "median_us");
  k.min_us = number(j, "min_us");
  k.max_us = number(j, "max_us");
  k.q1_us = number(j, "q1_us");
  k.q3_us = number(j, "q3_us");
  k.share = number(j, "share");
  k.bytes_read = int64_t(number(j, "bytes_read", 0));
  k.bytes_written = int64_t(number(j, "bytes_written", 0));
  k.flops = int64_t(number(j, "flops", 0));
  if (auto c = j.find("cost"); c != j.end()) {
    k.cost = kernel_terms_from_json(*c);
    // Results written before "fused" was: a row of several nodes is a fused kernel.
    if (k.cost && !c->contains("fused")) k.cost->fused = k.nodes.size() > 1;
  }
  return k;
}

RunDocument read_run(const json& j, const std::string& origin, const std::string& what,
                     std::vector<std::string>& warnings) {
  RunDocument run;
  if (!j.is_object()) {
    warnings.push_back(what + " is not an object");
    return run;
  }
  run.present = true;
  run.median_ms = number(j, "median_ms");
  run.min_ms = number(j, "min_ms");
  run.max_ms = number(j, "max_ms");
  if (std::isnan(run.median_ms)) warnings.push_back(what + ".median_ms missing");
  if (auto k = j.find("kernels"); k != j.end() && k->is_array()) {
    run.has_kernels = true;
    for (const auto& row : *k)
      if (row.is_object()) run.kernels.push_back(read_kernel_row(row));
  } else {
    warnings.push_back(what + ".kernels missing");
  }
  if (auto tr = j.find("trace"); tr != j.end() && !tr->is_null()) {
    try {
      Timeline t = parse_trace(*tr, origin + " (" + what + ".trace)");
      if (!t.events.empty()) run.trace = std::move(t);
    } catch (const std::exception& e) {  // fx::Error, or a json type error inside
      warnings.push_back(std::string("trace unreadable, kernels laid end to end instead: ") +
                         e.what());
    }
  }
  return run;
}

std::optional<GroupCostTerms> read_group_terms(const json& j) {
  if (!j.is_object()) return std::nullopt;
  auto f = j.find("fused");
  if (f == j.end()) return std::nullopt;
  auto fused = kernel_terms_from_json(*f);
  if (!fused) return std::nullopt;
  GroupCostTerms g;
  g.fused = *fused;
  int read = 0;
  if (auto u = j.find("unfused"); u != j.end() && u->is_array())
    for (const auto& row : *u) {
      auto t = kernel_terms_from_json(row);
      read += t.has_value();
      g.unfused.emplace_back(row.is_object() ? text(row, "node") : std::string(), t);
    }
  // Results written before "fused" was: the group as one kernel of several.
  if (!f->contains("fused")) g.fused.fused = read > 1;
  return g;
}

BeforeAfterGroup read_group(const json& j) {
  BeforeAfterGroup g;
  g.id = text(j, "id");
  g.pattern = text(j, "pattern");
  g.status = text(j, "status");
  g.backend = text(j, "backend");
  g.reason = text(j, "reason");
  g.nodes = strings(j, "nodes");
  g.estimate_profile = text(j, "estimate_profile");
  g.predicted_by = text(j, "predicted_by");
  g.predicted_saved_us = number(j, "predicted_saved_us");
  g.predicted_low_us = number(j, "predicted_low_us");
  g.predicted_high_us = number(j, "predicted_high_us");
  g.measured_saved_us = number(j, "measured_saved_us");
  g.max_abs_error = number(j, "max_abs_error");
  g.max_rel_error = number(j, "max_rel_error");
  g.bytes_saved = number(j, "bytes_saved");
  g.launches_saved = number(j, "launches_saved");
  g.before_us = number(j, "before_us");
  g.after_us = number(j, "after_us");
  if (auto c = j.find("cost_terms"); c != j.end()) g.cost_terms = read_group_terms(*c);
  return g;
}

void read_header(const json& doc, BeforeAfterDocument& d) {
  if (d.before_after) {
    d.schema = text(doc, "schema");
    if (!d.schema.empty() && d.schema != "fusion-explorer/before-after")
      d.warnings.push_back("unexpected schema \"" + d.schema + "\"");
    d.schema_version = int(number(doc, "schema_version", 1));
    if (d.schema_version != 1)
      d.warnings.push_back("schema_version " + std::to_string(d.schema_version) +
                           " is newer than this report understands (1); read what matches");
  }
  d.model = text(doc, "model");
  d.plan = text(doc, "plan");
  d.device = text(doc, "device");
  d.estimate_profile = text(doc, "estimate_profile");
  d.opt_level = int(number(doc, "opt_level", -1));
  d.runs = int(number(doc, "runs", 0));
  d.warmup = int(number(doc, "warmup", 0));
  d.threads = int(number(doc, "threads", 0));
  d.seed = int64_t(number(doc, "seed", -1));
}

}  // namespace

double RunDocument::kernel_sum_us() const {
  double us = 0;
  for (const auto& k : kernels) us += std::isnan(k.median_us) ? 0.0 : k.median_us;
  return us;
}

Timeline RunDocument::laid_end_to_end() const {
  Timeline t;
  double at = 0;
  for (const KernelRow& k : kernels) {
    KernelEvent e;
    e.name = k.name;
    e.op_types = k.op_types;
    e.nodes = k.nodes;
    e.start_us = at;
    e.duration_us = std::isnan(k.median_us) ? 0.0 : k.median_us;
    e.bytes_read = k.bytes_read;
    e.bytes_written = k.bytes_written;
    e.flops = k.flops;
    at += e.duration_us;
    t.events.push_back(std::move(e));
  }
  return t;
}

bool GroupCostTerms::complete() const {
  return std::all_of(unfused.begin(), unfused.end(),
                     [](const auto& u) { return u.second.has_value(); });
}

const RunDocument* BeforeAfterDocument::run(std::string_view side) const {
  return side == "before" ? &before : side == "after" ? &after : nullptr;
}

std::optional<KernelTerms> kernel_terms_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  auto c = kernel_class_from_name(string_only(j, "class"));
  const double b = number(j, "bytes"), f = number(j, "flops");
  if (!c || !std::isfinite(b) || !std::isfinite(f)) return std::nullopt;
  KernelTerms t;
  t.kernel_class = *c;
  t.bytes = b;
  t.flops = f;
  t.launches = int(number(j, "launches", 1));
  t.epilogue_bytes = later_term(j, "epilogue_bytes");
  t.fused = boolean(j, "fused", false);
  t.relayout_bytes = std::clamp(later_term(j, "relayout_bytes"), 0.0, b);
  t.constant_bytes = std::clamp(later_term(j, "constant_bytes"), 0.0, b);
  t.planes = std::max(later_term(j, "planes"), 0.0);
  t.winograd = boolean(j, "winograd", false);
  // Results written before the pooling class filed pooling under depthwise; of the two,
  // only the convolution has weights (constant_bytes, written by the same fxc).
  if (t.kernel_class == KernelClass::Depthwise && j.contains("constant_bytes") &&
      t.constant_bytes == 0)
    t.kernel_class = KernelClass::Pooling;
  return t;
}

BeforeAfterDocument read_before_after_document(const nlohmann::json& doc,
                                               const std::string& origin) {
  if (!doc.is_object()) throw FileError(origin, "a profile result must be a JSON object");
  BeforeAfterDocument d;
  d.origin = origin;
  d.before_after = doc.contains("before");
  if (!d.before_after && !doc.contains("kernels"))
    throw FileError(origin,
                    "neither a before/after result (\"before\") nor a profile (\"kernels\")");
  read_header(doc, d);
  if (!d.before_after) {
    d.before = read_run(doc, origin, "profile", d.warnings);
    return d;
  }
  d.before = read_run(doc["before"], origin, "before", d.warnings);
  if (doc.contains("after"))
    d.after = read_run(doc["after"], origin, "after", d.warnings);
  else
    d.warnings.push_back("\"after\" missing");
  d.speedup = number(doc, "speedup");
  d.max_abs_error = number(doc, "max_abs_error");
  d.max_rel_error = number(doc, "max_rel_error");
  if (auto m = doc.find("outputs_match"); m != doc.end() && m->is_boolean())
    d.outputs_match = m->get<bool>();
  d.mismatch = string_only(doc, "mismatch");
  d.codegen_note = string_only(doc, "codegen_note");
  if (auto tol = doc.find("tolerance"); tol != doc.end() && tol->is_object()) {
    d.rtol = number(*tol, "rtol");
    d.atol = number(*tol, "atol");
    d.steps = number(*tol, "steps");
    d.tolerance_mode = string_only(*tol, "mode");
  }
  if (auto g = doc.find("groups"); g != doc.end() && g->is_array()) {
    d.has_groups = true;
    for (const auto& j : *g)
      if (j.is_object()) d.groups.push_back(read_group(j));
  } else {
    d.warnings.push_back("\"groups\" missing: no per-group measurements");
  }
  return d;
}

BeforeAfterDocument parse_before_after_document(std::string_view text, const std::string& origin) {
  return read_before_after_document(parse_json(text, origin), origin);
}

BeforeAfterDocument load_before_after_document(const std::string& path) {
  return read_before_after_document(read_json_file(path, "result"), path);
}

}  // namespace fx
