// SPDX-License-Identifier: Apache-2.0
#include "report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/report_text.h"

namespace fx {
namespace {

constexpr const char* kFont = "font-family=\"sans-serif\"";
constexpr const char* kAxisColor = "#555";

std::string num(double v) {
  return format_number(v, 2);
}

std::string svg_open(double w, double h, const std::string& cls, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"{}\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\" {} font-size=\"12\">\n",
      cls, num(w), num(h), num(w), num(h), escape_xml(title), kFont);
}

std::string text(double x, double y, const std::string& s, const std::string& extra = {}) {
  return fmt::format("<text x=\"{}\" y=\"{}\"{}>{}</text>\n", num(x), num(y),
                     extra.empty() ? "" : " " + extra, escape_xml(s));
}

std::string line(double x1, double y1, double x2, double y2, const std::string& extra) {
  return fmt::format("<line {} x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", extra, num(x1),
                     num(y1), num(x2), num(y2));
}

// Range of the values, always containing 0, padded to round ticks.
std::pair<double, double> value_domain(const std::vector<double>& values, bool include_zero) {
  double lo = include_zero ? 0 : INFINITY, hi = include_zero ? 0 : -INFINITY;
  for (double v : values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo <= 0) hi = lo + 1;
  auto ticks = nice_ticks(lo, hi);
  return {std::min(lo, ticks.front()), std::max(hi, ticks.back())};
}

std::string y_axis(const LinearScale& y, double x0, double x1, const std::string& cls) {
  std::string out;
  for (double t : nice_ticks(y.d0, y.d1)) {
    if (t < y.d0 - 1e-9 || t > y.d1 + 1e-9) continue;
    out += line(x0, y(t), x1, y(t), fmt::format("class=\"{}\" stroke=\"#e3e3e3\"", cls));
    out += text(x0 - 6, y(t) + 4, format_number(t, 3), "text-anchor=\"end\" fill=\"#333\"");
  }
  return out;
}

// Swatch + label entries, wrapped at max_x; `rows` receives the number of lines used.
std::string legend(const std::vector<LegendEntry>& entries, double x, double y, double max_x,
                   int* rows = nullptr) {
  std::string out;
  double cx = x;
  if (rows) *rows = entries.empty() ? 0 : 1;
  for (const auto& e : entries) {
    double w = 24 + 7.0 * double(e.label.size());
    if (cx + w > max_x && cx > x) {
      cx = x, y += 18;
      if (rows) ++*rows;
    }
    out += fmt::format(
        "<rect class=\"legend-swatch\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" "
        "fill=\"{}\"/>\n",
        num(cx), num(y - 10), escape_xml(e.color));
    out += text(cx + 16, y, e.label, "fill=\"#333\"");
    cx += w;
  }
  return out;
}

}  // namespace

double LinearScale::operator()(double v) const {
  if (d1 == d0) return (r0 + r1) / 2;
  return r0 + (v - d0) / (d1 - d0) * (r1 - r0);
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  double raw = (hi - lo) / std::max(1, count);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::floor(lo / step) * step; t <= hi + step * 0.999; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    if (ticks.size() > 50) break;
  }
  return ticks;
}

const std::string& palette_color(std::size_t index) {
  static const std::vector<std::string> colors = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                                  "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                                                  "#9c755f", "#86bcb6", "#d37295", "#a0cbe8"};
  return colors[index % colors.size()];
}

