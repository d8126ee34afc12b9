// SPDX-License-Identifier: Apache-2.0
#pragma once
// Routes the connectors that dot does not draw (edges between boxes of different
// levels, e.g. a ResNet identity skip from outside a block into the block's Add)
// around what they would otherwise hide.
//
// A straight connector runs down the column of the boxes between its ends, under
// them (boxes paint above edges), so a skip vanishes behind the main chain. The
// router keeps the plain curve when it is clear, and otherwise draws an orthogonal
// path: down out of the source, sideways to a free vertical lane, down the lane, and
// into the target from above or from the side. Obstacles are the closed boxes and
// the titles of open frames (an edge never crosses a title).
//
// Across frames (route_through_frames), an edge reads like the nesting it crosses: it
// leaves each frame holding only its source through the frame's bottom border and
// enters each frame holding only its target through the top border, beside the title
// (a frame is wider than its title by a port for this), never through a side; a frame
// holding neither end is gone around.

#include <vector>

#include "drawing/graphviz_layout.h"

namespace fx::drawing {

struct Rect {
  double x = 0, y = 0, width = 0, height = 0;
  double right() const { return x + width; }
  double bottom() const { return y + height; }
};

// True when the segment a-b passes through the inside of r (touching its border
// does not count, so a path may end on a box it enters).
bool segment_enters(Point a, Point b, const Rect& r);

// True when the cubic Bézier path (p0, c1, c2, p1, ...) enters r, sampled finely.
bool bezier_enters(const std::vector<Point>& points, const Rect& r);

// Cubic Bézier control points drawing a polyline with straight segments.
std::vector<Point> polyline_as_bezier(const std::vector<Point>& polyline);

// The path from box `from` to box `to` as cubic Bézier control points: `straight`
// when it enters no obstacle, else the shortest clear orthogonal route found (or the
// one round the outside of every obstacle in the way, when none is clear).
std::vector<Point> route_connector(const Rect& from, const Rect& to,
                                   const std::vector<Point>& straight,
                                   const std::vector<Rect>& obstacles);

// An open frame as the router sees it: its outline, the title written on the top
// border from the left (title_width from the frame's left side, header high), and
// where its content starts (the rows between the title and the content are where
// edges that came in through the top turn toward their target).
struct Frame {
  Rect outer;
  double header = 0;
  double title_width = 0;
  double content_top = 0;  // absolute y
  Rect title() const { return {outer.x, outer.y, title_width, header}; }
};

// The path from box `from` to box `to` as cubic Bézier control points, given every
// closed box and every open frame on screen: `straight` when it keeps the rules
// above, else an orthogonal route through the frames' borders (bottom out, top in),
// else route_connector's answer with the frames' titles and sides as obstacles.
std::vector<Point> route_through_frames(const Rect& from, const Rect& to,
                                        const std::vector<Point>& straight,
                                        const std::vector<Rect>& boxes,
                                        const std::vector<Frame>& frames);

}  // namespace fx::drawing
