// SPDX-License-Identifier: Apache-2.0
#pragma once
// One level of the hierarchy laid out by Graphviz `dot`, top to bottom.
//
// Coordinates are in points with y growing downwards (Qt's convention); boxes are
// given by their centre. Edge paths are cubic Bézier control points as dot returns
// them (p0, c1, c2, p1, c1, c2, p2, ...), with the arrow tip separately.
//
// Graphviz keeps global state and is not thread-safe: every call is serialized
// by one process-wide mutex, so several views or tests may call it from any thread.

#include <cstdint>
#include <vector>

namespace fx::drawing {

struct Point {
  double x = 0, y = 0;
};

struct Size {
  double width = 0, height = 0;
};

struct BoxPlacement {
  Point centre;
  Size size;
};

struct EdgePath {
  int32_t from = -1, to = -1;  // box indices
  std::vector<Point> points;   // cubic Bézier control points
  bool has_arrow = false;
  Point arrow_tip;
};

struct LevelLayout {
  std::vector<BoxPlacement> boxes;
  std::vector<EdgePath> edges;  // in the order of the input edges
  Size size;                    // bounding box, origin at (0, 0)
};

struct LayoutEdge {
  int32_t from = -1, to = -1;
};

struct LayoutSpacing {
  double node_sep = 18;  // points between boxes on one rank
  double rank_sep = 26;  // points between ranks
};

// Lays out boxes of the given sizes joined by the given edges. Throws fx::Error when
// Graphviz fails (it reports through its own error channel, which is captured).
LevelLayout layout_with_dot(const std::vector<Size>& boxes, const std::vector<LayoutEdge>& edges,
                            const LayoutSpacing& spacing = {});

}  // namespace fx::drawing
