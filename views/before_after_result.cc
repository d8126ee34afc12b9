#include "views/before_after_result.h"

#include <QFile>
#include <QFileInfo>

#include <nlohmann/json.hpp>

#include <map>

#include "profile/chrome_trace.h"
#include "util/error.h"

namespace fx::views {
namespace {

using nlohmann::json;

// The representative run of a trace, re-based to 0 (a trace we wrote holds one run).
Timeline one_run(const Timeline& t) {
  if (t.events.empty()) return t;
  return t.single_run(representative_run(t));
}

// Kernel rows of `fxc profile --json` laid end to end by median time, keeping bytes.
Timeline laid_from_rows(const json& run) {
  Timeline t;
  auto rows = run.find("kernels");
  if (rows == run.end() || !rows->is_array()) return t;
  double at = 0;
  for (const json& row : *rows) {
    if (!row.is_object()) continue;
    KernelEvent e;
    e.name = row.value("name", std::string());
    for (const char* key : {"nodes", "op_types"}) {
      auto it = row.find(key);
      if (it == row.end() || !it->is_array()) continue;
      for (const json& s : *it)
        if (s.is_string()) (key[0] == 'n' ? e.nodes : e.op_types).push_back(s.get<std::string>());
    }
    auto num = [&](const char* key) {
      auto it = row.find(key);
      return it != row.end() && it->is_number() ? it->get<double>() : 0.0;
    };
    e.start_us = at;
    e.duration_us = num("median_us");
    e.bytes_read = int64_t(num("bytes_read"));
    e.bytes_written = int64_t(num("bytes_written"));
    e.flops = int64_t(num("flops"));
    at += e.duration_us;
    t.events.push_back(std::move(e));
  }
  return t;
}

// One lane: the trace file, else the embedded trace, else the rows.
Timeline read_lane(const json& doc, const char* what, const QString& trace_file,
                   const std::string& origin, bool& laid, QStringList& warnings) {
  laid = false;
  if (!trace_file.isEmpty() && QFileInfo::exists(trace_file)) {
    try {
      Timeline t = one_run(read_trace(trace_file.toStdString()));
      if (!t.events.empty()) return t;
    } catch (const Error& e) {
      warnings << QString::fromUtf8(e.what());
    }
  }
  auto run = doc.find(what);
  if (run == doc.end() || !run->is_object()) return {};
  if (auto tr = run->find("trace"); tr != run->end() && !tr->is_null()) {
    try {
      Timeline t = one_run(parse_trace(*tr, origin + " (" + what + ".trace)"));
      if (!t.events.empty()) return t;
    } catch (const Error& e) {
      warnings << QString::fromUtf8(e.what());
    }
  }
  laid = true;
  return laid_from_rows(*run);
}

void assign_groups(Timeline& t, const std::map<std::string, int>& group_of) {
  for (KernelEvent& e : t.events) {
    e.group_id.reset();
    for (const std::string& n : e.nodes)
      if (auto it = group_of.find(n); it != group_of.end()) {
        e.group_id = it->second;
        break;
      }
  }
}

}  // namespace

QString BeforeAfterResult::group_label(int i) const {
  if (i < 0 || std::size_t(i) >= input.groups.size()) return {};
  const MeasuredGroup& g = input.groups[std::size_t(i)];
  QString s = QString::fromStdString(g.id);
  if (!g.pattern.empty()) s += QStringLiteral(" (") + QString::fromStdString(g.pattern) + u')';
  return s;
}

BeforeAfterResult read_before_after(const QByteArray& text, const QString& origin,
                                    const QString& trace_before, const QString& trace_after) {
  const std::string where = origin.toStdString();
  json doc;
  try {
    doc = json::parse(text.constBegin(), text.constEnd());
  } catch (const json::exception& e) {
    throw FileError(where, text.trimmed().isEmpty()
                               ? std::string("no output (expected a before/after JSON result)")
                               : std::string("not JSON: ") + e.what());
  }
  BeforeAfterResult r;
  r.input = read_profile_input(doc, where);
  if (!r.input.before_after)
    throw FileError(where, "a single-run profile, not a before/after result (no \"before\")");
  for (const std::string& w : r.input.warnings) r.warnings << QString::fromStdString(w);
  if (auto tol = doc.find("tolerance"); tol != doc.end() && tol->is_object()) {
    r.rtol = tol->value("rtol", double(NAN));
    r.atol = tol->value("atol", double(NAN));
    r.tolerance_mode = QString::fromStdString(tol->value("mode", std::string()));
  }
  for (auto [key, out] : {std::pair{"mismatch", &r.mismatch}, {"codegen_note", &r.codegen_note}})
    if (auto it = doc.find(key); it != doc.end() && it->is_string())
      *out = QString::fromStdString(it->get<std::string>());
  r.before = read_lane(doc, "before", trace_before, where, r.before_laid_end_to_end, r.warnings);
  r.after = read_lane(doc, "after", trace_after, where, r.after_laid_end_to_end, r.warnings);
  std::map<std::string, int> group_of;
  for (std::size_t i = 0; i < r.input.groups.size(); ++i) {
    const MeasuredGroup& g = r.input.groups[i];
    if (g.status == "excluded") continue;
    for (const std::string& n : g.nodes) group_of.emplace(n, int(i));
  }
  assign_groups(r.before, group_of);
  assign_groups(r.after, group_of);
  return r;
}

BeforeAfterResult read_before_after_file(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    throw FileError(path.toStdString(), "cannot open: " + f.errorString().toStdString());
  return read_before_after(f.readAll(), path);
}

}  // namespace fx::views
