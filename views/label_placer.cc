// SPDX-License-Identifier: Apache-2.0
#include "views/label_placer.h"

#include <QLineF>
#include <QPolygonF>

#include <algorithm>
#include <cmath>

namespace fx::views {

namespace {

long long cell_key(long long cx, long long cy) {
  return (cx << 32) ^ (cy & 0xffffffffLL);
}

}  // namespace

LabelPlacer::LabelPlacer(double cell) : cell_(cell > 0 ? cell : 96.0) {}

template <typename F>
void LabelPlacer::for_cells(const QRectF& r, F&& f) const {
  const auto x0 = static_cast<long long>(std::floor(r.left() / cell_));
  const auto x1 = static_cast<long long>(std::floor(r.right() / cell_));
  const auto y0 = static_cast<long long>(std::floor(r.top() / cell_));
  const auto y1 = static_cast<long long>(std::floor(r.bottom() / cell_));
  for (long long cy = y0; cy <= y1; ++cy)
    for (long long cx = x0; cx <= x1; ++cx) f(cell_key(cx, cy));
}

void LabelPlacer::occupy(const QRectF& r) {
  if (r.isEmpty()) return;
  for_cells(r, [&](long long key) { cells_[key].push_back(r); });
}

void LabelPlacer::occupy_path(const QPainterPath& path, double pad, double step) {
  for (const QPolygonF& poly : path.toSubpathPolygons()) occupy_polyline(poly, pad, step);
}

void LabelPlacer::occupy_polyline(const QPolygonF& poly, double pad, double step) {
  // Diagonal pieces take their bounding box: short pieces keep that box close to the line.
  for (qsizetype i = 0; i + 1 < poly.size(); ++i) {
    const QPointF a = poly[i], b = poly[i + 1];
    const double len = QLineF(a, b).length();
    const int pieces = std::max(1, int(std::ceil(len / step)));
    for (int k = 0; k < pieces; ++k) {
      const QPointF p0 = a + (b - a) * (double(k) / pieces);
      const QPointF p1 = a + (b - a) * (double(k + 1) / pieces);
      occupy(QRectF(p0, p1).normalized().adjusted(-pad, -pad, pad, pad));
    }
  }
}

bool LabelPlacer::is_clear(const QRectF& r) const {
  bool clear = true;
  for_cells(r, [&](long long key) {
    if (!clear) return;
    const auto it = cells_.find(key);
    if (it == cells_.end()) return;
    for (const QRectF& taken : it->second)
      if (taken.intersects(r)) {
        clear = false;
        return;
      }
  });
  return clear;
}

std::optional<QPointF> LabelPlacer::place(std::span<const QPointF> candidates, QSizeF size) {
  for (const QPointF& p : candidates) {
    const QRectF r(p, size);
    if (is_clear(r)) {
      occupy(r);
      return p;
    }
  }
  return std::nullopt;
}

}  // namespace fx::views
