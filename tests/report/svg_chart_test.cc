// SPDX-License-Identifier: Apache-2.0
// The SVG chart writer: coordinates (scales, ticks, bar heights, shared time axis),
// the marks each chart must contain, and escaping of user text.

#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace fx {
namespace {

// Attributes of every element `<tag class="cls" ...>` in document order.
std::vector<std::map<std::string, std::string>> elements(const std::string& svg,
                                                         const std::string& tag,
                                                         const std::string& cls) {
  std::vector<std::map<std::string, std::string>> out;
  std::regex el("<" + tag + " class=\"" + cls + "\"([^>]*)>");
  std::regex attr("([a-z0-9-]+)=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), el); it != std::sregex_iterator();
       ++it) {
    std::map<std::string, std::string> a;
    std::string body = (*it)[1];
    for (auto at = std::sregex_iterator(body.begin(), body.end(), attr);
         at != std::sregex_iterator(); ++at)
      a[(*at)[1]] = (*at)[2];
    out.push_back(std::move(a));
  }
  return out;
}

double d(const std::map<std::string, std::string>& a, const std::string& k) {
  return std::stod(a.at(k));
}

TEST(ReportSvg, LinearScaleMapsEndsAndMiddle) {
  LinearScale s{0, 10, 100, 300};
  EXPECT_DOUBLE_EQ(s(0), 100);
  EXPECT_DOUBLE_EQ(s(10), 300);
  EXPECT_DOUBLE_EQ(s(2.5), 150);
  LinearScale inv{0, 10, 300, 100};  // SVG y grows downwards
  EXPECT_DOUBLE_EQ(inv(10), 100);
  LinearScale flat{5, 5, 0, 100};
  EXPECT_DOUBLE_EQ(flat(5), 50);
}

TEST(ReportSvg, NiceTicksAreRoundAndCoverTheRange) {
  auto t = nice_ticks(0, 97, 5);
  ASSERT_GE(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t.front(), 0);
  EXPECT_GE(t.back(), 97);
  EXPECT_DOUBLE_EQ(t[1] - t[0], 20);
  auto n = nice_ticks(-3.2, 7.9, 5);
  EXPECT_LE(n.front(), -3.2);
  EXPECT_GE(n.back(), 7.9);
  EXPECT_NE(std::find(n.begin(), n.end(), 0.0), n.end());
}

TEST(ReportSvg, BarHeightsAreProportionalToValues) {
  BarChart c;
  c.title = "saved";
  c.categories = {"a", "b", "c", "d"};
  c.series = {{"estimated", "#111", {10, 20, 40, 5}}, {"measured", "#222", {8, NAN, 30, 0}}};
  std::string svg = render_bar_chart(c);
  auto bars = elements(svg, "rect", "bar");
  ASSERT_EQ(bars.size(), 7u);  // the NaN (not measured) draws no bar
  double unit = d(bars[0], "height") / 10;
  ASSERT_GT(unit, 0);
  for (const auto& b : bars)
    EXPECT_NEAR(d(b, "height"), unit * d(b, "data-value"), 0.02) << b.at("data-value");
  // All bars stand on one baseline.
  for (const auto& b : bars)
    EXPECT_NEAR(d(b, "y") + d(b, "height"), d(bars[0], "y") + d(bars[0], "height"), 0.02);
  // Series side by side within a category, categories left to right.
  EXPECT_LT(d(bars[0], "x"), d(bars[1], "x"));
  EXPECT_EQ(svg.find("<script"), std::string::npos);
}

TEST(ReportSvg, NegativeBarsHangBelowTheZeroLine) {
  BarChart c;
  c.categories = {"gain", "loss"};
  c.series = {{"measured", "#222", {30, -15}}};
  std::string svg = render_bar_chart(c);
  auto bars = elements(svg, "rect", "bar");
  ASSERT_EQ(bars.size(), 2u);
  auto zero = elements(svg, "line", "zero-line");
  ASSERT_EQ(zero.size(), 1u);
  double y0 = d(zero[0], "y1");
  EXPECT_NEAR(d(bars[0], "y") + d(bars[0], "height"), y0, 0.02);  // up from zero
  EXPECT_NEAR(d(bars[1], "y"), y0, 0.02);                         // down from zero
  EXPECT_NEAR(d(bars[0], "height"), 2 * d(bars[1], "height"), 0.05);
}

TEST(ReportSvg, ScatterPlacesPointsAndTheDiagonal) {
  ScatterChart c;
  c.points = {{0, 0, "origin"}, {100, 50, "half"}, {50, 100, "double"}};
  c.note = "Spearman 0.5";
  std::string svg = render_scatter(c);
  auto pts = elements(svg, "circle", "point");
  ASSERT_EQ(pts.size(), 3u);
  auto diag = elements(svg, "line", "diagonal");
  ASSERT_EQ(diag.size(), 1u);
  // One scale on both axes: the (100, 50) and (50, 100) points mirror across y = x, and
  // the diagonal goes through the origin point.
  double ox = d(pts[0], "cx"), oy = d(pts[0], "cy");
  EXPECT_NEAR(d(pts[1], "cx") - ox, oy - d(pts[2], "cy"), 0.02);
  EXPECT_NEAR(d(pts[2], "cx") - ox, oy - d(pts[1], "cy"), 0.02);
  double slope = (d(diag[0], "y2") - d(diag[0], "y1")) / (d(diag[0], "x2") - d(diag[0], "x1"));
  EXPECT_NEAR(slope, -1.0, 1e-3);
  EXPECT_NEAR(d(diag[0], "x1"), ox, 0.02);
  EXPECT_NE(svg.find("Spearman 0.5"), std::string::npos);
}

TEST(ReportSvg, TimelineLanesShareOneTimeAxis) {
  TimelineStrip t;
  t.lanes = {{"before", {{0, 100, "conv", "#111"}, {100, 50, "relu", "#222"}}},
             {"after", {{0, 120, "fused", "#111"}}}};
  t.legend = {{"fg-1", "#111"}};
  std::string svg = render_timeline_strip(t);
  auto k = elements(svg, "rect", "kernel");
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0].at("data-lane"), "0");
  EXPECT_EQ(k[2].at("data-lane"), "1");
  EXPECT_NEAR(d(k[0], "x"), d(k[2], "x"), 0.02);  // both runs start at t = 0
  EXPECT_NEAR(d(k[0], "x") + d(k[0], "width"), d(k[1], "x"), 0.02);
  EXPECT_NEAR(d(k[2], "width") / d(k[0], "width"), 1.2, 1e-3);
  EXPECT_LT(d(k[0], "y"), d(k[2], "y"));
  EXPECT_EQ(elements(svg, "rect", "legend-swatch").size(), 1u);
  EXPECT_EQ(elements(svg, "rect", "lane").size(), 2u);
}

