// SPDX-License-Identifier: Apache-2.0
#pragma once
// Does a measurement agree with its estimate? A group whose measured saving falls outside
// the interval its estimate gives is flagged wherever it is shown (the group table, the
// saving chart), so that a 280 µs prediction beside a 22 µs measurement never passes
// unremarked.
//
// predicted_interval_us() is the one place that knows where an estimate's interval comes
// from: the before/after result's predicted_low_us/high_us, which a calibrated profile
// gives (analysis/estimate_interval.h). Without them the check falls back to the one
// disagreement that needs no interval: the estimate said fusing saves time and the
// measurement says it costs time (or the reverse).

#include <QString>

#include <optional>

#include "report/profile_input.h"

namespace fx::views {

struct SavingInterval {
  double low_us = 0, high_us = 0;
};

// The interval of the group's predicted saving, in µs; nullopt when the result has none.
std::optional<SavingInterval> predicted_interval_us(const MeasuredGroup& group);

// True when both numbers are known and disagree as described above.
bool measured_outside_estimate(const MeasuredGroup& group);
// One sentence for a tooltip: what was predicted, what was measured, why flagged.
QString estimate_check_text(const MeasuredGroup& group);

}  // namespace fx::views
