// SPDX-License-Identifier: Apache-2.0
#pragma once
// The items of the graph scene, painted by Qt from the Graphviz layout:
//
//   BoxItem   an op node, a closed group (a stacked card when it stands for repeated
//             blocks) or the frame of an open group, with its label lines
//   EdgeItem  a data edge: the dot spline (or a connector into an open group), an
//             arrow head, and the tensor shape as a label once zoomed in enough
//   HullItem  a fusion group: a rounded outline around its members' boxes, coloured
//             by status, its fill strength by estimated benefit

#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QStringList>

#include <optional>
#include <utility>
#include <vector>

#include "drawing/hierarchical_layout.h"
#include "views/label_placer.h"
#include "views/op_style.h"

namespace fx::views {

class BoxItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 1 };
  BoxItem(const drawing::SceneBox& box, int index, QStringList lines, OpStyle style,
          int repeat_count);
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  const drawing::Item& item() const { return box_.item; }
  bool is_open() const { return box_.open; }
  int line_count() const { return int(lines_.size()); }
  int index() const { return index_; }
  void set_overlay(std::optional<QColor> color);
  void set_highlighted(bool on);
  bool highlighted() const { return highlighted_; }
  void set_match(bool on);  // search hit
  // A small tag on the box's top right corner: what the canonical form folded into
  // this op ("+BN"); empty: none.
  void set_badge(const QString& text);
  const QString& badge() const { return badge_; }

 private:
  drawing::SceneBox box_;
  int index_;
  QStringList lines_;
  OpStyle style_;
  int repeat_count_;
  std::optional<QColor> overlay_;
  bool highlighted_ = false;
  bool match_ = false;
  QString badge_;
};

class EdgeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 2 };
  // `label_size` is the shape label's painted size in the scene's small font.
  EdgeItem(const drawing::SceneEdge& edge, QString label, QSizeF label_size, QColor color);
  int type() const override { return Type; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  // An edge inside a fusion group: its traffic stays on chip.
  void set_internal(std::optional<QColor> group_color);
  // Takes the painted line and arrow head in `placer`: labels keep off every edge.
  void occupy_line(LabelPlacer& placer) const;
  // Puts the shape label at the first free spot along the edge (middle first, then
  // outwards to both ends; right then left of a vertical stretch, above then below a
  // horizontal one) and takes that spot in `placer`. Where edges converge (six branches
  // into one Concat) the full label often has no spot: the short form ("64×35×35", the
  // batch of 1 left out) is tried along the whole edge next; the label is hidden only
  // when neither fits anywhere (its tooltip keeps the shape). May be called again (the
  // hulls changed): it starts over from the middle.
  void place_label(LabelPlacer& placer);
  // The shorter text tried when the label has no room, and its painted size.
  void set_short_label(QString text, QSizeF size);
  // Where the label is painted; empty when the edge shows none.
  QRectF label_rect() const;
  const QString& label() const { return label_; }
  // The full shape text, whether shown or not.
  const QString& text() const { return text_; }
  // The drawn line, in scene coordinates (the item is not moved).
  const QPainterPath& path() const { return path_; }

 private:
  QPainterPath path_;
  QPolygonF arrow_;
  void show_label_at(std::optional<QPointF> at, const QString& text = {}, QSizeF size = {});
  // Free spots for a label of `size` along the edge, best first.
  std::vector<QPointF> label_spots(QSizeF size) const;
  // The point at fraction t of the line's length, and whether the line runs more
  // across than down there.
  std::pair<QPointF, bool> along(double t) const;

  QString text_;  // the shape, whether shown or not
  QString short_text_;
  QSizeF short_size_;
  QString label_;  // what is painted: text_, short_text_ or nothing
  QPointF middle_;
  QPointF label_pos_;
  QSizeF label_size_;
  QSizeF shown_size_;  // of label_
  QColor color_;
  std::optional<QColor> internal_;
  QPolygonF line_;              // path_ flattened
  std::vector<double> length_;  // running length at each point of line_
  QRectF line_bounds_;
  QRectF bounds_;
};

class HullItem : public QGraphicsPathItem {
 public:
  enum { Type = UserType + 3 };
  HullItem(int plan_group, const QPainterPath& outline, QColor color, double benefit);
  int type() const override { return Type; }
  int plan_group() const { return plan_group_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

 private:
  int plan_group_;
  QColor color_;
  double benefit_;  // 0..1: share of traffic removed
};

}  // namespace fx::views
