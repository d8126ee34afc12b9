// SPDX-License-Identifier: Apache-2.0
#include "views/op_style.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace fx::views {

OpStyle op_style(OpKind kind, bool dark) {
  // Hues by family: compute anchors blue, activations red, broadcast arithmetic
  // green, data movement brown, reductions purple, opaque grey.
  int hue = 0, sat = 0;
  switch (kind) {
    case OpKind::Anchor: hue = 212, sat = 150; break;
    case OpKind::Elementwise: hue = 2, sat = 140; break;
    case OpKind::Broadcast: hue = 130, sat = 110; break;
    case OpKind::Injective: hue = 32, sat = 110; break;
    case OpKind::Reduction: hue = 275, sat = 110; break;
    case OpKind::Opaque: hue = 0, sat = 0; break;
  }
  if (dark)
    return {QColor::fromHsv(hue, sat, 95), QColor::fromHsv(hue, sat, 170), QColor(235, 235, 235)};
  return {QColor::fromHsv(hue, sat / 3, 250), QColor::fromHsv(hue, sat, 150), QColor(25, 25, 25)};
}

OpStyle group_box_style(bool dark) {
  if (dark) return {QColor(58, 62, 70), QColor(130, 136, 150), QColor(230, 230, 230)};
  return {QColor(238, 241, 246), QColor(120, 130, 150), QColor(30, 30, 30)};
}

QColor status_color(GroupStatus status) {
  switch (status) {
    case GroupStatus::Candidate: return QColor(240, 170, 30);
    case GroupStatus::Accepted: return QColor(40, 170, 80);
    case GroupStatus::Rejected: return QColor(200, 60, 60);
  }
  return Qt::gray;
}

QColor heat_color(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  // Blue (cold) through yellow to red (hot), by hue.
  return QColor::fromHsvF(float((1.0 - t) * 0.62), 0.75f, 0.95f);
}

QString op_kind_label(OpKind kind) {
  return QString::fromLatin1(op_kind_name(kind));
}

namespace {
QString scaled(double v, const char* const* units, int count, double step) {
  int i = 0;
  while (std::abs(v) >= step && i + 1 < count) v /= step, ++i;
  return QString::number(v, 'f', i == 0 ? 0 : (std::abs(v) < 10 ? 2 : 1)) + QChar(u' ') +
         QString::fromUtf8(units[i]);
}
}  // namespace

QString format_bytes(double bytes) {
  // IEC, as the reports write them: one unit system on every screen and page.
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  return scaled(bytes, units, 5, 1024);
}

QString format_shape(const Shape& shape) {
  if (shape.rank_known() && shape.rank() == 0) return QObject::tr("scalar");
  return QString::fromStdString(shape.str());
}

QString group_label(const FusionGroup& g) {
  QString label = QString::fromStdString(g.pattern.empty() ? std::string("group") : g.pattern);
  if (!g.nodes.empty()) label += QObject::tr(" at %1").arg(QString::fromStdString(g.nodes.front()));
  return label;
}

QString format_flops(double flops) {
  static const char* const units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP"};
  return scaled(flops, units, 5, 1000);
}

QString format_seconds(double s) {
  if (std::abs(s) < 1e-3) return QString::number(s * 1e6, 'f', 1) + QStringLiteral(" µs");
  if (std::abs(s) < 1) return QString::number(s * 1e3, 'f', 2) + QStringLiteral(" ms");
  return QString::number(s, 'f', 2) + QStringLiteral(" s");
}

}  // namespace fx::views
