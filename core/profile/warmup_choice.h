// SPDX-License-Identifier: Apache-2.0
#pragma once
// Benchmark-then-choose on a first run: each fused group without a cached verdict is
// timed, in process and on the model's own inputs, against the unfused steps of its
// members, and a group whose fused kernel measures slower falls back to them. Where the
// autotune cache (autotune_cache.h) is off or has not seen a group, this is what keeps
// the default plan from fusing at a loss: the estimate cannot see every kernel a
// library picks on this CPU (oneDNN's matmul below AVX-512, a generated loop's code).
//
//   Executor unfused(graph, eo);
//   WarmupChoice c = choose_faster_groups(graph, program, unfused, inputs, options);
//   for (auto& f : c.fell_back) log(f.line());  // program.steps now run them unfused
//
// Unfused and fused runs alternate round by round (load changes hit both alike). A
// group counts as slower only when its fused step is slower than its members' steps in
// at least three rounds of four (the lower quartile of the differences is above zero)
// and the median difference exceeds the run-to-run noise of either side (their
// quartiles' half-widths), and again in a second pass of as many rounds over the
// groups the first found slower (under load one pass can find a tie slower); otherwise
// it stays fused. A group whose members' unfused
// steps also compute nodes outside it cannot be compared and stays fused.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codegen/fused_program.h"
#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/tensor.h"

namespace fx {

struct WarmupChoiceOptions {
  int rounds = 7;     // timed rounds of each program (after one untimed round each)
  int threads = 0;    // of the executors (0: every hardware thread)
  int64_t opset = 0;  // the model's default-domain opset
  // True for a group the caller already has a verdict for (the autotune cache): it is
  // not timed. Empty: every group is.
  std::function<bool(const GroupBuild&)> decided;
};

struct GroupFallback {
  std::string id, pattern;
  double unfused_us = 0, fused_us = 0;  // medians per run
  double noise_us = 0;                  // the margin the difference had to exceed
  // "fell back at warm-up: fg-1a2b3c4d matmul_add_act fused 512.0 µs > unfused
  //  260.1 µs (noise 8.2 µs)"
  std::string line() const;
};

struct WarmupChoice {
  int timed = 0;    // groups timed
  int decided = 0;  // groups skipped: a verdict existed
  std::vector<GroupFallback> fell_back;
};

// Times `program`'s fused groups against `unfused` (an executor of the same graph's
// unfused steps) on `inputs`, excludes those measured slower (their detail says so)
// and rebuilds program.steps once. Throws fx::Error when a run fails.
WarmupChoice choose_faster_groups(const Graph& g, FusedProgram& program, Executor& unfused,
                                  const std::map<std::string, Tensor>& inputs,
                                  const WarmupChoiceOptions& options);

}  // namespace fx
