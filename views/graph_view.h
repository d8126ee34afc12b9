// SPDX-License-Identifier: Apache-2.0
#pragma once
// The zoomable, pannable view on a GraphScene: wheel zooms around the cursor, drag
// pans, fit shows everything; draws the overlay legend in a corner; and tells when
// it first painted a graph (for the start-up figure).

#include <QGraphicsView>
#include <QString>

namespace fx::views {

class GraphScene;

class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphView(GraphScene* scene, QWidget* parent = nullptr);

  void fit();
  // The first view of a model: everything when it fits readably, else the top of
  // the graph at a readable zoom (where the inputs are), like Netron.
  void show_start();
  void zoom_by(double factor);
  void zoom_reset();
  // Centres on a rectangle of the scene, zooming in enough to read it.
  void reveal(const QRectF& rect);
  double zoom() const;
  // What an empty view says (no model yet, or why the last one did not open), painted
  // in its middle while the scene has no boxes.
  void set_empty_note(const QString& note);
  const QString& empty_note() const { return empty_note_; }

 signals:
  void first_graph_painted();
  void painted();  // after every paint of the viewport (for --measure --expand)
  void viewport_changed();

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void scrollContentsBy(int dx, int dy) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void draw_legend(QPainter* painter);
  GraphScene* scene_;
  QString empty_note_;
  bool painted_graph_ = false;
};

// A small overview of the whole scene with the main view's visible area outlined;
// click or drag in it to move the main view there.
class Minimap : public QGraphicsView {
  Q_OBJECT
 public:
  Minimap(GraphScene* scene, GraphView* main, QWidget* parent = nullptr);
  void refit();

 protected:
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent*) override {}

 private:
  GraphView* main_;
};

}  // namespace fx::views
