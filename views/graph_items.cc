// SPDX-License-Identifier: Apache-2.0
#include "views/graph_items.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

namespace fx::views {
namespace {

QPointF qt(const drawing::Point& p) {
  return {p.x, p.y};
}

// Arrow head pointing from `from` to `tip`.
QPolygonF arrow_head(QPointF from, QPointF tip, double size = 7) {
  QLineF line(tip, from);
  if (line.length() < 1e-6) return {};
  const double a = std::atan2(line.dy(), line.dx());
  QPointF left = tip + QPointF(std::cos(a + 0.45) * size, std::sin(a + 0.45) * size);
  QPointF right = tip + QPointF(std::cos(a - 0.45) * size, std::sin(a - 0.45) * size);
  return QPolygonF({tip, left, right});
}

}  // namespace

BoxItem::BoxItem(const drawing::SceneBox& box, int index, QStringList lines, OpStyle style,
                 int repeat_count)
    : box_(box),
      index_(index),
      lines_(std::move(lines)),
      style_(style),
      repeat_count_(repeat_count) {
  setPos(box.x, box.y);
  setZValue(box.open ? box.depth : 100 + box.depth);
  setFlag(ItemIsSelectable, !box.open);
  setAcceptHoverEvents(true);
  setCursor(Qt::PointingHandCursor);
}

QRectF BoxItem::boundingRect() const {
  // Room for the stacked cards of a repeat box, the selection outline and the badge
  // standing over the top edge.
  return QRectF(-3, badge_.isEmpty() ? -3 : -9, box_.width + 10,
                box_.height + (badge_.isEmpty() ? 10 : 16));
}

void BoxItem::set_badge(const QString& text) {
  prepareGeometryChange();
  badge_ = text;
  update();
}

void BoxItem::set_overlay(std::optional<QColor> color) {
  overlay_ = color;
  update();
}
void BoxItem::set_highlighted(bool on) {
  highlighted_ = on;
  update();
}
void BoxItem::set_match(bool on) {
  match_ = on;
  update();
}

void BoxItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const QRectF r(0, 0, box_.width, box_.height);
  const double lod = option->levelOfDetailFromTransform(p->worldTransform());
  p->setRenderHint(QPainter::Antialiasing, lod > 0.3);
  QColor fill = overlay_.value_or(style_.fill);
  QPen pen(style_.border, 1.2);
  if (isSelected() || highlighted_) pen = QPen(QColor(30, 120, 255), 2.6);
  if (match_) pen = QPen(QColor(255, 140, 0), 3);
  if (box_.open) {
    // A frame: title bar on top, translucent body, drawn under its children.
    QColor body = fill;
    body.setAlpha(90);
    p->setPen(pen);
    p->setBrush(body);
    p->drawRoundedRect(r, 6, 6);
    p->setPen(style_.text);
    p->drawText(r.adjusted(8, 2, -8, 0), Qt::AlignLeft | Qt::AlignTop,
                lines_.join(QStringLiteral("  ·  ")));
    return;
  }
  if (repeat_count_ > 1) {
    // Two cards peeking out behind: this box stands for several identical blocks.
    p->setPen(QPen(style_.border, 1));
    p->setBrush(fill.darker(108));
    p->drawRoundedRect(r.translated(6, 6), 5, 5);
    p->drawRoundedRect(r.translated(3, 3), 5, 5);
  }
  p->setPen(pen);
  p->setBrush(fill);
  p->drawRoundedRect(r, 5, 5);
  if (lod < 0.25) return;  // text is unreadable this far out; skip the cost
  if (!badge_.isEmpty()) {
    // On the top edge, right: it names what the op absorbed without widening the box.
    QFont small = p->font();
    small.setPointSizeF(small.pointSizeF() * 0.75);
    small.setBold(true);
    const double w = QFontMetricsF(small).horizontalAdvance(badge_) + 8;
    const QRectF tag(r.right() - w - 4, -7, w, 13);
    p->save();
    p->setFont(small);
    p->setPen(QPen(style_.border, 1));
    p->setBrush(style_.border.lighter(150));
    p->drawRoundedRect(tag, 6, 6);
    p->setPen(QColor(20, 20, 20));
    p->drawText(tag, Qt::AlignCenter, badge_);
    p->restore();
  }
  p->setPen(overlay_ ? QColor(20, 20, 20) : style_.text);
  QFont f = p->font();
  f.setBold(box_.item.kind == drawing::Item::Group);
  p->setFont(f);
  if (box_.item.kind == drawing::Item::Group || lines_.size() < 2) {
    p->drawText(r, Qt::AlignCenter, lines_.join(QLatin1Char('\n')));
    return;
  }
  // An op with its constant inputs: the op on top, centred; the constants below it,
  // left-aligned and quieter, as Netron lists weights (the sizer gave each a line).
  const double line = (r.height() - 10) / double(lines_.size());
  p->drawText(QRectF(0, 5, r.width(), line), Qt::AlignCenter, lines_.front());
  QColor quiet = p->pen().color();
  quiet.setAlphaF(0.7);
  p->setPen(quiet);
  for (qsizetype i = 1; i < lines_.size(); ++i)
    p->drawText(QRectF(10, 5 + line * double(i), r.width() - 12, line),
                Qt::AlignLeft | Qt::AlignVCenter, lines_[i]);
}

