// SPDX-License-Identifier: Apache-2.0
#include "views/timeline_view.h"

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <functional>

#include "views/op_style.h"

namespace fx::views {
namespace {

constexpr int kSummaryHeight = 20;
constexpr int kAxisHeight = 24;
constexpr int kLaneHeight = 34;
constexpr int kLaneGap = 8;
constexpr int kFlowGap = 30;  // between the before and after lanes, room for the arrows

QString format_us(double us) {
  return format_seconds(us * 1e-6);
}

// Kernel time of a lane inside [a, b] (partly covered kernels count their part).
std::pair<double, int> busy_in(const Timeline& t, double a, double b) {
  double us = 0;
  int n = 0;
  for (const KernelEvent& e : t.events) {
    const double overlap = std::min(b, e.end_us()) - std::max(a, e.start_us);
    if (overlap > 0 || (e.duration_us == 0 && a <= e.start_us && e.start_us <= b))
      us += std::max(0.0, overlap), ++n;
  }
  return {us, n};
}

}  // namespace

QColor group_color(int group) {
  // Golden-angle hues: neighbouring group indices get well separated colours.
  return QColor::fromHsv(int(std::lround(group * 137.508)) % 360, 160, 225);
}

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumHeight(kSummaryHeight + kAxisHeight + 2 * (kLaneHeight + kLaneGap) + 8);
  setCursor(Qt::OpenHandCursor);
}

QColor TimelineView::kernel_color(const KernelEvent& e) const {
  // Fused kernels and their members by group, the rest by op type, pale.
  if (e.group_id) return group_color(*e.group_id);
  const std::string key = e.op_types.empty() ? e.name : e.op_types.front();
  return QColor::fromHsv(int(std::hash<std::string>{}(key) % 360), 35, 215);
}

void TimelineView::set_lane(const QString& title, const Timeline& timeline) {
  hovered_ = nullptr;
  Lane lane{title, timeline.run_count() > 1 ? timeline.single_run(representative_run(timeline))
                                            : timeline};
  auto it =
      std::find_if(lanes_.begin(), lanes_.end(), [&](const Lane& l) { return l.title == title; });
  if (it != lanes_.end())
    *it = std::move(lane);
  else
    lanes_.push_back(std::move(lane));
  flows_ = lanes_.size() >= 2 ? kernel_flows(lanes_[0].timeline, lanes_[1].timeline)
                              : std::vector<KernelFlow>{};
  setMinimumHeight(kSummaryHeight + kAxisHeight + int(lanes_.size()) * (kLaneHeight + lane_gap()) +
                   8);
  clear_range();
  fit();
}

void TimelineView::clear() {
  hovered_ = nullptr;
  lanes_.clear();
  flows_.clear();
  group_names_.clear();
  clear_range();
  axis_ = TimeAxis{};  // the previous model's scale must not hang over an empty pane
  update();
}

void TimelineView::fit() {
  double total = 0;
  for (const Lane& l : lanes_)
    for (const KernelEvent& e : l.timeline.events) total = std::max(total, e.end_us());
  axis_.width_px = std::max(1, width() - label_width_);
  axis_.fit(total);
  update();
}

QString TimelineView::summary() const {
  if (lanes_.empty())
    return tr(
        "No timeline: Tools > Profile Before/After (F9), or Tools > Load Before/After Result");
  QStringList parts;
  for (const Lane& l : lanes_)
    parts << tr("%1: %2 in %3 %4")
                 .arg(l.title, format_us(l.timeline.kernel_time_us(0)))
                 .arg(l.timeline.events.size())
                 .arg(l.timeline.events.size() == 1 ? tr("kernel") : tr("kernels"));
  // No ratio of these sums here: the one speed-up on screen is the profile's measured
  // wall-time figure, beside this pane.
  return parts.join(QStringLiteral("   ·   "));
}

int TimelineView::axis_top() const {
  return kSummaryHeight;
}

int TimelineView::lane_gap() const {
  return flows_.empty() ? kLaneGap : kFlowGap;
}

