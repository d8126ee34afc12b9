#include "views/timeline_view.h"

#include <QHelpEvent>
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

constexpr int kAxisHeight = 24;
constexpr int kSummaryHeight = 20;
constexpr int kLaneHeight = 34;
constexpr int kLaneGap = 8;

QColor kernel_color(const KernelEvent& e) {
  // Fused kernels by group (stable hues), the rest by op type, paler.
  if (e.group_id) return QColor::fromHsv((*e.group_id * 47) % 360, 150, 225);
  const std::string key = e.op_types.empty() ? e.name : e.op_types.front();
  return QColor::fromHsv(int(std::hash<std::string>{}(key) % 360), 60, 215);
}

QString format_us(double us) {
  return format_seconds(us * 1e-6);
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumHeight(kSummaryHeight + kAxisHeight + 2 * (kLaneHeight + kLaneGap) + 8);
  setCursor(Qt::OpenHandCursor);
}

void TimelineView::set_lane(const QString& title, const Timeline& timeline) {
  Lane lane{title, timeline.run_count() > 0 ? timeline.single_run(representative_run(timeline))
                                            : timeline};
  auto it =
      std::find_if(lanes_.begin(), lanes_.end(), [&](const Lane& l) { return l.title == title; });
  if (it != lanes_.end())
    *it = std::move(lane);
  else
    lanes_.push_back(std::move(lane));
  setMinimumHeight(kSummaryHeight + kAxisHeight + int(lanes_.size()) * (kLaneHeight + kLaneGap) +
                   8);
  fit();
}

void TimelineView::clear() {
  lanes_.clear();
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
  if (lanes_.empty()) return tr("No timeline: Tools > Profile, or File > Load Timeline");
  QStringList parts;
  for (const Lane& l : lanes_)
    parts << tr("%1: %2 in %3 kernels")
                 .arg(l.title, format_us(l.timeline.kernel_time_us(0)))
                 .arg(l.timeline.events.size());
  if (lanes_.size() >= 2) {
    const double before = lanes_.front().timeline.kernel_time_us(0);
    const double after = lanes_.back().timeline.kernel_time_us(0);
    if (after > 0) parts << tr("speed-up %1×").arg(before / after, 0, 'f', 2);
  }
  return parts.join(QStringLiteral("   ·   "));
}

int TimelineView::lane_top(int i) const {
  return kSummaryHeight + kAxisHeight + i * (kLaneHeight + kLaneGap) + 4;
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
    // Events of a run are in start order; pick the one containing the time, allowing a
    // pixel of slack for kernels narrower than a pixel.
    const double t = axis_.to_us(pos.x() - label_width_);
    const double slack = (axis_.end_us - axis_.start_us) / axis_.width_px;
    const KernelEvent* best = nullptr;
    for (const KernelEvent& e : lanes_[std::size_t(i)].timeline.events)
      if (e.start_us - slack <= t && t <= e.end_us() + slack) best = &e;
    return best;
  }
  return nullptr;
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  p.drawText(QRect(6, 0, width() - 12, kSummaryHeight), Qt::AlignVCenter | Qt::AlignLeft,
             summary());
  // Axis with ticks.
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
      p.setPen(c.darker(140));
      p.drawRect(r);
      if (r.width() > 40) {
        p.setPen(Qt::black);
        p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   p.fontMetrics().elidedText(QString::fromStdString(e.name), Qt::ElideRight,
                                              int(r.width()) - 5));
      }
    }
    p.setClipping(false);
  }
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  axis_.zoom(std::pow(1.25, steps), event->position().x() - label_width_);
  update();
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  drag_x_ = event->position().x();
  dragged_ = false;
  setCursor(Qt::ClosedHandCursor);
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  if (drag_x_ < 0) return;
  const double dx = event->position().x() - drag_x_;
  if (std::abs(dx) > 2) dragged_ = true;
  axis_.pan(dx);
  drag_x_ = event->position().x();
  update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  setCursor(Qt::OpenHandCursor);
  drag_x_ = -1;
  if (dragged_) return;
  if (const KernelEvent* e = event_at(event->position().toPoint())) {
    QStringList nodes;
    for (const auto& n : e->nodes) nodes << QString::fromStdString(n);
    emit kernel_clicked(nodes);
  }
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent*) {
  fit();
}

void TimelineView::resizeEvent(QResizeEvent*) {
  // Keep the visible time range; only the pixels per microsecond change.
  axis_.width_px = std::max(1, width() - label_width_);
}

bool TimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    if (const KernelEvent* e = event_at(help->pos())) {
      QString ops;
      for (const auto& o : e->op_types)
        ops += (ops.isEmpty() ? QString() : QStringLiteral("+")) + QString::fromStdString(o);
      QString text = QStringLiteral("<b>%1</b><br>%2<br>start %3, duration %4")
                         .arg(QString::fromStdString(e->name).toHtmlEscaped(), ops,
                              format_us(e->start_us), format_us(e->duration_us));
      if (e->bytes() > 0 && e->duration_us > 0)
        text += QStringLiteral("<br>%1 moved, %2 GB/s")
                    .arg(format_bytes(double(e->bytes())))
                    .arg(double(e->bytes()) / (e->duration_us * 1e3), 0, 'f', 2);
      if (e->group_id) text += QStringLiteral("<br>fusion group %1").arg(*e->group_id);
      QToolTip::showText(help->globalPos(), text, this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(event);
}

}  // namespace fx::views