EdgeItem::EdgeItem(const drawing::SceneEdge& e, QString label, QSizeF label_size, QColor color)
    : text_(std::move(label)), label_size_(label_size), color_(color) {
  const auto& pts = e.points;
  if (!pts.empty()) {
    path_.moveTo(qt(pts[0]));
    for (std::size_t i = 1; i + 2 < pts.size(); i += 3)
      path_.cubicTo(qt(pts[i]), qt(pts[i + 1]), qt(pts[i + 2]));
    const QPointF end = qt(pts.back());
    if (e.has_arrow) {
      arrow_ = arrow_head(end, qt(e.arrow_tip));
      path_.lineTo(qt(e.arrow_tip));
    } else if (pts.size() >= 2) {
      arrow_ = arrow_head(qt(pts[pts.size() - 2]), end);
    }
    middle_ = path_.pointAtPercent(0.5) + QPointF(5, -label_size_.height() / 2);
  }
  setZValue(90);  // above group hulls (their outline would cut a label), below boxes
  line_bounds_ = path_.boundingRect().united(arrow_.boundingRect()).adjusted(-4, -4, 4, 4);
  // The painted line flattened once, with its running length: label candidates walk
  // it (QPainterPath::pointAtPercent measures the whole path again on every call).
  for (const QPolygonF& poly : path_.toSubpathPolygons()) line_ << poly;
  length_.reserve(std::size_t(line_.size()));
  double run = 0;
  for (qsizetype i = 0; i < line_.size(); ++i) {
    if (i > 0) run += QLineF(line_[i - 1], line_[i]).length();
    length_.push_back(run);
  }
  bounds_ = line_bounds_;
}

void EdgeItem::show_label_at(std::optional<QPointF> at, const QString& text, QSizeF size) {
  prepareGeometryChange();
  label_ = at ? (text.isEmpty() ? text_ : text) : QString();
  shown_size_ = text.isEmpty() ? label_size_ : size;
  label_pos_ = at.value_or(QPointF());
  bounds_ = at ? line_bounds_.united(label_rect()) : line_bounds_;
  update();
}

void EdgeItem::set_short_label(QString text, QSizeF size) {
  short_text_ = text == text_ ? QString() : std::move(text);
  short_size_ = size;
}

std::pair<QPointF, bool> EdgeItem::along(double t) const {
  if (line_.isEmpty()) return {QPointF(), false};
  const double want = t * length_.back();
  const auto it = std::lower_bound(length_.begin(), length_.end(), want);
  const std::size_t i =
      std::clamp<std::size_t>(std::size_t(it - length_.begin()), 1, std::size_t(line_.size()) - 1);
  const QPointF a = line_[qsizetype(i - 1)], b = line_[qsizetype(i)];
  const double seg = length_[i] - length_[i - 1];
  const QPointF at = seg > 0 ? a + (b - a) * ((want - length_[i - 1]) / seg) : a;
  const bool horizontal = std::abs(b.x() - a.x()) > 2 * std::abs(b.y() - a.y());
  return {at, horizontal};
}

void EdgeItem::occupy_line(LabelPlacer& placer) const {
  placer.occupy_polyline(line_);
  if (!arrow_.isEmpty()) placer.occupy(arrow_.boundingRect().adjusted(-1, -1, 1, 1));
}

