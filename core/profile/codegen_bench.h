// SPDX-License-Identifier: Apache-2.0
#pragma once
// `fxc codegen --bench`: a model unfused and fused in our runtime, without the
// profiler's per-kernel timing: the wall time of whole runs, the outputs compared as
// `fxc profile` compares them (equivalence.h, scaled tolerance).
//
//   CodegenBench b = run_codegen_bench(graph, plan.accepted(), {.runs = 20});
//   b.unfused.median_ms / b.fused.median_ms, b.outputs.match
//
// Unfused and fused runs alternate, so that load changes on a shared machine hit both
// alike; the warm-up pair gives the outputs compared. Optionally the fused program is
// also timed alone, run after run (as ONNX Runtime is timed), and cold, each run after
// a walk over a buffer larger than the last-level cache.
//
// Before the timed runs, each fused group without a verdict (`decided`) is timed
// against its members' unfused steps and falls back to them when it measures slower
// (warmup_choice.h): the fused figure is the program a first run would choose.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/fusion_plan.h"
#include "codegen/fused_program.h"
#include "profile/equivalence.h"
#include "profile/fault_injection.h"
#include "profile/warmup_choice.h"
#include "runtime/tensor.h"

namespace fx {

struct CodegenBenchOptions {
  int runs = 1;
  int threads = 0;        // 0: all hardware threads
  int64_t opset = 0;      // the model's default-domain opset (0: latest), for both programs
  std::string stem;       // names the generated sources (the model's file stem)
  bool alone = false;     // also time the fused program alone, run after run
  double evict_mb = 0;    // with alone: also time it cold (0: not)
  bool op_times = false;  // also time each op type's steps (OpTimes)
  // The model's inputs by name (a corpus model's input set); empty: bench_inputs().
  std::map<std::string, Tensor> inputs;
  bool warmup_choice = true;  // time groups at warm-up, run the faster (warmup_choice.h)
  std::function<bool(const GroupBuild&)> decided;  // groups not to time (a cached verdict)
  std::optional<FaultSpec> fault;  // test hook (fault_injection.h), applied before warm-up
};

struct RunTimes {
  std::size_t steps = 0;
  double median_ms = 0, min_ms = 0;  // 0 when not timed
};

// Per op type, the median over runs of the summed time of its steps.
struct OpTimes {
  double median_run_ms = 0;                           // whole runs
  double median_inside_ms = 0;                        // of which inside steps
  std::vector<std::pair<double, std::string>> by_op;  // (ms, op type), slowest first
};

struct CodegenBench {
  FusedProgram program;  // its groups' outcomes and note
  WarmupChoice choice;   // groups timed at warm-up, and those that fell back
  int threads = 0;
  RunTimes unfused, fused, fused_alone, fused_cold;
  Tolerance tolerance;                // what `outputs` was checked with
  TensorDiff outputs;                 // the fused program's outputs against the unfused ones
  OpTimes unfused_ops, fused_ops;     // with op_times
  std::vector<Tensor> fused_outputs;  // of the checked run, graph-output order
  // Activation arena bytes of each program after its runs (Executor::peak_activation_bytes).
  int64_t unfused_peak_bytes = 0, fused_peak_bytes = 0;
  // The fused program runs the unfused program's steps (no group, no relayout: the same
  // ops over the same values with the same kernel types), so any gap between the two
  // figures is the machine's noise, not the plan's.
  bool same_program = false;
  double speedup() const { return unfused.median_ms / fused.median_ms; }
};

// Throws fx::Error when an input cannot be generated (symbolic dims, an unsupported dtype).
CodegenBench run_codegen_bench(const Graph& graph, const std::vector<const FusionGroup*>& groups,
                               const CodegenBenchOptions& options);

// Deterministic inputs for the benches: float32 in [-1, 1), int64 in [0, 8).
std::map<std::string, Tensor> bench_inputs(const Graph& graph);

}  // namespace fx
