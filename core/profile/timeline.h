// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a profiler saw: one event per kernel execution, on a lane (thread), with its
// start, duration and the traffic and work it did. The same structure holds our own
// measurements and timelines imported from other tools (Chrome traces, ONNX Runtime
// profiles), so that they can be aggregated and compared kernel by kernel.
//
//   Timeline      source ("fusion-explorer cpu", "onnxruntime profile", "chrome trace"),
//                 device, lane names, events
//   KernelEvent   kernel name, op types, node names, optional fused group id, lane,
//                 run index, start/duration in microseconds, bytes, FLOPs, free-form args
//   KernelStats   one row of the per-kernel table: median time over runs, share,
//                 bytes, achieved GB/s

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fx {

struct KernelEvent {
  std::string name;                   // kernel name: the node name, or a fused group's
  std::vector<std::string> op_types;  // one per node it covers ("Conv", "Relu")
  std::vector<std::string> nodes;     // node names it covers
  std::optional<int> group_id;        // the fusion group, for fused kernels
  int lane = 0;                       // thread / track index, 0-based
  int run = 0;                        // which timed run it belongs to, 0-based
  double start_us = 0;                // from the start of the timeline
  double duration_us = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t flops = 0;
  std::map<std::string, std::string> args;  // shapes, provider, anything else

  double end_us() const { return start_us + duration_us; }
  int64_t bytes() const { return bytes_read + bytes_written; }
};

struct Timeline {
  std::string source;                     // who produced it
  std::string device;                     // what it ran on ("cpu: 2 threads", ...)
  std::map<int, std::string> lane_names;  // lane -> display name (optional)
  std::vector<KernelEvent> events;

  // Number of runs the events span (max run index + 1; 0 when empty).
  int run_count() const;
  // Sum of kernel durations in the given run.
  double kernel_time_us(int run) const;
  // Wall span of a run: last end minus first start.
  double span_us(int run) const;
  // The events of one run, in start order, re-based so that the run starts at 0.
  Timeline single_run(int run) const;
};

// One row of the per-kernel table.
struct KernelStats {
  std::string name;
  std::vector<std::string> op_types;
  std::vector<std::string> nodes;
  std::optional<int> group_id;
  int calls = 0;         // executions per run (a kernel may run more than once)
  double median_us = 0;  // median over runs of the kernel's total time in the run
  double min_us = 0;
  double max_us = 0;
  // Quartiles over runs: their spread says how far the median can be trusted (the
  // calibration's per-group noise, calibration/result_samples.h).
  double q1_us = 0, q3_us = 0;
  double share = 0;        // median_us / sum of all kernels' median_us, in [0, 1]
  int64_t bytes_read = 0;  // per run
  int64_t bytes_written = 0;
  int64_t flops = 0;

  int64_t bytes() const { return bytes_read + bytes_written; }
  // Achieved bandwidth: bytes moved per run / median time. 0 when time is 0.
  double gb_per_s() const;
  double gflop_per_s() const;
};

// Median of the values (mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> values);

// Per-kernel table over all runs of a timeline: for each kernel name, its summed time
// in each run, then the median (min, max) over runs. Runs in which a kernel does not
// appear count as 0 for it. Sorted by median time, longest first; ties by first
// appearance.
std::vector<KernelStats> aggregate_kernels(const Timeline& timeline);

// Median over runs of the total kernel time of a run, in microseconds.
double median_run_us(const Timeline& timeline);

// Index of the run whose kernel time is closest to the median: a representative run.
int representative_run(const Timeline& timeline);

}  // namespace fx
