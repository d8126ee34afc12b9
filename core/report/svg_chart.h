// SPDX-License-Identifier: Apache-2.0
#pragma once
// Inline SVG charts for the reports, written as text (no toolkit, no scripts, no
// external fonts), so that the HTML stays self-contained and opens anywhere.
//
//   grouped bar chart   categories x series (estimated vs measured savings per group);
//                       bars grow from the zero line, so negative values point down
//   scatter             points with an optional y = x line (predicted vs measured)
//   timeline strip      lanes of rectangles over one shared time axis (before/after)
//
// Every mark carries class and data-* attributes (data-value, data-series, ...) and a
// <title> tooltip; the tests read them back. All text is escaped.

#include <string>
#include <vector>

namespace fx {

// Maps [d0, d1] onto [r0, r1]; a degenerate domain maps everything to the middle.
struct LinearScale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  double operator()(double v) const;
};

// About `count` round tick values ({1, 2, 5} x 10^k steps) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int count = 5);

struct BarSeries {
  std::string name;
  std::string color;           // CSS colour
  std::vector<double> values;  // one per category; NaN = no bar (not measured)
};

struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
  double width = 760, height = 360;
};

struct ScatterPoint {
  double x = 0, y = 0;
  std::string label;
};

struct ScatterChart {
  std::string title;
  std::string x_label, y_label;
  std::vector<ScatterPoint> points;
  bool diagonal = true;  // draw y = x over the common range
  std::string note;      // printed under the title (e.g. the rank correlation)
  double width = 420, height = 380;
};

struct StripBox {
  double start = 0, duration = 0;
  std::string label;  // tooltip
  std::string color;
};

struct StripLane {
  std::string name;
  std::vector<StripBox> boxes;
};

struct LegendEntry {
  std::string label;
  std::string color;
};

struct TimelineStrip {
  std::string title;
  std::string unit = "us";  // of start/duration, for the axis label
  std::vector<StripLane> lanes;
  std::vector<LegendEntry> legend;
  double width = 1100, lane_height = 34;
};

std::string render_bar_chart(const BarChart& c);
std::string render_scatter(const ScatterChart& c);
std::string render_timeline_strip(const TimelineStrip& t);

// A qualitative palette (colour-blind friendly first entries), cycled by index.
const std::string& palette_color(std::size_t index);

}  // namespace fx
