// SPDX-License-Identifier: Apache-2.0
#include "views/saving_chart.h"

#include "views/estimate_check.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "views/op_style.h"
#include "views/timeline_view.h"

namespace fx::views {
namespace {

constexpr int kHeader = 38;  // title + legend
constexpr int kRowHeight = 26;
constexpr int kLabelWidth = 150;
constexpr int kValueWidth = 170;

// A measured bar for a group whose fused kernel was slower: the group's colour under
// a dark red hatch and outline, so it reads as "worse" whatever the group's colour.
void fill_slower(QPainter& p, const QRectF& r, const QColor& c) {
  p.fillRect(r, c);
  p.fillRect(r, QBrush(QColor(150, 20, 20), Qt::BDiagPattern));
  p.setPen(QPen(QColor(150, 20, 20), 1));
  p.setBrush(Qt::NoBrush);
  p.drawRect(r);
}

double finite_or_zero(double v) {
  return std::isnan(v) ? 0.0 : v;
}

QString us_text(double us) {
  return std::isnan(us) ? QStringLiteral("–") : format_seconds(us * 1e-6);
}

}  // namespace

SavingChart::SavingChart(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
}

void SavingChart::set_groups(const std::vector<MeasuredGroup>& groups,
                             const QString& estimate_profile) {
  rows_.clear();
  profile_ = estimate_profile;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const MeasuredGroup& g = groups[i];
    if (g.status == "excluded") continue;
    rows_.push_back({int(i), QString::fromStdString(g.id), QString::fromStdString(g.pattern),
                     g.predicted_saved_us, g.measured_saved_us, estimate_check_text(g)});
  }
  std::stable_sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) {
    return finite_or_zero(a.predicted) > finite_or_zero(b.predicted);
  });
  updateGeometry();
  update();
}

QSize SavingChart::sizeHint() const {
  return {520, kHeader + std::max(1, int(rows_.size())) * kRowHeight + 8};
}

QSize SavingChart::minimumSizeHint() const {
  return {kLabelWidth + kValueWidth + 120, sizeHint().height()};
}

int SavingChart::row_top(int i) const {
  return kHeader + i * kRowHeight;
}

int SavingChart::group_at(QPoint pos) const {
  const int i = (pos.y() - kHeader) / kRowHeight;
  if (pos.y() < kHeader || i < 0 || i >= int(rows_.size())) return -1;
  return rows_[std::size_t(i)].group;
}

void SavingChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  const QColor text = palette().text().color();
  p.setPen(text);
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.drawText(QRect(6, 2, width() - 12, 18), Qt::AlignLeft | Qt::AlignVCenter,
             tr("Time saved per group"));
  p.setFont(font());
  // Legend: outlined = predicted, filled = measured.
  const int ly = 22;
  p.setPen(QPen(text, 1));
  p.drawRect(6, ly + 3, 14, 8);
  const QString predicted =
      profile_.isEmpty() ? tr("predicted") : tr("predicted (estimate for %1)").arg(profile_);
  p.drawText(QRect(24, ly, 400, 14), Qt::AlignLeft | Qt::AlignVCenter, predicted);
  const int mx = 24 + p.fontMetrics().horizontalAdvance(predicted) + 16;
  p.fillRect(mx, ly + 3, 14, 8, palette().mid());
  const QString measured = tr("measured");
  p.drawText(QRect(mx + 18, ly, 300, 14), Qt::AlignLeft | Qt::AlignVCenter, measured);
  // Slower groups are hatched, not merely red: the group colours include reds.
  const int sx = mx + 18 + p.fontMetrics().horizontalAdvance(measured) + 16;
  fill_slower(p, QRectF(sx, ly + 3, 14, 8), palette().mid().color());
  p.setPen(QPen(text, 1));
  p.drawText(QRect(sx + 18, ly, 360, 14), Qt::AlignLeft | Qt::AlignVCenter,
             tr("hatched, left of zero: the fused kernel was slower"));
  if (rows_.empty()) {
    p.drawText(QRect(6, kHeader, width() - 12, kRowHeight), Qt::AlignLeft | Qt::AlignVCenter,
               tr("No fused groups measured"));
    return;
  }
  double hi = 0, lo = 0;
  for (const Row& r : rows_)
    for (double v : {r.predicted, r.measured})
      hi = std::max(hi, finite_or_zero(v)), lo = std::min(lo, finite_or_zero(v));
  if (hi - lo <= 0) hi = 1;
  const double x_left = kLabelWidth,
               x_right = std::max(x_left + 60.0, double(width() - kValueWidth));
  const auto to_x = [&](double us) { return x_left + (us - lo) / (hi - lo) * (x_right - x_left); };
  const double zero = to_x(0);
  const bool dark = palette().base().color().lightness() < 128;  // outlines must show
  p.setPen(palette().mid().color());
  p.drawLine(QPointF(zero, kHeader - 2), QPointF(zero, row_top(int(rows_.size()))));
  for (int i = 0; i < int(rows_.size()); ++i) {
    const Row& r = rows_[std::size_t(i)];
    const int y = row_top(i);
    const QColor c = group_color(r.group);
    p.fillRect(QRect(6, y + 8, 10, 10), c);
    p.setPen(text);
    p.drawText(QRect(20, y, kLabelWidth - 26, kRowHeight), Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(r.id, Qt::ElideRight, kLabelWidth - 26));
    const auto bar = [&](double v, int top, int h) {
      const double x = to_x(finite_or_zero(v));
      return QRectF(std::min(zero, x), top, std::max(1.0, std::abs(x - zero)), h);
    };
    if (!std::isnan(r.predicted)) {
      p.setPen(QPen(dark ? c.lighter(115) : c.darker(160), 1.5));
      p.setBrush(Qt::NoBrush);
      p.drawRect(bar(r.predicted, y + 3, 8));
    }
    if (!std::isnan(r.measured)) {
      if (r.measured < 0)
        fill_slower(p, bar(r.measured, y + 13, 9), c);
      else
        p.fillRect(bar(r.measured, y + 13, 9), c);
    }
    p.setPen(text);
    p.drawText(QRect(int(x_right) + 8, y, kValueWidth - 10, kRowHeight),
               Qt::AlignLeft | Qt::AlignVCenter,
               (r.flag.isEmpty() ? QString() : QStringLiteral("⚠ ")) +
                   tr("%1 / %2").arg(us_text(r.predicted), us_text(r.measured)));
  }
}

int SavingChart::flagged_count() const {
  return int(
      std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return !r.flag.isEmpty(); }));
}

void SavingChart::mouseReleaseEvent(QMouseEvent* event) {
  const int g = group_at(event->position().toPoint());
  if (g >= 0) emit group_clicked(g);
}

bool SavingChart::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int i = (help->pos().y() - kHeader) / kRowHeight;
    if (help->pos().y() >= kHeader && i >= 0 && i < int(rows_.size())) {
      const Row& r = rows_[std::size_t(i)];
      QToolTip::showText(
          help->globalPos(),
          tr("<b>%1</b> %2<br>predicted saving %3<br>measured saving %4")
                  .arg(r.id.toHtmlEscaped(), r.pattern.toHtmlEscaped(), us_text(r.predicted),
                       us_text(r.measured)) +
              (r.flag.isEmpty() ? QString() : QStringLiteral("<br>⚠ ") + r.flag.toHtmlEscaped()) +
              tr("<br><i>Right-click to reject</i>"),
          this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(event);
}

}  // namespace fx::views
