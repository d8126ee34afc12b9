// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text helpers shared by the report writers: escaping for HTML/SVG and Markdown,
// number formatting with units, and shell quoting for the "commands to reproduce".

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_result.h"

namespace fx {

// Escapes & < > " ' so the text is safe in element content and in quoted attributes.
std::string escape_xml(std::string_view s);
// A Markdown table cell: escapes | and backslashes, turns HTML-significant characters
// into entities (Markdown passes raw HTML through), folds newlines into spaces.
std::string escape_markdown_cell(std::string_view s);
// Quotes an argument for a POSIX shell when it holds anything but [A-Za-z0-9_./=,:+-].
std::string shell_quote(std::string_view s);
std::string shell_join(const std::vector<std::string>& args);

// "1.5 KiB", "3.2 MiB"; negative values keep their sign.
std::string human_bytes(double bytes);
// Microseconds as "12.3 us", "4.56 ms", "1.20 s".
std::string human_us(double us);
// A group's estimated time saved with its interval: "12.3 us ± 4.1 us", "+ (uncertain)"
// when the interval includes zero, "unknown" without static shapes.
std::string estimate_text(const GroupEstimate& e);
// Fixed notation with at most `digits` decimals, trailing zeros removed ("1.5", "20").
std::string format_number(double v, int digits = 3);

}  // namespace fx
