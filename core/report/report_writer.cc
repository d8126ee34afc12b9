// SPDX-License-Identifier: Apache-2.0
#include "report/report_writer.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "util/error.h"

namespace fx {

std::optional<ReportFormat> report_format_from_name(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "html" || n == "htm") return ReportFormat::Html;
  if (n == "md" || n == "markdown") return ReportFormat::Markdown;
  if (n == "json") return ReportFormat::Json;
  return std::nullopt;
}

ReportFormat report_format_from_path(const std::string& path) {
  auto dot = path.rfind('.');
  auto slash = path.rfind('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
    if (auto f = report_format_from_name(path.substr(dot + 1))) return *f;
  throw Error(path +
              ": cannot tell the report format from the extension (use .html, .md or "
              ".json, or --format)");
}

std::string render_report(const ReportData& d, ReportFormat format) {
  switch (format) {
    case ReportFormat::Html: return render_html_report(d);
    case ReportFormat::Markdown: return render_markdown_report(d);
    case ReportFormat::Json: return render_json_report(d);
  }
  return {};
}

void write_report(const ReportData& d, ReportFormat format, const std::string& path) {
  std::string text = render_report(d, format);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw FileError(path, "cannot open for writing");
  out.write(text.data(), std::streamsize(text.size()));
  if (!out.flush()) throw FileError(path, "write failed");
}

}  // namespace fx
