// SPDX-License-Identifier: Apache-2.0
#pragma once
// The verdict of `fxc codegen --bandwidth`: memory-bound kernels against a stream copy
// measured in the same process, kernel and copy interleaved. The copy's own speed
// moves from one moment to the next on a shared machine (other tenants' traffic), so a
// single copy figure must not decide the verdict: the kernels and the copy are timed
// in several repetitions, taking turns run by run; each kernel run is compared with the
// copy run of the same round (milliseconds apart), and the summary gives the best and
// the median of each as well as the ratio per repetition.
//
//   std::vector<BandwidthSample> s = ...;  // per kernel: bytes moved, time per repetition
//   auto rows = summarize_bandwidth(s, "stream-copy", 0.80, runs_per_repetition);
//   rows[1].ratio_median, rows[1].best_vs_best, rows[1].meets_target

#include <string>
#include <vector>

namespace fx {

// One kernel's timings. bytes: what it must move (inputs read once + outputs written
// once; the copy: its input read + its output written, counted the same way). ns: one
// time per run, run i of every kernel in the same round (the kernels take turns run by
// run, so a round's runs are milliseconds apart), runs_per_rep consecutive rounds
// making one repetition.
struct BandwidthSample {
  std::string id;
  double bytes = 0;
  std::vector<double> ns;
};

struct BandwidthRow {
  std::string id;
  std::vector<double> gbs;    // GB/s per repetition: bytes / the repetition's median run
  std::vector<double> ratio;  // per repetition: the median over its rounds of this kernel's
                              // GB/s / the reference's GB/s in the same round
  double best_gbs = 0;        // the fastest single run
  double median_gbs = 0;      // the median of the repetitions' gbs
  double ratio_min = 0, ratio_median = 0;
  // best_gbs / the reference's best_gbs. For information only: one fast (or slow) run
  // of either decides it, which on a shared machine swings it between 40% and 200%.
  double best_vs_best = 0;
  // ratio_median >= target: the median over repetitions of the paired ratios, what one
  // copy run cannot move (tests/profile/bandwidth_summary_test.cc).
  bool meets_target = false;
};

// One row per sample, in order (the reference's own ratios are 1). Throws fx::Error
// when the reference is missing, the run counts differ or are not a multiple of
// runs_per_rep, or a time is not > 0.
std::vector<BandwidthRow> summarize_bandwidth(const std::vector<BandwidthSample>& samples,
                                              const std::string& reference, double target,
                                              int runs_per_rep = 1);

// The median of v (the upper one of the middle two for an even count); 0 when empty.
double median_of(std::vector<double> v);

}  // namespace fx