std::string render_bar_chart(const BarChart& c) {
  std::vector<LegendEntry> keys;
  for (const auto& s : c.series) keys.push_back({s.name, s.color});
  const double left = 70, right = 16, bottom = 110;
  int legend_rows = 0;
  legend(keys, left, 0, c.width - right, &legend_rows);  // dry run: the plot starts below it
  const double top = 34 + 18.0 * legend_rows;
  const double plot_w = c.width - left - right, plot_h = c.height - top - bottom;
  std::vector<double> all;
  for (const auto& s : c.series) all.insert(all.end(), s.values.begin(), s.values.end());
  auto [lo, hi] = value_domain(all, true);
  LinearScale y{lo, hi, top + plot_h, top};

  std::string out = svg_open(c.width, c.height, "chart bar-chart", c.title);
  out += text(left, 18, c.title, "class=\"chart-title\" font-size=\"14\" font-weight=\"bold\"");
  out += legend(keys, left, 38, c.width - right);
  out += y_axis(y, left, left + plot_w, "gridline");
  out += text(14, top + plot_h / 2, c.y_label,
              fmt::format("transform=\"rotate(-90 14 {})\" text-anchor=\"middle\" fill=\"#333\"",
                          num(top + plot_h / 2)));

  const std::size_t n = c.categories.size(), k = std::max<std::size_t>(1, c.series.size());
  const double band = n ? plot_w / double(n) : plot_w;
  const double bar_w = band * 0.8 / double(k);
  for (std::size_t i = 0; i < n; ++i) {
    double bx = left + band * double(i) + band * 0.1;
    for (std::size_t s = 0; s < c.series.size(); ++s) {
      double v = i < c.series[s].values.size() ? c.series[s].values[i] : NAN;
      if (!std::isfinite(v)) continue;
      double y0 = y(0), y1 = y(v);
      out += fmt::format(
          "<rect class=\"bar\" data-series=\"{}\" data-category=\"{}\" data-value=\"{}\" "
          "x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}: {} = "
          "{}</title></rect>\n",
          s, i, format_number(v, 4), num(bx + bar_w * double(s)), num(std::min(y0, y1)), num(bar_w),
          num(std::abs(y1 - y0)), escape_xml(c.series[s].color), escape_xml(c.categories[i]),
          escape_xml(c.series[s].name), format_number(v, 3));
    }
    double lx = left + band * (double(i) + 0.5), ly = top + plot_h + 14;
    out += text(lx, ly, c.categories[i],
                fmt::format("class=\"category\" text-anchor=\"end\" fill=\"#333\" "
                            "transform=\"rotate(-35 {} {})\"",
                            num(lx), num(ly)));
  }
  out += line(left, y(0), left + plot_w, y(0),
              fmt::format("class=\"zero-line\" stroke=\"{}\"", kAxisColor));
  if (n == 0) out += text(left + plot_w / 2, top + plot_h / 2, "no data", "text-anchor=\"middle\"");
  return out + "</svg>\n";
}

std::string render_scatter(const ScatterChart& c) {
  const double left = 70, right = 20, top = c.note.empty() ? 34 : 52, bottom = 50;
  double plot_w = c.width - left - right, plot_h = c.height - top - bottom;
  // A square plot with one domain on both axes, so that y = x is the 45-degree line.
  if (c.diagonal) plot_w = plot_h = std::min(plot_w, plot_h);
  std::vector<double> xs, ys;
  for (const auto& p : c.points) xs.push_back(p.x), ys.push_back(p.y);
  auto [xlo, xhi] = value_domain(xs, true);
  auto [ylo, yhi] = value_domain(ys, true);
  if (c.diagonal) {
    xlo = ylo = std::min(xlo, ylo);
    xhi = yhi = std::max(xhi, yhi);
  }
  LinearScale x{xlo, xhi, left, left + plot_w}, y{ylo, yhi, top + plot_h, top};

  std::string out = svg_open(c.width, c.height, "chart scatter-chart", c.title);
  out += text(left, 18, c.title, "class=\"chart-title\" font-size=\"14\" font-weight=\"bold\"");
  if (!c.note.empty()) out += text(left, 38, c.note, "class=\"chart-note\" fill=\"#333\"");
  out += y_axis(y, left, left + plot_w, "gridline");
  for (double t : nice_ticks(xlo, xhi)) {
    if (t < xlo - 1e-9 || t > xhi + 1e-9) continue;
    out += line(x(t), top, x(t), top + plot_h, "class=\"gridline\" stroke=\"#e3e3e3\"");
    out +=
        text(x(t), top + plot_h + 16, format_number(t, 3), "text-anchor=\"middle\" fill=\"#333\"");
  }
  out += fmt::format(
      "<rect class=\"plot-frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"{}\"/>\n",
      num(left), num(top), num(plot_w), num(plot_h), kAxisColor);
  if (c.diagonal)
    out += line(x(xlo), y(xlo), x(xhi), y(xhi),
                "class=\"diagonal\" stroke=\"#999\" stroke-dasharray=\"5 4\"");
  out += text(left + plot_w / 2, c.height - 8, c.x_label, "text-anchor=\"middle\" fill=\"#333\"");
  out += text(14, top + plot_h / 2, c.y_label,
              fmt::format("transform=\"rotate(-90 14 {})\" text-anchor=\"middle\" fill=\"#333\"",
                          num(top + plot_h / 2)));
  for (const auto& p : c.points)
    out += fmt::format(
        "<circle class=\"point\" data-x=\"{}\" data-y=\"{}\" cx=\"{}\" cy=\"{}\" r=\"5\" "
        "fill=\"#4e79a7\" fill-opacity=\"0.8\" stroke=\"#fff\"><title>{}: {} / "
        "{}</title></circle>\n",
        format_number(p.x, 4), format_number(p.y, 4), num(x(p.x)), num(y(p.y)), escape_xml(p.label),
        format_number(p.x, 3), format_number(p.y, 3));
  if (c.points.empty())
    out += text(left + plot_w / 2, top + plot_h / 2, "no data", "text-anchor=\"middle\"");
  return out + "</svg>\n";
}