int TimelineView::lane_top(int i) const {
  return kSummaryHeight + kAxisHeight + i * (kLaneHeight + lane_gap()) + 4;
}

QLineF TimelineView::flow_line(const KernelFlow& f) const {
  const QRectF from = bar_rect(0, lanes_[0].timeline.events[f.before]);
  const QRectF to = bar_rect(1, lanes_[1].timeline.events[f.after]);
  return {QPointF(from.center().x(), from.bottom()), QPointF(to.center().x(), to.top())};
}

void TimelineView::paint_flows(QPainter& p) {
  if (flows_.empty()) return;
  p.save();
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setClipRect(QRect(label_width_, lane_top(0), width() - label_width_,
                      lane_top(1) + kLaneHeight - lane_top(0)));
  for (const KernelFlow& f : flows_) {
    const QLineF line = flow_line(f);
    if (std::max(line.x1(), line.x2()) < label_width_ || std::min(line.x1(), line.x2()) > width())
      continue;
    const KernelEvent& after = lanes_[1].timeline.events[f.after];
    QColor c = kernel_color(after).darker(160);
    const bool hot = hovered_ == &after || hovered_ == &lanes_[0].timeline.events[f.before];
    c.setAlpha(hot ? 255 : 150);
    p.setPen(QPen(c, hot ? 2.0 : 1.0));
    p.drawLine(line);
    // The head, at the fused kernel.
    const double a = std::atan2(line.dy(), line.dx());
    const QPointF tip = line.p2();
    const QPointF l = tip - QPointF(std::cos(a - 0.4) * 6, std::sin(a - 0.4) * 6);
    const QPointF r = tip - QPointF(std::cos(a + 0.4) * 6, std::sin(a + 0.4) * 6);
    p.setBrush(c);
    p.drawPolygon(QPolygonF({tip, l, r}));
  }
  p.restore();
}

QRectF TimelineView::bar_rect(int lane, const KernelEvent& e) const {
  const double x0 = label_width_ + axis_.to_x(e.start_us);
  const double x1 = label_width_ + axis_.to_x(e.end_us());
  return QRectF(x0, lane_top(lane), std::max(1.0, x1 - x0), kLaneHeight);
}

const KernelEvent* TimelineView::event_at(QPoint pos) const {
  if (pos.x() < label_width_) return nullptr;
  for (int i = 0; i < int(lanes_.size()); ++i) {
    if (pos.y() < lane_top(i) || pos.y() >= lane_top(i) + kLaneHeight) continue;
    // Prefer the kernel containing the time; else one within a pixel (kernels narrower
    // than a pixel are still hoverable).
    const double t = axis_.to_us(pos.x() - label_width_);
    const double slack = (axis_.end_us - axis_.start_us) / axis_.width_px;
    const KernelEvent* near = nullptr;
    for (const KernelEvent& e : lanes_[std::size_t(i)].timeline.events) {
      if (e.start_us <= t && t < e.end_us()) return &e;
      if (!near && e.start_us - slack <= t && t <= e.end_us() + slack) near = &e;
    }
    return near;
  }
  return nullptr;
}

std::optional<std::pair<double, double>> TimelineView::range() const {
  if (!has_range_) return std::nullopt;
  return std::pair{std::min(range_a_, range_b_), std::max(range_a_, range_b_)};
}

void TimelineView::set_range(double a_us, double b_us) {
  range_a_ = a_us, range_b_ = b_us, has_range_ = true;
  update();
  emit range_changed();
}

void TimelineView::clear_range() {
  if (!has_range_) return;
  has_range_ = false;
  update();
  emit range_changed();
}

QString TimelineView::range_text() const {
  const auto r = range();
  if (!r) return {};
  QStringList parts{tr("range %1").arg(format_us(r->second - r->first))};
  for (const Lane& l : lanes_) {
    const auto [us, n] = busy_in(l.timeline, r->first, r->second);
    parts << tr("%1 %2 in %3 kernels").arg(l.title, format_us(us)).arg(n);
  }
  return parts.join(QStringLiteral(" · "));
}

