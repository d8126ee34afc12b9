// SPDX-License-Identifier: Apache-2.0
#include "analysis/default_rule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fx {

SavingInterval estimate_interval(const GroupEstimate& e, double relative_margin) {
  if (e.interval_known())  // calibrated residuals of the fused class (estimate_interval.h)
    return {e.saved_low_s, e.saved_high_s,
            fmt::format("{} with the calibration's residuals", e.saving_label())};
  const double saved = e.time_saved_s();
  const double margin = relative_margin * std::max(e.time_before_s, e.time_after_s);
  return {saved - margin, saved + margin,
          fmt::format("{} +- {:.0f}% of the larger kernel time", e.saving_label(),
                      relative_margin * 100)};
}

bool default_accepts(const SavingInterval& s) {
  return std::isfinite(s.low_s) && s.low_s > 0;
}

bool default_accepts(const GroupEstimate& e) {
  return e.known && default_accepts(estimate_interval(e));
}

std::string default_rejection(const GroupEstimate& e) {
  if (!e.known) return "the estimate cannot tell: a member has no static shape";
  const SavingInterval s = estimate_interval(e);
  if (default_accepts(s)) return {};
  return fmt::format(
      "saving not clearly positive: {:.2f} us estimated, {:.2f} .. {:.2f} us allowed ({})",
      e.time_saved_s() * 1e6, s.low_s * 1e6, s.high_s * 1e6, s.basis);
}

}  // namespace fx
