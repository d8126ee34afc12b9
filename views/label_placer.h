// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the graph's shape labels go: a uniform grid of the rectangles already taken
// (node boxes, open frames' title bars, the drawn edges as chains of small rectangles,
// labels placed earlier), so that each edge label is put where it covers nothing else. Placement is
// greedy in edge order; a label with no free spot is dropped (its edge's tooltip still gives the
// shape).

#include <QPainterPath>
#include <QPointF>
#include <QPolygonF>
#include <QRectF>
#include <QSizeF>

#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace fx::views {

class LabelPlacer {
 public:
  // `cell` is the grid's pitch in scene units: about one label's size keeps each query
  // to a handful of cells on graphs of 100,000 nodes.
  explicit LabelPlacer(double cell = 96.0);

  void occupy(const QRectF& r);
  // Takes the line a path paints: its flattened polyline cut into pieces no longer than
  // `step`, each piece's bounds grown by `pad` (half the pen and a little air), so a
  // label is never put on an edge, its own included.
  void occupy_path(const QPainterPath& path, double pad = 2.0, double step = 12.0);
  void occupy_polyline(const QPolygonF& line, double pad = 2.0, double step = 12.0);
  bool is_clear(const QRectF& r) const;
  // The first candidate top-left corner where a label of `size` is clear; that spot is
  // then taken. Nothing when every candidate collides.
  std::optional<QPointF> place(std::span<const QPointF> candidates, QSizeF size);

 private:
  template <typename F>
  void for_cells(const QRectF& r, F&& f) const;

  double cell_;
  std::unordered_map<long long, std::vector<QRectF>> cells_;
};

}  // namespace fx::views
