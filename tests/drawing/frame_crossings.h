// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a drawn edge crosses a frame's outline, read off the painted curve: the checks
// that an edge into an open frame enters through its top border, one out of it leaves
// through the bottom, and one with no end inside a frame stays out of it. Shared by
// the drawing tests (generated models) and the views tests (corpus models).

#include <cmath>
#include <string>
#include <vector>

#include "drawing/edge_router.h"
#include "drawing/hierarchical_layout.h"

namespace fx::drawing::frame_check {

enum class Side { Top, Bottom, Left, Right };

struct Crossing {
  Side side;
  Point at;
};

inline Point bezier_at(const std::vector<Point>& p, std::size_t i, double t) {
  const double u = 1 - t;
  const double a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
  return {a * p[i].x + b * p[i + 1].x + c * p[i + 2].x + d * p[i + 3].x,
          a * p[i].y + b * p[i + 1].y + c * p[i + 2].y + d * p[i + 3].y};
}

// The curve (cubic Bézier control points) sampled finely, then every step from
// outside the frame to inside or back: the side is the border nearest the point
// where the step crosses. A curve that runs along a border does not cross it.
inline std::vector<Crossing> crossings(const std::vector<Point>& curve, const Rect& f) {
  auto inside = [&](Point p) {
    return p.x > f.x + 0.25 && p.x < f.right() - 0.25 && p.y > f.y + 0.25 &&
           p.y < f.bottom() - 0.25;
  };
  std::vector<Point> samples;
  for (std::size_t i = 0; i + 3 < curve.size(); i += 3)
    for (int k = (i == 0 ? 0 : 1); k <= 64; ++k) samples.push_back(bezier_at(curve, i, k / 64.0));
  std::vector<Crossing> out;
  for (std::size_t i = 0; i + 1 < samples.size(); ++i) {
    const Point a = samples[i], b = samples[i + 1];
    if (inside(a) == inside(b)) continue;
    const Point m{(a.x + b.x) / 2, (a.y + b.y) / 2};
    const double d[4] = {std::abs(m.y - f.y), std::abs(m.y - f.bottom()), std::abs(m.x - f.x),
                         std::abs(m.x - f.right())};
    int best = 0;
    for (int s = 1; s < 4; ++s)
      if (d[s] < d[best]) best = s;
    out.push_back({Side(best), m});
  }
  return out;
}

// True when r lies inside f.
inline bool holds(const Rect& f, const Rect& r) {
  return r.x >= f.x - 0.5 && r.right() <= f.right() + 0.5 && r.y >= f.y - 0.5 &&
         r.bottom() <= f.bottom() + 0.5;
}

inline const char* side_name(Side s) {
  switch (s) {
    case Side::Top: return "top";
    case Side::Bottom: return "bottom";
    case Side::Left: return "left side";
    case Side::Right: return "right side";
  }
  return "?";
}

// Every way the scene's edges break the frame rules, one line each (edge and frame by
// scene index); empty when none: an edge into a frame crosses its outline once, at the
// top, right of the title; one out of a frame once, at the bottom; any other edge never;
// and no edge passes through a title or a closed box other than its own ends.
inline std::vector<std::string> frame_rule_breaks(const SceneLayout& s, double header) {
  std::vector<std::string> out;
  auto rect = [](const SceneBox& b) { return Rect{b.x, b.y, b.width, b.height}; };
  for (std::size_t i = 0; i < s.edges.size(); ++i) {
    const SceneEdge& e = s.edges[i];
    if (e.points.size() < 4) continue;
    const Rect from = rect(s.boxes[std::size_t(e.from)]), to = rect(s.boxes[std::size_t(e.to)]);
    const std::string edge = "edge " + std::to_string(i) + " (box " + std::to_string(e.from) +
                             " -> " + std::to_string(e.to) + ")";
    for (std::size_t b = 0; b < s.boxes.size(); ++b) {
      const SceneBox& box = s.boxes[b];
      const std::string where = " box " + std::to_string(b);
      if (!box.open) {
        if (int32_t(b) != e.from && int32_t(b) != e.to && bezier_enters(e.points, rect(box)))
          out.push_back(edge + " runs under" + where);
        continue;
      }
      const Rect f = rect(box);
      if (bezier_enters(e.points, {box.x, box.y, box.title_width, header}))
        out.push_back(edge + " crosses the title of frame" + where);
      const bool has_from = holds(f, from), has_to = holds(f, to);
      const auto cs = crossings(e.points, f);
      if (has_from == has_to) {
        if (!cs.empty())
          out.push_back(edge + " crosses the " + side_name(cs.front().side) + " of frame" + where +
                        (has_from ? ", which holds both its ends" : ", which holds neither end"));
      } else if (cs.size() != 1) {
        out.push_back(edge + " crosses frame" + where + " " + std::to_string(cs.size()) + " times");
      } else if (has_to && cs.front().side != Side::Top) {
        out.push_back(edge + " enters frame" + where + " through its " +
                      side_name(cs.front().side));
      } else if (has_to && cs.front().at.x < box.x + box.title_width - 0.5) {
        out.push_back(edge + " enters frame" + where + " across its title");
      } else if (has_from && cs.front().side != Side::Bottom) {
        out.push_back(edge + " leaves frame" + where + " through its " +
                      side_name(cs.front().side));
      }
    }
  }
  return out;
}

}  // namespace fx::drawing::frame_check
