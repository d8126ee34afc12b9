// SPDX-License-Identifier: Apache-2.0
#pragma once
// The coordinate maths of the timeline, apart from any widget so that it has its own
// test: a visible time range mapped onto a pixel width, zoom around a point, pan, and
// "nice" tick positions (1, 2, 5 × 10^k microseconds).

#include <vector>

namespace fx::views {

struct TimeAxis {
  double start_us = 0;  // time at x = 0
  double end_us = 1;    // time at x = width
  double width_px = 1;

  double to_x(double us) const { return (us - start_us) / (end_us - start_us) * width_px; }
  double to_us(double x) const { return start_us + x / width_px * (end_us - start_us); }
  // Shows [0, total] with a small margin.
  void fit(double total_us);
  // Zooms by `factor` (> 1 zooms in) keeping the time under pixel x where it is.
  void zoom(double factor, double x);
  void pan(double dx_px);  // content follows the mouse: dragging right shows earlier times
  // Tick times inside the range, about `approx` of them.
  std::vector<double> ticks(int approx = 8) const;
};

}  // namespace fx::views