TEST(ReportSvg, TinyKernelsStayVisible) {
  TimelineStrip t;
  t.lanes = {{"run", {{0, 1e6, "long", "#111"}, {1e6, 0.001, "short", "#222"}}}};
  auto k = elements(render_timeline_strip(t), "rect", "kernel");
  ASSERT_EQ(k.size(), 2u);
  EXPECT_GE(d(k[1], "width"), 0.5);
}

TEST(ReportSvg, UserTextIsEscaped) {
  BarChart c;
  c.title = "a <b> & \"c\"";
  c.categories = {"</svg><script>alert('x')</script>"};
  c.series = {{"s&p", "#111", {1}}};
  std::string svg = render_bar_chart(c);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_EQ(svg.find("</svg><"), std::string::npos);
  EXPECT_NE(svg.find("&lt;/svg&gt;&lt;script&gt;alert(&#39;x&#39;)"), std::string::npos);
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_NE(svg.find("s&amp;p"), std::string::npos);
  // Exactly one root element, closed once.
  EXPECT_EQ(svg.rfind("</svg>"), svg.find("</svg>"));
}

TEST(ReportSvg, EmptyChartsStillRender) {
  EXPECT_NE(render_bar_chart(BarChart{}).find("no data"), std::string::npos);
  EXPECT_NE(render_scatter(ScatterChart{}).find("no data"), std::string::npos);
  EXPECT_NE(render_timeline_strip(TimelineStrip{}).find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace fx