QString TimelineView::tooltip_text(const KernelEvent& e) const {
  QString ops;
  for (const auto& o : e.op_types)
    ops += (ops.isEmpty() ? QString() : QStringLiteral(" + ")) + QString::fromStdString(o);
  QString text = QStringLiteral("<b>%1</b>").arg(QString::fromStdString(e.name).toHtmlEscaped());
  if (!ops.isEmpty()) text += QStringLiteral("<br>") + ops.toHtmlEscaped();
  if (e.nodes.size() > 1) text += tr("<br>%1 nodes").arg(e.nodes.size());
  text += tr("<br>start %1, duration %2").arg(format_us(e.start_us), format_us(e.duration_us));
  if (e.bytes() > 0) {
    text += tr("<br>%1 moved (%2 read, %3 written)")
                .arg(format_bytes(double(e.bytes())), format_bytes(double(e.bytes_read)),
                     format_bytes(double(e.bytes_written)));
    if (e.duration_us > 0)
      text += tr("<br>achieved %1 GB/s").arg(double(e.bytes()) / (e.duration_us * 1e3), 0, 'f', 2);
  }
  if (e.group_id) {
    const int g = *e.group_id;
    const QString name = g >= 0 && g < group_names_.size() ? group_names_[g] : QString::number(g);
    text += tr("<br>fusion group %1").arg(name.toHtmlEscaped());
  }
  return text;
}

