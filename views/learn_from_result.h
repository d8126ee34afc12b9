// SPDX-License-Identifier: Apache-2.0
#pragma once
// The GUI's side of "learn from each profile" (issue 21): the last before/after result
// folded into this CPU's calibration (calibration/learn.h, as `fxc calibrate --learn`),
// opt-in from the Tools menu. The user sees the estimate error on the result's groups
// before the update and after it.

#include <QByteArray>
#include <QString>

namespace fx::views {

struct LearnReport {
  bool ok = false;
  QString text;  // what happened: the error before and after, or why nothing was learned
};

// Writes `result_json` (as fxc printed it) into the learned folder, refits, saves the
// cached cpu-host profile. Never throws: a missing grid calibration or a bad result is
// a report with ok == false.
LearnReport learn_from_result(const QByteArray& result_json);

// "median error 84% before the update, 12% after (Spearman 0.41 -> 0.93, 14 groups)".
QString learn_summary(int groups, double before_err, double after_err, double before_rho,
                      double after_rho);

}  // namespace fx::views
