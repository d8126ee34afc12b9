// SPDX-License-Identifier: Apache-2.0
#include "views/graph_view.h"

#include <QGraphicsItem>

#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>

#include <cmath>

#include "views/graph_scene.h"
#include "views/op_style.h"

namespace fx::views {

GraphView::GraphView(GraphScene* scene, QWidget* parent)
    : QGraphicsView(scene, parent), scene_(scene) {
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  // Items are opaque boxes on a plain background: minimal updates are cheapest.
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setFocusPolicy(Qt::StrongFocus);
  connect(scene, &QGraphicsScene::sceneRectChanged, this, [this] { painted_graph_ = false; });
}

double GraphView::zoom() const {
  return transform().m11();
}

void GraphView::fit() {
  if (!scene()) return;
  fitInView(sceneRect(), Qt::KeepAspectRatio);
  // Never blow a small graph up beyond 1.5x: huge boxes read worse than a margin.
  if (zoom() > 1.5) setTransform(QTransform::fromScale(1.5, 1.5));
  emit viewport_changed();
}

void GraphView::show_start() {
  fit();
  if (zoom() >= 0.6) return;
  setTransform(QTransform::fromScale(0.9, 0.9));
  const QRectF r = sceneRect();
  const double half_h = viewport()->height() / 2.0 / 0.9;
  // The top of the graph, where it starts: centred on what is drawn there, not on the
  // middle of the scene (a wide graph's first ops need not sit in the middle).
  QRectF top;
  if (scene())
    for (QGraphicsItem* it : scene()->items(QRectF(r.left(), r.top(), r.width(), 2 * half_h)))
      top |= it->sceneBoundingRect();
  centerOn(top.isNull() ? r.center().x() : top.center().x(), r.top() + half_h);
  emit viewport_changed();
}

void GraphView::zoom_by(double factor) {
  const double z = zoom() * factor;
  if (z < 0.01 || z > 8) return;
  scale(factor, factor);
  emit viewport_changed();
}

void GraphView::zoom_reset() {
  setTransform(QTransform());
  emit viewport_changed();
}

void GraphView::reveal(const QRectF& rect) {
  if (zoom() < 0.7) setTransform(QTransform::fromScale(0.9, 0.9));
  centerOn(rect.center());
  emit viewport_changed();
}

void GraphView::wheelEvent(QWheelEvent* event) {
  if (event->modifiers() & Qt::ShiftModifier) {  // shift+wheel scrolls sideways
    QGraphicsView::wheelEvent(event);
    return;
  }
  const double steps = event->angleDelta().y() / 120.0;
  zoom_by(std::pow(1.2, steps));
  event->accept();
}

void GraphView::paintEvent(QPaintEvent* event) {
  QGraphicsView::paintEvent(event);
  if (!painted_graph_ && scene_->box_count() > 0) {
    painted_graph_ = true;
    emit first_graph_painted();
  }
  emit painted();
}

void GraphView::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  emit viewport_changed();
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  emit viewport_changed();
}

void GraphView::set_empty_note(const QString& note) {
  empty_note_ = note;
  viewport()->update();
}

void GraphView::drawForeground(QPainter* painter, const QRectF&) {
  if (scene_->box_count() == 0 && !empty_note_.isEmpty()) {
    painter->save();
    painter->resetTransform();
    painter->setPen(palette().color(QPalette::PlaceholderText));
    const QRect area = viewport()->rect().adjusted(40, 40, -40, -40);
    painter->drawText(area, Qt::AlignCenter | Qt::TextWordWrap, empty_note_);
    painter->restore();
    return;
  }
  if (scene_->overlay() == Overlay::None || scene_->overlay_max() <= 0) return;
  painter->save();
  painter->resetTransform();
  draw_legend(painter);
  painter->restore();
}

void GraphView::draw_legend(QPainter* p) {
  const bool bytes = scene_->overlay() == Overlay::Bytes;
  const QRect box(viewport()->width() - 230, viewport()->height() - 62, 218, 50);
  p->setRenderHint(QPainter::Antialiasing);
  p->setPen(QColor(120, 120, 120));
  p->setBrush(QColor(255, 255, 255, 225));
  p->drawRoundedRect(box, 6, 6);
  QLinearGradient grad(box.left() + 10, 0, box.right() - 10, 0);
  for (int i = 0; i <= 10; ++i) grad.setColorAt(i / 10.0, heat_color(i / 10.0));
  p->setPen(Qt::NoPen);
  p->setBrush(grad);
  p->drawRect(box.left() + 10, box.top() + 24, box.width() - 20, 12);
  p->setPen(QColor(30, 30, 30));
  const double max = scene_->overlay_max();
  p->drawText(box.adjusted(10, 4, -10, 0), Qt::AlignLeft | Qt::AlignTop,
              bytes ? tr("Bytes moved (log)") : tr("FLOPs (log)"));
  p->drawText(box.adjusted(10, 4, -10, 0), Qt::AlignRight | Qt::AlignTop,
              bytes ? format_bytes(max) : format_flops(max));
}

Minimap::Minimap(GraphScene* scene, GraphView* main, QWidget* parent)
    : QGraphicsView(scene, parent), main_(main) {
  setInteractive(false);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setRenderHints(QPainter::Antialiasing);
  setMinimumSize(120, 120);
  connect(main, &GraphView::viewport_changed, viewport(), qOverload<>(&QWidget::update));
  connect(scene, &QGraphicsScene::sceneRectChanged, this, &Minimap::refit);
}

void Minimap::refit() {
  if (scene()) fitInView(sceneRect(), Qt::KeepAspectRatio);
}

void Minimap::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  refit();
}

void Minimap::drawForeground(QPainter* p, const QRectF&) {
  const QRectF visible = main_->mapToScene(main_->viewport()->rect()).boundingRect();
  QColor c(30, 120, 255);
  p->setPen(QPen(c, 0));  // cosmetic: one pixel whatever the scale
  c.setAlpha(40);
  p->setBrush(c);
  p->drawRect(visible);
}

void Minimap::mousePressEvent(QMouseEvent* event) {
  main_->centerOn(mapToScene(event->position().toPoint()));
}

void Minimap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton) main_->centerOn(mapToScene(event->position().toPoint()));
}

}  // namespace fx::views
