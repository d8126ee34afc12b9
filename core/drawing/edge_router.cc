// SPDX-License-Identifier: Apache-2.0
#include "drawing/edge_router.h"

#include <algorithm>
#include <cmath>

namespace fx::drawing {
namespace {

// Room kept between a routed path and the boxes it passes.
constexpr double kGap = 8;
// Candidate routes tried before giving up on a clear one: bounds the time on levels
// with many boxes in the way (each try checks every obstacle in the band).
constexpr std::size_t kMaxTries = 400;

Point cubic_at(Point p0, Point c1, Point c2, Point p1, double t) {
  const double u = 1 - t;
  const double a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
  return {a * p0.x + b * c1.x + c * c2.x + d * p1.x, a * p0.y + b * c1.y + c * c2.y + d * p1.y};
}

bool polyline_enters(const std::vector<Point>& line, const Rect& r) {
  for (std::size_t i = 0; i + 1 < line.size(); ++i)
    if (segment_enters(line[i], line[i + 1], r)) return true;
  return false;
}

double length(const std::vector<Point>& line) {
  double sum = 0;
  for (std::size_t i = 0; i + 1 < line.size(); ++i)
    sum += std::abs(line[i + 1].x - line[i].x) + std::abs(line[i + 1].y - line[i].y);
  return sum;
}

// Drops zero-length segments, so that bends are counted right and the arrow head
// takes its direction from a real segment.
std::vector<Point> simplified(const std::vector<Point>& line) {
  std::vector<Point> out;
  for (const Point& p : line)
    if (out.empty() || std::abs(p.x - out.back().x) + std::abs(p.y - out.back().y) > 1e-6)
      out.push_back(p);
  return out;
}

}  // namespace

bool segment_enters(Point a, Point b, const Rect& r) {
  // Liang-Barsky clipping against the rectangle shrunk by a hair: what remains inside
  // is a crossing, a touch of the border is not.
  constexpr double eps = 0.5;
  const double x0 = r.x + eps, x1 = r.right() - eps, y0 = r.y + eps, y1 = r.bottom() - eps;
  if (x0 >= x1 || y0 >= y1) return false;
  double t0 = 0, t1 = 1;
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a.x - x0, x1 - a.x, a.y - y0, y1 - a.y};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] <= 0) return false;  // parallel to this side and outside (or on) it
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0)
      t0 = std::max(t0, t);
    else
      t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

bool bezier_enters(const std::vector<Point>& points, const Rect& r) {
  for (std::size_t i = 0; i + 3 < points.size(); i += 3) {
    Point prev = points[i];
    for (int k = 1; k <= 16; ++k) {
      const Point next = cubic_at(points[i], points[i + 1], points[i + 2], points[i + 3], k / 16.0);
      if (segment_enters(prev, next, r)) return true;
      prev = next;
    }
  }
  return false;
}

std::vector<Point> polyline_as_bezier(const std::vector<Point>& line) {
  std::vector<Point> out;
  if (line.empty()) return out;
  out.push_back(line.front());
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    const Point a = line[i], b = line[i + 1];
    out.push_back({a.x + (b.x - a.x) / 3, a.y + (b.y - a.y) / 3});
    out.push_back({a.x + 2 * (b.x - a.x) / 3, a.y + 2 * (b.y - a.y) / 3});
    out.push_back(b);
  }
  return out;
}

std::vector<Point> route_connector(const Rect& from, const Rect& to,
                                   const std::vector<Point>& straight,
                                   const std::vector<Rect>& obstacles) {
  // Only what lies between the two ends vertically can be in the way.
  const double top = std::min(from.y, to.y) - 2 * kGap;
  const double bottom = std::max(from.bottom(), to.bottom()) + 2 * kGap;
  std::vector<Rect> band;
  for (const Rect& o : obstacles)
    if (o.bottom() > top && o.y < bottom) band.push_back(o);
  auto clear = [&](const std::vector<Point>& line) {
    for (const Rect& o : band)
      if (polyline_enters(line, o)) return false;
    return true;
  };
  {
    bool hit = false;
    for (const Rect& o : band)
      if ((hit = bezier_enters(straight, o))) break;
    if (!hit) return straight;
  }

  const Point p0{from.x + from.width / 2, from.bottom()};
  const double tx = to.x + to.width / 2, cy = to.y + to.height / 2;
  std::vector<double> lanes = {
      p0.x, tx, from.x - kGap, from.right() + kGap, to.x - kGap, to.right() + kGap};
  for (const Rect& o : band) {
    lanes.push_back(o.x - kGap);
    lanes.push_back(o.right() + kGap);
  }
  std::vector<std::vector<Point>> routes;
  for (double lane : lanes) {
    for (double ya : {p0.y + kGap, p0.y + kGap / 2}) {
      const std::vector<Point> down = {p0, {p0.x, ya}, {lane, ya}};
      for (double yb : {to.y - kGap, to.y - kGap / 2}) {
        auto r = down;
        r.insert(r.end(), {{lane, yb}, {tx, yb}, {tx, to.y}});
        routes.push_back(simplified(r));
      }
      if (lane >= to.right()) {  // into the target's right side
        auto r = down;
        r.insert(r.end(), {{lane, cy}, {to.right(), cy}});
        routes.push_back(simplified(r));
      }
      if (lane <= to.x) {  // into its left side
        auto r = down;
        r.insert(r.end(), {{lane, cy}, {to.x, cy}});
        routes.push_back(simplified(r));
      }
    }
  }
  // Shortest first; a bend costs a little, so that equal detours prefer fewer turns.
  auto cost = [](const std::vector<Point>& r) { return length(r) + 6.0 * double(r.size()); };
  std::vector<std::pair<double, std::size_t>> order;
  order.reserve(routes.size());
  for (std::size_t i = 0; i < routes.size(); ++i) order.push_back({cost(routes[i]), i});
  std::sort(order.begin(), order.end());
  for (std::size_t k = 0; k < order.size() && k < kMaxTries; ++k)
    if (clear(routes[order[k].second])) return polyline_as_bezier(routes[order[k].second]);

  // Nothing clear: round the right of everything in the band, into the target's side.
  double lane = std::max(from.right(), to.right());
  for (const Rect& o : band) lane = std::max(lane, o.right());
  lane += kGap;
  return polyline_as_bezier(
      simplified({p0, {p0.x, p0.y + kGap}, {lane, p0.y + kGap}, {lane, cy}, {to.right(), cy}}));
}

}  // namespace fx::drawing
