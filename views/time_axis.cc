// SPDX-License-Identifier: Apache-2.0
#include "views/time_axis.h"

#include <algorithm>
#include <cmath>

namespace fx::views {

void TimeAxis::fit(double total_us) {
  const double total = std::max(total_us, 1e-3);
  start_us = -0.01 * total;
  end_us = total * 1.01;
}

void TimeAxis::zoom(double factor, double x) {
  const double anchor = to_us(x);
  const double span = std::max((end_us - start_us) / factor, 1e-3);  // 1 ns at most
  start_us = anchor - x / width_px * span;
  end_us = start_us + span;
}

void TimeAxis::pan(double dx_px) {
  const double dt = dx_px / width_px * (end_us - start_us);
  start_us -= dt;
  end_us -= dt;
}

std::vector<double> TimeAxis::ticks(int approx) const {
  std::vector<double> out;
  const double span = end_us - start_us;
  if (span <= 0 || approx <= 0) return out;
  const double raw = span / approx;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double t = std::ceil(start_us / step) * step; t <= end_us + 1e-9; t += step)
    out.push_back(t);
  return out;
}

}  // namespace fx::views
