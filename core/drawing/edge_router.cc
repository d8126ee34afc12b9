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

namespace {

// The obstacles whose vertical extent meets [top, bottom].
std::vector<Rect> in_band(const std::vector<Rect>& obstacles, double top, double bottom) {
  std::vector<Rect> band;
  for (const Rect& o : obstacles)
    if (o.bottom() > top && o.y < bottom) band.push_back(o);
  return band;
}

bool clear_of(const std::vector<Point>& line, const std::vector<Rect>& band) {
  for (const Rect& o : band)
    if (polyline_enters(line, o)) return false;
  return true;
}

// The shortest clear orthogonal path from `a`, left downward with its first sideways
// run at one of `runs_a`, to `b`, reached from above with its last sideways run at one
// of `runs_b`, or into the side of `target` when given: down, sideways to a vertical
// lane beside some obstacle, down the lane, sideways, down (`downward`: never back up,
// as a route through frames' borders must not). Empty when none is clear.
std::vector<Point> orthogonal_route(Point a, const std::vector<double>& runs_a, Point b,
                                    const std::vector<double>& runs_b, const Rect* target,
                                    const std::vector<Rect>& band, bool downward = true) {
  std::vector<double> lanes = {a.x, b.x};
  if (target) lanes.insert(lanes.end(), {target->x - kGap, target->right() + kGap});
  for (const Rect& o : band) {
    lanes.push_back(o.x - kGap);
    lanes.push_back(o.right() + kGap);
  }
  // Boxes in one column give one lane; a lane whose run down is blocked gives no route,
  // which keeps the tries below for routes that may be clear (a level of hundreds of
  // boxes has hundreds of lanes, most of them through the boxes of another column).
  std::sort(lanes.begin(), lanes.end());
  lanes.erase(std::unique(lanes.begin(), lanes.end(),
                          [](double x, double y) { return std::abs(x - y) < 0.01; }),
              lanes.end());
  auto run_clear = [&](double x, double y0, double y1) {
    for (const Rect& o : band)
      if (segment_enters({x, y0}, {x, y1}, o)) return false;
    return true;
  };
  std::vector<std::vector<Point>> routes;
  for (double lane : lanes) {
    for (double ya : runs_a) {
      const std::vector<Point> down = {a, {a.x, ya}, {lane, ya}};
      for (double yb : runs_b) {
        if (downward && (yb < ya - 1e-6 || yb > b.y + 1e-6)) continue;
        if (!run_clear(lane, ya, yb)) continue;
        auto r = down;
        r.insert(r.end(), {{lane, yb}, {b.x, yb}, b});
        routes.push_back(simplified(r));
      }
      if (!target) continue;
      const double cy = target->y + target->height / 2;
      if (downward && cy < ya) continue;
      if (!run_clear(lane, ya, cy)) continue;
      if (lane >= target->right()) {  // into the target's right side
        auto r = down;
        r.insert(r.end(), {{lane, cy}, {target->right(), cy}});
        routes.push_back(simplified(r));
      }
      if (lane <= target->x) {  // into its left side
        auto r = down;
        r.insert(r.end(), {{lane, cy}, {target->x, cy}});
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
    if (clear_of(routes[order[k].second], band)) return routes[order[k].second];
  return {};
}

bool holds(const Rect& frame, const Rect& r) {
  constexpr double eps = 0.5;
  return r.x >= frame.x - eps && r.right() <= frame.right() + eps && r.y >= frame.y - eps &&
         r.bottom() <= frame.bottom() + eps;
}

// A frame's border as a thin obstacle: a path crossing it is caught, one running
// beside it is not.
constexpr double kWall = 1;
Rect left_wall(const Rect& f) {
  return {f.x - kWall, f.y, 2 * kWall, f.height};
}
Rect right_wall(const Rect& f) {
  return {f.right() - kWall, f.y, 2 * kWall, f.height};
}
Rect top_wall(const Rect& f) {
  return {f.x, f.y - kWall, f.width, 2 * kWall};
}
Rect bottom_wall(const Rect& f) {
  return {f.x, f.bottom() - kWall, f.width, 2 * kWall};
}

// The obstacles between the two ends vertically: only these can be in the way.
std::vector<Rect> band_between(const Rect& from, const Rect& to,
                               const std::vector<Rect>& obstacles) {
  return in_band(obstacles, std::min(from.y, to.y) - 2 * kGap,
                 std::max(from.bottom(), to.bottom()) + 2 * kGap);
}

bool enters_any(const std::vector<Point>& curve, const std::vector<Rect>& rects) {
  return std::any_of(rects.begin(), rects.end(),
                     [&](const Rect& o) { return bezier_enters(curve, o); });
}

}  // namespace

std::vector<Point> route_connector(const Rect& from, const Rect& to,
                                   const std::vector<Point>& straight,
                                   const std::vector<Rect>& obstacles) {
  const std::vector<Rect> band = band_between(from, to, obstacles);
  if (!enters_any(straight, band)) return straight;

  const Point p0{from.x + from.width / 2, from.bottom()};
  const Point p3{to.x + to.width / 2, to.y};
  const auto route = orthogonal_route(p0, {p0.y + kGap, p0.y + kGap / 2}, p3,
                                      {to.y - kGap, to.y - kGap / 2}, &to, band, false);
  if (!route.empty()) return polyline_as_bezier(route);

  // Nothing clear: round the right of everything in the band, into the target's side.
  double lane = std::max(from.right(), to.right());
  for (const Rect& o : band) lane = std::max(lane, o.right());
  lane += kGap;
  const double cy = to.y + to.height / 2;
  return polyline_as_bezier(
      simplified({p0, {p0.x, p0.y + kGap}, {lane, p0.y + kGap}, {lane, cy}, {to.right(), cy}}));
}

std::vector<Point> route_through_frames(const Rect& from, const Rect& to,
                                        const std::vector<Point>& straight,
                                        const std::vector<Rect>& boxes,
                                        const std::vector<Frame>& frames) {
  // The rules as obstacles: every title; the sides of the frames the edge is inside
  // of at either end; the top of a frame it leaves, the bottom of one it enters; the
  // whole of a frame it has no business in.
  std::vector<Rect> obstacles = boxes;
  std::vector<const Frame*> leaving, entering;
  for (const Frame& f : frames) {
    const bool has_from = holds(f.outer, from), has_to = holds(f.outer, to);
    if (!has_from && !has_to) {
      obstacles.push_back(f.outer);
      continue;
    }
    obstacles.insert(obstacles.end(), {f.title(), left_wall(f.outer), right_wall(f.outer)});
    if (!has_to) {
      obstacles.push_back(top_wall(f.outer));
      leaving.push_back(&f);
    } else if (!has_from) {
      obstacles.push_back(bottom_wall(f.outer));
      entering.push_back(&f);
    }
  }
  auto area = [](const Frame* f) { return f->outer.width * f->outer.height; };
  std::sort(leaving.begin(), leaving.end(),
            [&](const Frame* a, const Frame* b) { return area(a) < area(b); });  // inner first
  std::sort(entering.begin(), entering.end(),
            [&](const Frame* a, const Frame* b) { return area(a) > area(b); });  // outer first

  const std::vector<Rect> band = band_between(from, to, obstacles);
  if (!enters_any(straight, band)) return straight;

  // Stop by stop: out through each left frame's bottom, in through each entered
  // frame's top right of its title, then into the target. Each stop's x is the
  // nearest to the target's column that its border allows, or else one end of it.
  const Point p0{from.x + from.width / 2, from.bottom()};
  const double tx = to.x + to.width / 2;
  std::vector<Point> path = {p0};
  Point at = p0;
  std::vector<double> runs = {p0.y + kGap, p0.y + kGap / 2};
  auto step = [&](double lo, double hi, double y, const std::vector<double>& arrive) {
    if (lo > hi) return false;
    for (double x : {std::clamp(tx, lo, hi), std::clamp(at.x, lo, hi), lo, hi}) {
      auto leg = orthogonal_route(at, runs, {x, y}, arrive, nullptr, band);
      if (leg.empty()) continue;
      path.insert(path.end(), leg.begin() + 1, leg.end());
      at = {x, y};
      return true;
    }
    return false;
  };
  bool ok = true;
  for (const Frame* f : leaving) {
    const Rect& o = f->outer;
    ok = ok && step(o.x + kGap, o.right() - kGap, o.bottom(), {o.bottom() - kGap / 2});
    runs = {o.bottom() + kGap / 2, o.bottom() + kGap};
  }
  for (const Frame* f : entering) {
    const Rect& o = f->outer;
    ok = ok &&
         step(o.x + f->title_width + kGap, o.right() - kGap, o.y, {o.y - kGap / 2, o.y - kGap});
    runs = {(o.y + f->header + f->content_top) / 2};
  }
  if (ok) {
    std::vector<double> arrive = {to.y - kGap / 2, to.y - kGap};
    arrive.insert(arrive.end(), runs.begin(), runs.end());
    auto leg = orthogonal_route(at, runs, {tx, to.y}, arrive, &to, band);
    if (!leg.empty()) {
      path.insert(path.end(), leg.begin() + 1, leg.end());
      return polyline_as_bezier(simplified(path));
    }
  }
  return route_connector(from, to, straight, obstacles);
}

}  // namespace fx::drawing
