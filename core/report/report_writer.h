// SPDX-License-Identifier: Apache-2.0
#pragma once
// Renders a ReportData as HTML (self-contained, inline SVG charts), Markdown (the same
// content as tables) or JSON (schema "fusion-explorer/report", docs/report-schema.md),
// and writes it to a file. The CLI (`fxc report`) and the GUI's "Export report" call this.

#include <optional>
#include <string>
#include <string_view>

#include "report/report_data.h"

namespace fx {

enum class ReportFormat { Html, Markdown, Json };

// "html", "md"/"markdown", "json"; nullopt otherwise.
std::optional<ReportFormat> report_format_from_name(std::string_view name);
// From the file extension (.html/.htm, .md/.markdown, .json); throws fx::Error naming the
// path when the extension is none of them.
ReportFormat report_format_from_path(const std::string& path);

std::string render_report(const ReportData& d, ReportFormat format);
// Throws fx::FileError when the file cannot be written.
void write_report(const ReportData& d, ReportFormat format, const std::string& path);

// The individual writers (html_report.cc, markdown_report.cc, json_report.cc).
std::string render_html_report(const ReportData& d);
std::string render_markdown_report(const ReportData& d);
std::string render_json_report(const ReportData& d);  // pretty-printed, 2 spaces

}  // namespace fx
