// SPDX-License-Identifier: Apache-2.0
#pragma once
// The autotune cache: each fusion group measured fused and apart on this machine
// (Inductor's benchmark-then-choose). `fxc profile` with a plan records the groups it
// measured; `fxc profile --autotune` measures every group the estimate proposes and
// records them; the default plan (--opt-level) then leaves out a group measured
// slower fused on this CPU, whatever its estimate said.
//
//   AutotuneCache c = AutotuneCache::open(AutotuneCache::default_path(cpu_model));
//   c.record(group_signature(graph, group, threads), before_us, after_us, "resnet18");
//   c.save();
//   AutotuneVerdict v = reject_autotuned_slower(plan, graph, threads, c);
//
// One file per CPU model and fxc build ($XDG_CACHE_HOME/fusion-explorer/autotune/): the
// version and the build id (util/build_id.h, a hash of the sources and compiler), since a
// measurement says nothing about another CPU or about kernels changed since, even under
// the same version number. A
// group is keyed by its structure, not its node names: member op types and attributes,
// how the members connect, the dtypes and shapes of everything they read and write,
// which inputs are constants, and the thread count, so the same block measured in one
// model (or another export of it) counts in the next. Off switch: FX_AUTOTUNE_CACHE=off
// (or 0): nothing is read or written.
//
// Noise: a group counts as slower fused only when the difference exceeds what the
// measurements themselves say is noise: the members' and the fused kernel's run-to-run
// spread (their quartiles' half-widths, measured_noise_us) and, once a group has been
// measured more than once, the spread of its differences across measurements. A loaded
// machine widens both, so it no longer turns a tie into "slower". An entry without any
// spread (an older file) cannot tell, and the estimate decides.

#include <cmath>
#include <map>
#include <string>

#include "analysis/fusion_plan.h"
#include "ir/graph.h"
#include "profile/before_after_document.h"

namespace fx {

struct AutotuneEntry {
  double unfused_us = 0, fused_us = 0;  // means over the measurements
  int measurements = 0;
  // The mean run-to-run noise of the measurements that had one (NaN: none had), and
  // the running sum of squared deviations of (fused - unfused) across measurements.
  double noise_us = NAN;
  int noise_measurements = 0;
  double diff_m2 = 0;
  std::string pattern, model;  // what was measured last (for people reading the file)

  // The difference that counts as real: the larger of the run-to-run noise and the
  // standard deviation of the differences across measurements; NaN when neither is
  // known (one measurement without quartiles).
  double margin_us() const;
  // Fused slower by more than the margin; false when the margin is unknown.
  bool fused_slower() const;
};

class AutotuneCache {
 public:
  // False when FX_AUTOTUNE_CACHE is "off" or "0".
  static bool enabled();
  // <cache dir>/autotune/<CPU model, as a file name>-fxc-<version>-<build id>.json
  static std::string default_path(const std::string& cpu_model);
  // The cache at `path`, empty when the file does not exist; FileError naming the file
  // when it exists but cannot be read or is not an autotune cache.
  static AutotuneCache open(const std::string& path);

  const std::string& path() const { return path_; }
  std::size_t size() const { return entries_.size(); }
  const AutotuneEntry* find(const std::string& signature) const;
  // noise_us: this measurement's run-to-run noise of the difference (measured_noise_us),
  // NaN when unknown.
  void record(const std::string& signature, double unfused_us, double fused_us, double noise_us,
              const std::string& pattern, const std::string& model);
  // Writes the file (creating its folder); FileError naming it on failure.
  void save() const;

 private:
  std::string path_;
  std::map<std::string, AutotuneEntry> entries_;
};

// The run-to-run noise of a group's measured difference in a before/after result: over
// the kernels that ran its members before, the upper half-width of their middle half
// of runs (q3 - median), plus over the kernels that ran it after, the lower half-width
// (median - q1). A fused median above the members' by more than this has its middle
// half of runs wholly above theirs. NaN when a kernel lacks quartiles or none covers
// the group.
double measured_noise_us(const BeforeAfterDocument& d, const std::vector<std::string>& nodes);

// The group's structural key (a pattern name and a hash of the structure above).
std::string group_signature(const Graph& g, const FusionGroup& group, int threads);

struct AutotuneVerdict {
  int consulted = 0;  // accepted groups the cache had a measurement of
  int rejected = 0;   // of which measured slower fused, now rejected
};

// Rejects each accepted group of `plan` whose cached measurement on this CPU has it
// slower fused, the reason saying so ("measured slower on this CPU (autotune cache):
// ...").
AutotuneVerdict reject_autotuned_slower(FusionPlan& plan, const Graph& g, int threads,
                                        const AutotuneCache& cache);

}  // namespace fx