void TimelineView::paint_range(QPainter& p) {
  const auto r = range();
  if (!r) return;
  const double x0 = label_width_ + axis_.to_x(r->first);
  const double x1 = label_width_ + axis_.to_x(r->second);
  const QRectF area(x0, kSummaryHeight, std::max(1.0, x1 - x0), height() - kSummaryHeight);
  QColor fill = palette().highlight().color();
  fill.setAlpha(50);
  p.fillRect(area, fill);
  p.setPen(palette().highlight().color());
  p.drawLine(QPointF(x0, area.top()), QPointF(x0, area.bottom()));
  p.drawLine(QPointF(x1, area.top()), QPointF(x1, area.bottom()));
  const QString label = format_us(r->second - r->first);
  const int w = p.fontMetrics().horizontalAdvance(label) + 10;
  const QRectF box((x0 + x1) / 2 - w / 2.0, kSummaryHeight + 3, w, kAxisHeight - 6);
  p.fillRect(box, palette().highlight());
  p.setPen(palette().highlightedText().color());
  p.drawText(box, Qt::AlignCenter, label);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  const QString top = has_range_ ? range_text() : summary();
  p.drawText(QRect(6, 0, width() - 12, kSummaryHeight), Qt::AlignVCenter | Qt::AlignLeft,
             p.fontMetrics().elidedText(top, Qt::ElideRight, width() - 12));
  if (lanes_.empty()) return;  // the summary line says why and what to do
  // Axis with ticks; tick lines run down through the lanes.
  const QRect axis(label_width_, kSummaryHeight, width() - label_width_, kAxisHeight);
  p.setPen(palette().mid().color());
  p.drawLine(axis.bottomLeft(), axis.bottomRight());
  for (double t : axis_.ticks(std::max(2, axis.width() / 110))) {
    const int x = label_width_ + int(axis_.to_x(t));
    p.setPen(palette().mid().color());
    p.drawLine(x, axis.bottom() - 5, x, height());
    p.setPen(palette().text().color());
    p.drawText(QRect(x + 3, axis.top(), 100, axis.height()), Qt::AlignVCenter | Qt::AlignLeft,
               format_us(t));
  }
  p.setRenderHint(QPainter::Antialiasing, false);
  for (int i = 0; i < int(lanes_.size()); ++i) {
    const Lane& lane = lanes_[std::size_t(i)];
    p.setPen(palette().text().color());
    p.drawText(QRect(6, lane_top(i), label_width_ - 10, kLaneHeight),
               Qt::AlignVCenter | Qt::AlignLeft, lane.title);
    p.setClipRect(QRect(label_width_, lane_top(i), width() - label_width_, kLaneHeight));
    for (const KernelEvent& e : lane.timeline.events) {
      const QRectF r = bar_rect(i, e);
      if (r.right() < label_width_ || r.left() > width()) continue;
      const QColor c = kernel_color(e);
      p.fillRect(r, c);
      p.setPen(c.darker(150));
      p.drawRect(r);
      if (r.width() > 40) {
        p.setPen(Qt::black);  // bars are light in both palettes
        p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   p.fontMetrics().elidedText(QString::fromStdString(e.name), Qt::ElideRight,
                                              int(r.width()) - 5));
      }
    }
    if (hovered_)
      for (const KernelEvent& e : lane.timeline.events)
        if (&e == hovered_) {
          p.setPen(QPen(palette().text().color(), 2));
          p.drawRect(bar_rect(i, e).adjusted(1, 1, -1, -1));
        }
    p.setClipping(false);
  }
  paint_flows(p);
  paint_range(p);
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  axis_.zoom(std::pow(1.25, steps), event->position().x() - label_width_);
  update();
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  drag_x_ = event->position().x();
  dragged_ = false;
  const bool on_axis = event->position().y() < kSummaryHeight + kAxisHeight;
  if (event->modifiers() & Qt::ShiftModifier || on_axis) {
    drag_ = Drag::Range;
    const double t = axis_.to_us(drag_x_ - label_width_);
    range_a_ = range_b_ = t;
    setCursor(Qt::IBeamCursor);
  } else {
    drag_ = Drag::Pan;
    setCursor(Qt::ClosedHandCursor);
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (drag_ == Drag::None) {
    const KernelEvent* e = event_at(event->position().toPoint());
    if (e != hovered_) {
      hovered_ = e;
      update();
    }
    return;
  }
  const double dx = event->position().x() - drag_x_;
  if (std::abs(dx) > 2) dragged_ = true;
  if (drag_ == Drag::Range) {
    if (dragged_) set_range(range_a_, axis_.to_us(event->position().x() - label_width_));
    return;
  }
  axis_.pan(dx);
  drag_x_ = event->position().x();
  update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  const Drag was = drag_;
  drag_ = Drag::None;
  setCursor(Qt::OpenHandCursor);
  drag_x_ = -1;
  if (was == Drag::None || dragged_) return;
  clear_range();  // a plain click drops the range
  if (was == Drag::Range) return;
  if (const KernelEvent* e = event_at(event->position().toPoint())) {
    QStringList nodes;
    for (const auto& n : e->nodes) nodes << QString::fromStdString(n);
    emit kernel_clicked(nodes);
  }
}

void TimelineView::contextMenuEvent(QContextMenuEvent* event) {
  QStringList nodes;
  if (const KernelEvent* e = event_at(event->pos()))
    for (const auto& n : e->nodes) nodes << QString::fromStdString(n);
  emit kernel_context_menu(nodes, event->globalPos());
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent*) {
  fit();
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Escape: clear_range(); break;
    case Qt::Key_Plus:
    case Qt::Key_Equal: axis_.zoom(1.5, axis_.width_px / 2), update(); break;
    case Qt::Key_Minus: axis_.zoom(1 / 1.5, axis_.width_px / 2), update(); break;
    case Qt::Key_0: fit(); break;
    default: QWidget::keyPressEvent(event);
  }
}

void TimelineView::leaveEvent(QEvent*) {
  if (hovered_) hovered_ = nullptr, update();
}

void TimelineView::resizeEvent(QResizeEvent*) {
  // Keep the visible time range; only the pixels per microsecond change.
  axis_.width_px = std::max(1, width() - label_width_);
}

bool TimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    if (const KernelEvent* e = event_at(help->pos()))
      QToolTip::showText(help->globalPos(), tooltip_text(*e), this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

}  // namespace fx::views
