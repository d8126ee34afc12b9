// SPDX-License-Identifier: Apache-2.0
#pragma once
// Before/after kernel timelines as aligned lanes over one shared time axis (one
// representative run each): kernels coloured by fusion group (the same hue in both
// lanes and in the summary chart; kernels outside groups pale, by op type).
//   wheel: zoom around the cursor      drag: pan       double-click: fit
//   shift+drag, or drag on the axis: select a time range (its duration and each lane's
//   kernel time inside it are shown); Esc or a click clears it
//   hover: kernel, time, bytes, achieved GB/s      click: its nodes in the graph
// Between the first two lanes (before, after), flow arrows link each kernel to the
// fused kernel it became (profile/kernel_flows.h), as Perfetto draws flows.

#include <QWidget>

#include <optional>
#include <utility>
#include <vector>

#include "profile/kernel_flows.h"
#include "profile/timeline.h"
#include "views/time_axis.h"

namespace fx::views {

// The colour of fusion group `group` wherever the profile is shown.
QColor group_color(int group);

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);

  // Adds a lane (replacing one with the same title); shows its representative run.
  void set_lane(const QString& title, const Timeline& timeline);
  void clear();
  // Labels of the groups that KernelEvent::group_id indexes, for tooltips.
  void set_group_names(const QStringList& names) { group_names_ = names; }
  int lane_count() const { return int(lanes_.size()); }
  const Timeline& lane(int i) const { return lanes_[std::size_t(i)].timeline; }
  QString lane_title(int i) const { return lanes_[std::size_t(i)].title; }
  QString summary() const;
  const TimeAxis& axis() const { return axis_; }
  void fit();
  // The kernel drawn under a widget position, or nullptr.
  const KernelEvent* event_at(QPoint pos) const;
  // Top of lane i's bar in widget coordinates (for tests and hit testing).
  int lane_top(int i) const;
  int label_width() const { return label_width_; }
  // The links drawn from lane 0's kernels to lane 1's (empty with fewer lanes), and the
  // arrow of one of them in widget coordinates.
  const std::vector<KernelFlow>& flows() const { return flows_; }
  QLineF flow_line(const KernelFlow& f) const;
  int axis_top() const;
  // Time range selection, in microseconds (ordered).
  std::optional<std::pair<double, double>> range() const;
  void set_range(double a_us, double b_us);
  void clear_range();
  // "range 1.2 ms · before 0.9 ms in 12 kernels · after …", empty without a range.
  QString range_text() const;
  QString tooltip_text(const KernelEvent& e) const;

 signals:
  void kernel_clicked(const QStringList& nodes);
  // Right-click: the nodes of the kernel under the pointer (empty: none) and where.
  void kernel_context_menu(const QStringList& nodes, QPoint global_pos);
  void range_changed();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;  // tooltips

 private:
  struct Lane {
    QString title;
    Timeline timeline;  // one run, re-based to 0
  };
  enum class Drag { None, Pan, Range };
  QRectF bar_rect(int lane, const KernelEvent& e) const;
  QColor kernel_color(const KernelEvent& e) const;
  void paint_range(class QPainter& p);
  void paint_flows(class QPainter& p);
  int lane_gap() const;
  std::vector<Lane> lanes_;
  std::vector<KernelFlow> flows_;
  QStringList group_names_;
  TimeAxis axis_;
  int label_width_ = 110;
  Drag drag_ = Drag::None;
  double drag_x_ = -1;
  bool dragged_ = false;
  double range_a_ = 0, range_b_ = 0;
  bool has_range_ = false;
  const KernelEvent* hovered_ = nullptr;
};

}  // namespace fx::views
