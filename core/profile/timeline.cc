// SPDX-License-Identifier: Apache-2.0
#include "profile/timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace fx {

namespace {
// A kernel run inside a control-flow body (runtime/nested_steps.h): its time is
// already part of the enclosing node's event, so totals and the kernel table leave
// it out; timelines and traces show it nested under that event.
bool nested(const KernelEvent& e) {
  return e.args.count("depth") != 0;
}
}  // namespace

int Timeline::run_count() const {
  int n = 0;
  for (const auto& e : events) n = std::max(n, e.run + 1);
  return n;
}

double Timeline::kernel_time_us(int run) const {
  double t = 0;
  for (const auto& e : events)
    if (e.run == run && !nested(e)) t += e.duration_us;
  return t;
}

double Timeline::span_us(int run) const {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& e : events) {
    if (e.run != run) continue;
    lo = std::min(lo, e.start_us);
    hi = std::max(hi, e.end_us());
  }
  return hi > lo ? hi - lo : 0.0;
}

Timeline Timeline::single_run(int run) const {
  Timeline t;
  t.source = source;
  t.device = device;
  t.lane_names = lane_names;
  double lo = std::numeric_limits<double>::infinity();
  for (const auto& e : events)
    if (e.run == run) {
      t.events.push_back(e);
      lo = std::min(lo, e.start_us);
    }
  std::stable_sort(t.events.begin(), t.events.end(),
                   [](const auto& a, const auto& b) { return a.start_us < b.start_us; });
  for (auto& e : t.events) {
    e.start_us -= lo;
    e.run = 0;
  }
  return t;
}

double KernelStats::gb_per_s() const {
  // bytes / us = 1e6 bytes/s; / 1e9 for GB/s.
  return median_us > 0 ? static_cast<double>(bytes()) / median_us / 1e3 : 0.0;
}

double KernelStats::gflop_per_s() const {
  return median_us > 0 ? static_cast<double>(flops) / median_us / 1e3 : 0.0;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  double m = values[mid];
  if (values.size() % 2 == 0) {
    double below =
        *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
    m = (m + below) / 2;
  }
  return m;
}

std::vector<KernelStats> aggregate_kernels(const Timeline& timeline) {
  const int runs = std::max(1, timeline.run_count());
  std::vector<KernelStats> rows;
  std::vector<std::vector<double>> per_run;  // rows[i] -> time in each run
  std::vector<std::vector<int>> calls_per_run;
  std::vector<std::vector<int64_t>> read_per_run, written_per_run, flops_per_run;
  std::unordered_map<std::string, std::size_t> index;

  for (const auto& e : timeline.events) {
    if (nested(e)) continue;
    auto [it, fresh] = index.try_emplace(e.name, rows.size());
    if (fresh) {
      KernelStats s;
      s.name = e.name;
      s.op_types = e.op_types;
      s.nodes = e.nodes;
      s.group_id = e.group_id;
      rows.push_back(std::move(s));
      per_run.emplace_back(runs, 0.0);
      calls_per_run.emplace_back(runs, 0);
      read_per_run.emplace_back(runs, 0);
      written_per_run.emplace_back(runs, 0);
      flops_per_run.emplace_back(runs, 0);
    }
    const std::size_t i = it->second;
    const auto r = static_cast<std::size_t>(std::clamp(e.run, 0, runs - 1));
    per_run[i][r] += e.duration_us;
    calls_per_run[i][r] += 1;
    read_per_run[i][r] += e.bytes_read;
    written_per_run[i][r] += e.bytes_written;
    flops_per_run[i][r] += e.flops;
  }

  double total = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto& s = rows[i];
    s.median_us = median(per_run[i]);
    s.min_us = *std::min_element(per_run[i].begin(), per_run[i].end());
    s.max_us = *std::max_element(per_run[i].begin(), per_run[i].end());
    {
      std::vector<double> v = per_run[i];
      std::sort(v.begin(), v.end());
      auto at = [&](double q) {  // linear interpolation between order statistics
        const double x = q * double(v.size() - 1);
        const auto lo = static_cast<std::size_t>(x);
        const std::size_t hi = std::min(lo + 1, v.size() - 1);
        return v[lo] + (x - double(lo)) * (v[hi] - v[lo]);
      };
      s.q1_us = at(0.25), s.q3_us = at(0.75);
    }
    // Calls and bytes are those of the busiest run: every run of a static graph
    // does the same work, and a kernel missing from a run should not halve them.
    s.calls = *std::max_element(calls_per_run[i].begin(), calls_per_run[i].end());
    s.bytes_read = *std::max_element(read_per_run[i].begin(), read_per_run[i].end());
    s.bytes_written = *std::max_element(written_per_run[i].begin(), written_per_run[i].end());
    s.flops = *std::max_element(flops_per_run[i].begin(), flops_per_run[i].end());
    total += s.median_us;
  }
  for (auto& s : rows) s.share = total > 0 ? s.median_us / total : 0.0;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.median_us > b.median_us; });
  return rows;
}

double median_run_us(const Timeline& timeline) {
  std::vector<double> totals;
  for (int r = 0; r < timeline.run_count(); ++r) totals.push_back(timeline.kernel_time_us(r));
  return median(std::move(totals));
}

int representative_run(const Timeline& timeline) {
  const double m = median_run_us(timeline);
  int best = 0;
  double best_gap = std::numeric_limits<double>::infinity();
  for (int r = 0; r < timeline.run_count(); ++r) {
    double gap = std::abs(timeline.kernel_time_us(r) - m);
    if (gap < best_gap) best = r, best_gap = gap;
  }
  return best;
}

}  // namespace fx
