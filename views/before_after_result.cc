// SPDX-License-Identifier: Apache-2.0
#include "views/before_after_result.h"

#include <QFile>
#include <QFileInfo>

#include <map>
#include <string_view>

#include "profile/chrome_trace.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fx::views {
namespace {

// The representative run of a trace, re-based to 0 (a trace we wrote holds one run).
Timeline one_run(const Timeline& t) {
  if (t.events.empty()) return t;
  return t.single_run(representative_run(t));
}

// One lane: the trace file, else the embedded trace, else the rows laid end to end.
Timeline read_lane(const RunDocument& run, const QString& trace_file, bool& laid,
                   QStringList& warnings) {
  laid = false;
  if (!trace_file.isEmpty() && QFileInfo::exists(trace_file)) {
    try {
      Timeline t = one_run(read_trace(trace_file.toStdString()));
      if (!t.events.empty()) return t;
    } catch (const Error& e) {
      warnings << QString::fromUtf8(e.what());
    }
  }
  if (!run.present) return {};
  if (run.trace) {
    Timeline t = one_run(*run.trace);
    if (!t.events.empty()) return t;
  }
  laid = true;
  return run.laid_end_to_end();
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
  std::string why;
  const auto json =
      try_parse_json(std::string_view(text.constData(), std::size_t(text.size())), &why);
  if (!json)
    throw FileError(where, text.trimmed().isEmpty()
                               ? std::string("no output (expected a before/after JSON result)")
                               : "not JSON: " + why);
  const BeforeAfterDocument doc = read_before_after_document(*json, where);
  if (!doc.before_after)
    throw FileError(where, "a single-run profile, not a before/after result (no \"before\")");
  BeforeAfterResult r;
  r.input = profile_input_of(doc);
  for (const std::string& w : doc.warnings) r.warnings << QString::fromStdString(w);
  r.rtol = doc.rtol;
  r.atol = doc.atol;
  r.tolerance_mode = QString::fromStdString(doc.tolerance_mode);
  r.mismatch = QString::fromStdString(doc.mismatch);
  r.codegen_note = QString::fromStdString(doc.codegen_note);
  r.before = read_lane(doc.before, trace_before, r.before_laid_end_to_end, r.warnings);
  r.after = read_lane(doc.after, trace_after, r.after_laid_end_to_end, r.warnings);
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
