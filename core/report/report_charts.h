// SPDX-License-Identifier: Apache-2.0
#pragma once
// The report's charts, built from ReportData (the writers only embed them):
//   savings_chart   estimated (and measured, when profiled) time saved per group
//   accuracy_chart  predicted vs measured saved time, y = x, rank correlation
//   timeline_chart  before/after kernels on a shared time axis, coloured by group

#include <map>
#include <optional>
#include <string>

#include "report/report_data.h"
#include "report/svg_chart.h"

namespace fx {

// Label of the estimates: "estimated on cpu-host".
std::string estimate_label(const ReportData& d);
// Which models predicted the groups' time saved, with how many groups each: "time saved
// by the saving model (class conv, ...) for 20 groups, by the difference of kernel times
// for 1 group".
std::string saving_sources_label(const ReportData& d);
// Label of the measurements: "measured, median of 20 runs on cpu: ..., 2 threads".
std::string measurement_label(const ReportData& d);

// Group id -> colour, in the order groups appear (measured groups first, then accepted).
std::map<std::string, std::string> group_colors(const ReportData& d);

BarChart savings_chart(const ReportData& d);
// Only with a before/after profile holding at least one measured group.
std::optional<ScatterChart> accuracy_chart(const ReportData& d);
// Only with a profile; one lane for a single run, two for before/after.
std::optional<TimelineStrip> timeline_chart(const ReportData& d);

}  // namespace fx
