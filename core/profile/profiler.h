// SPDX-License-Identifier: Apache-2.0
#pragma once
// Measures a graph on the CPU runtime, kernel by kernel.
//
//   Profiler p(ProfileOptions{.runs = 10, .warmup = 2, .threads = 2});
//   ProfileResult r = p.profile(graph);                        // one kernel per node
//   ProfileResult f = p.profile(graph, fused_steps, r.inputs);  // a fused plan, same data
//
// Warm-up runs first (not recorded, they also fill caches and grow the arena), then
// N timed runs. Each step of the executor is one KernelEvent per run (through the
// executor's step observer); bytes read/written come from the actual tensors of the
// step (views that alias an input move nothing), FLOPs from their dims. Timed runs
// only record timestamps; shapes and bytes are taken once, in the first run.
//
// Profiling runs in the calling process: callers that must survive a crashing kernel
// run it in a child (`fxc profile`, see child_profiler.h).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "profile/timeline.h"
#include "runtime/executor.h"
#include "runtime/tensor.h"

namespace fx {

struct ProfileOptions {
  int runs = 10;
  int warmup = 2;
  int threads = 0;                             // intra-op threads; 0 = all hardware threads
  int64_t opset = 0;                           // the model's default-domain opset (0: latest)
  uint64_t seed = 0;                           // for random inputs when none are given
  std::string source = "fusion-explorer cpu";  // Timeline::source
};

struct ProfileResult {
  Timeline timeline;                   // every timed run (KernelEvent::run = 0..runs-1)
  std::vector<KernelStats> kernels;    // per kernel, medians over the timed runs
  std::vector<double> run_ms;          // wall time of each timed run
  double median_ms = 0;                // median of run_ms
  int64_t peak_activation_bytes = 0;   // the executor's arena (with reuse)
  int64_t total_activation_bytes = 0;  // all intermediates summed (no reuse)
  int threads = 0;
  int runs = 0;
  int warmup = 0;
  std::string device;                    // "cpu: <model name>, N threads"
  std::map<std::string, Tensor> inputs;  // what was fed
  std::vector<Tensor> outputs;           // graph outputs of the last run

  // The timed run whose kernel time is the median one, starting at 0.
  Timeline representative_timeline() const;
};

// One program timed run by run, so that a caller can alternate two programs (the
// before/after profile interleaves unfused and fused runs so that machine load hits
// both alike). Profiler::profile is warm-ups then timed runs of one session.
//
//   ProfileSession s(graph, steps, options);
//   s.run(inputs, /*timed=*/false);   // warm-up
//   s.run(inputs, /*timed=*/true);    // recorded
//   ProfileResult r = s.finish(inputs);
class ProfileSession {
 public:
  ProfileSession(const Graph& graph, std::vector<Step> steps, ProfileOptions options);
  ~ProfileSession();
  ProfileSession(const ProfileSession&) = delete;
  ProfileSession& operator=(const ProfileSession&) = delete;

  // Runs once; a timed run is recorded (step times and its wall time). Returns the
  // graph outputs.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs, bool timed);
  const Executor& executor() const { return *executor_; }
  // The result over the timed runs so far (at least one); `inputs` is stored in it and
  // `outputs` are those of the last run.
  ProfileResult finish(std::map<std::string, Tensor> inputs);

 private:
  struct Recording;
  const Graph& graph_;
  ProfileOptions options_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Recording> rec_;
};

class Profiler {
 public:
  explicit Profiler(ProfileOptions options = {}) : options_(std::move(options)) {}

  // One step per node (make_steps), random inputs from options.seed.
  ProfileResult profile(const Graph& graph) const;
  // The given steps (e.g. with fused kernels substituted) on the given inputs
  // (random from options.seed when empty).
  ProfileResult profile(const Graph& graph, std::vector<Step> steps,
                        std::map<std::string, Tensor> inputs = {}) const;

  const ProfileOptions& options() const { return options_; }

 private:
  ProfileOptions options_;
};

// "cpu: <model name from /proc/cpuinfo>, N threads".
std::string cpu_device_name(int threads);

}  // namespace fx
