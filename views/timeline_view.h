#pragma once
// Before/after kernel timelines as aligned lanes over one shared time axis (one
// representative run each): kernels coloured by fusion group (or op type), wheel to
// zoom around the cursor, drag to pan, double-click to fit, hover for time, bytes and
// achieved GB/s, click to find the kernel's nodes in the graph. A summary line gives
// the total kernel time, kernel count and the speed-up of the last lane over the first.

#include <QWidget>

#include <vector>

#include "profile/timeline.h"
#include "views/time_axis.h"

namespace fx::views {

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);

  // Adds a lane (replacing one with the same title); shows its representative run.
  void set_lane(const QString& title, const Timeline& timeline);
  void clear();
  int lane_count() const { return int(lanes_.size()); }
  const Timeline& lane(int i) const { return lanes_[std::size_t(i)].timeline; }
  QString summary() const;
  const TimeAxis& axis() const { return axis_; }
  void fit();
  // The kernel drawn under a widget position, or nullptr.
  const KernelEvent* event_at(QPoint pos) const;
  // Top of lane i's bar in widget coordinates (for tests and hit testing).
  int lane_top(int i) const;

 signals:
  void kernel_clicked(const QStringList& nodes);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;  // tooltips

 private:
  struct Lane {
    QString title;
    Timeline timeline;  // one run, re-based to 0
  };
  QRectF bar_rect(int lane, const KernelEvent& e) const;
  std::vector<Lane> lanes_;
  TimeAxis axis_;
  int label_width_ = 110;
  double drag_x_ = -1;
  bool dragged_ = false;
};

}  // namespace fx::views