std::string render_timeline_strip(const TimelineStrip& t) {
  const double left = 100, right = 16, top = 30, axis_h = 30, gap = 8;
  const double plot_w = t.width - left - right;
  double end = 0;
  for (const auto& lane : t.lanes)
    for (const auto& b : lane.boxes) end = std::max(end, b.start + b.duration);
  if (end <= 0) end = 1;
  LinearScale x{0, end, left, left + plot_w};
  const double lanes_h = double(t.lanes.size()) * (t.lane_height + gap);
  int legend_rows = 0;
  legend(t.legend, left, 0, t.width - right, &legend_rows);  // dry run: the rows it needs
  const double height = top + lanes_h + axis_h + 18.0 * legend_rows + 10;

  std::string out = svg_open(t.width, height, "chart timeline-strip", t.title);
  out += text(left, 18, t.title, "class=\"chart-title\" font-size=\"14\" font-weight=\"bold\"");
  for (std::size_t i = 0; i < t.lanes.size(); ++i) {
    const auto& lane = t.lanes[i];
    double ly = top + double(i) * (t.lane_height + gap);
    out += fmt::format(
        "<rect class=\"lane\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f4f4f4\"/>\n",
        num(left), num(ly), num(plot_w), num(t.lane_height));
    out += text(left - 8, ly + t.lane_height / 2 + 4, lane.name,
                "class=\"lane-name\" text-anchor=\"end\" fill=\"#333\"");
    for (const auto& b : lane.boxes) {
      // At least half a pixel, so that a 1 us kernel in a 100 ms run is still visible.
      double w = std::max(0.5, x(b.start + b.duration) - x(b.start));
      out += fmt::format(
          "<rect class=\"kernel\" data-lane=\"{}\" data-start=\"{}\" data-duration=\"{}\" "
          "x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#fff\" "
          "stroke-width=\"0.3\"><title>{}</title></rect>\n",
          i, format_number(b.start, 3), format_number(b.duration, 3), num(x(b.start)), num(ly + 2),
          num(w), num(t.lane_height - 4), escape_xml(b.color), escape_xml(b.label));
    }
  }
  double ay = top + lanes_h;
  out += line(left, ay, left + plot_w, ay, fmt::format("class=\"axis\" stroke=\"{}\"", kAxisColor));
  for (double tick : nice_ticks(0, end, 8)) {
    if (tick > end + 1e-9) continue;
    out += line(x(tick), ay, x(tick), ay + 5, fmt::format("stroke=\"{}\"", kAxisColor));
    out += text(x(tick), ay + 17, format_number(tick, 3), "text-anchor=\"middle\" fill=\"#333\"");
  }
  out += text(left - 8, ay + 17, t.unit, "text-anchor=\"end\" fill=\"#333\"");
  out += legend(t.legend, left, ay + axis_h + 12, t.width - right);
  return out + "</svg>\n";
}

}  // namespace fx
