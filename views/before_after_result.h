// SPDX-License-Identifier: Apache-2.0
#pragma once
// A before/after profile (`fxc profile --plan PLAN --json`, docs/before_after.md) as the
// views show it: the document as profile/before_after_document.h reads it, summed up as
// the report does (ProfileInput), plus the two kernel timelines with bytes, so that the
// timeline can give achieved GB/s.
//
// Each lane comes from, in order of preference: a Chrome trace file written by
// --trace-before/--trace-after, the "trace" embedded in the result, or the kernel rows
// laid end to end by their median times (then `laid_end_to_end` says so). Kernels of
// both lanes get `group_id` = the index in `input.groups` of the group whose nodes they
// cover (excluded groups are not coloured: they were not fused).

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cmath>

#include "profile/timeline.h"
#include "report/profile_input.h"

namespace fx::views {

struct BeforeAfterResult {
  ProfileInput input;
  Timeline before, after;  // one run each, starting at 0
  bool before_laid_end_to_end = false, after_laid_end_to_end = false;
  QStringList warnings;  // what was missing or unreadable, for the status bar
  // The equivalence check's tolerance ("tolerance": {"rtol", "atol"}), NaN when absent,
  // and the profiler's notes on a mismatch or on code generation, when it gave any.
  double rtol = NAN, atol = NAN;
  QString tolerance_mode;  // "scaled" (atol times the output's scale) or "absolute"
  QString mismatch, codegen_note;

  // Sum of the kernel times of a lane, in microseconds.
  static double kernel_us(const Timeline& t) { return t.kernel_time_us(0); }
  // Display name of group i: "fg-1234 (conv_bn_act)".
  QString group_label(int i) const;
};

// Parses `json` (the stdout of fxc or a file's content). `origin` names it in errors.
// Throws fx::Error (FileError naming origin and the cause) when the document is not
// JSON, or not a before/after result; missing optional keys only add warnings.
BeforeAfterResult read_before_after(const QByteArray& json, const QString& origin,
                                    const QString& trace_before = {},
                                    const QString& trace_after = {});
BeforeAfterResult read_before_after_file(const QString& path);

}  // namespace fx::views
