// SPDX-License-Identifier: Apache-2.0
#pragma once
// The HTML report as PDF through Qt's own writer (QPdfWriter + QTextDocument): the
// inline SVG charts, which QTextDocument cannot draw, are rendered to images first.
// Safe to call from a worker thread. Throws fx::FileError naming the file.

#include <QString>

namespace fx::views {

void write_report_pdf(const QString& html, const QString& path);

}  // namespace fx::views