void EdgeItem::place_label(LabelPlacer& placer) {
  if (text_.isEmpty() || path_.isEmpty()) {
    show_label_at(std::nullopt);
    return;
  }
  // Candidates: along the edge from the middle outwards; beside a vertical stretch
  // right of the line first (the usual reading place), then left of it, which frees
  // converging edges' labels; above or below a horizontal stretch (a connector's run
  // between frames), never on it.
  // The middle, right of the line, is computed already and free on most edges: try it
  // before sampling the path (this runs for every edge of a 100,000-node graph).
  const QPointF middle[] = {middle_};
  if (placer.place(middle, label_size_)) {
    show_label_at(middle_);
    return;
  }
  if (auto at = placer.place(label_spots(label_size_), label_size_)) {
    show_label_at(at);
    return;
  }
  if (!short_text_.isEmpty())
    if (auto at = placer.place(label_spots(short_size_), short_size_)) {
      show_label_at(at, short_text_, short_size_);
      return;
    }
  show_label_at(std::nullopt);
}

std::vector<QPointF> EdgeItem::label_spots(QSizeF size) const {
  std::vector<QPointF> spots;
  const double w = size.width(), h = size.height();
  // Staggered along the whole edge, both ends included: where edges converge on one
  // box, the tail end (just under each branch's own box) is where they are apart.
  for (double t : {0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.1, 0.9, 0.05, 0.95, 0.02}) {
    const auto [at, horizontal] = along(t);
    if (horizontal) {
      spots.push_back(at + QPointF(-w / 2, -h - 4));
      spots.push_back(at + QPointF(-w / 2, 4));
    } else {
      spots.push_back(at + QPointF(5, -h / 2));
      spots.push_back(at + QPointF(-5 - w, -h / 2));
    }
    // A corner of the label at the point: on a slanted line two of the four corners
    // leave the label clear of it, whichever way the line leans.
    spots.push_back(at + QPointF(4, -h - 4));
    spots.push_back(at + QPointF(-w - 4, 4));
    spots.push_back(at + QPointF(-w - 4, -h - 4));
    spots.push_back(at + QPointF(4, 4));
  }
  // Right under the tail's box, beside the line (top-aligned on the box's bottom): on a
  // short edge into a Concat of many branches the only place clear of its neighbours.
  if (!line_.isEmpty()) {
    const QPointF tail = line_.front();
    spots.push_back(tail + QPointF(4, 2));
    spots.push_back(tail + QPointF(-w - 4, 2));
    const QPointF head = line_.back();
    spots.push_back(head + QPointF(4, -h - 2));
    spots.push_back(head + QPointF(-w - 4, -h - 2));
  }
  return spots;
}

QRectF EdgeItem::label_rect() const {
  return label_.isEmpty() ? QRectF() : QRectF(label_pos_, shown_size_);
}

QRectF EdgeItem::boundingRect() const {
  return bounds_;
}

QPainterPath EdgeItem::shape() const {
  QPainterPathStroker s;
  s.setWidth(6);
  return s.createStroke(path_);
}

void EdgeItem::set_internal(std::optional<QColor> c) {
  internal_ = c;
  update();
}

void EdgeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = option->levelOfDetailFromTransform(p->worldTransform());
  p->setRenderHint(QPainter::Antialiasing, lod > 0.3);
  QPen pen(internal_.value_or(color_), internal_ ? 2.2 : 1.1);
  if (internal_) pen.setStyle(Qt::DashLine);  // traffic a fused kernel keeps on chip
  p->setPen(pen);
  p->setBrush(Qt::NoBrush);
  p->drawPath(path_);
  p->setPen(Qt::NoPen);
  p->setBrush(pen.color());
  p->drawPolygon(arrow_);
  if (lod > 0.6 && !label_.isEmpty()) {
    QFont f = p->font();
    f.setPointSizeF(f.pointSizeF() * 0.8);
    p->setFont(f);
    p->setPen(color_);
    p->drawText(label_rect(), Qt::AlignLeft | Qt::AlignVCenter, label_);
  }
}

HullItem::HullItem(int plan_group, const QPainterPath& outline, QColor color, double benefit)
    : QGraphicsPathItem(outline), plan_group_(plan_group), color_(color), benefit_(benefit) {
  setZValue(80);  // above frames, below boxes and edges
  setFlag(ItemIsSelectable, true);
}

void HullItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  p->setRenderHint(QPainter::Antialiasing, true);
  QColor fill = color_;
  // The more traffic the group removes, the stronger its tint.
  fill.setAlphaF(0.10f + 0.25f * float(std::clamp(benefit_, 0.0, 1.0)));
  p->setBrush(fill);
  p->setPen(QPen(color_.darker(isSelected() ? 160 : 110), isSelected() ? 3.5 : 1.8));
  p->drawPath(path());
}

}  // namespace fx::views
