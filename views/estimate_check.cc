// SPDX-License-Identifier: Apache-2.0
#include "views/estimate_check.h"

#include <QObject>

#include <cmath>

#include "views/op_style.h"

namespace fx::views {

std::optional<SavingInterval> predicted_interval_us(const MeasuredGroup& g) {
  if (!std::isfinite(g.predicted_low_us) || !std::isfinite(g.predicted_high_us))
    return std::nullopt;
  return SavingInterval{g.predicted_low_us, g.predicted_high_us};
}

bool measured_outside_estimate(const MeasuredGroup& g) {
  if (!std::isfinite(g.predicted_saved_us) || !std::isfinite(g.measured_saved_us)) return false;
  if (const auto i = predicted_interval_us(g))
    return g.measured_saved_us < i->low_us || g.measured_saved_us > i->high_us;
  return (g.predicted_saved_us > 0 && g.measured_saved_us < 0) ||
         (g.predicted_saved_us < 0 && g.measured_saved_us > 0);
}

QString estimate_check_text(const MeasuredGroup& g) {
  if (!measured_outside_estimate(g)) return {};
  const QString predicted = format_seconds(g.predicted_saved_us * 1e-6);
  const QString measured = format_seconds(g.measured_saved_us * 1e-6);
  if (const auto i = predicted_interval_us(g))
    return QObject::tr("Measured saving %1 is outside the estimate's interval %2 … %3")
        .arg(measured, format_seconds(i->low_us * 1e-6), format_seconds(i->high_us * 1e-6));
  return QObject::tr("Estimated to save %1 but measured %2: the estimate got the sign wrong")
      .arg(predicted, measured);
}

}  // namespace fx::views
