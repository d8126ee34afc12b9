// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs a Graph on the CPU.
//
//   Executor ex(graph, ExecutorOptions{.threads = 4});
//   std::vector<Tensor> outs = ex.run({{"input", x}});   // graph-output order
//
// Build: the graph is compiled into Steps, one per node (make_steps), or from a
// caller's list where one Step may cover several nodes (a fused kernel from codegen:
// substitute_step). Steps are ordered by their data dependencies, a memory plan
// assigns each intermediate value a reusable arena slot by liveness, and kernels
// are created once. Run: steps execute in order on the calling thread, each kernel
// using `threads` OpenMP threads (the runtime's one thread pool; oneDNN shares it).
// An observer, when set, is told each step's start and end (the profiler's hook).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/boxed_value.h"
#include "runtime/kernel.h"
#include "runtime/tensor.h"

namespace fx {

struct ExecutorOptions {
  int threads = 0;    // intra-op threads; 0 = all hardware threads
  int64_t opset = 0;  // the model's ONNX opset (0: latest), for ops that changed meaning
};

// One unit of execution: one node, or several nodes replaced by one fused kernel.
struct Step {
  std::string name;              // node name, or the fused kernel's name
  std::string op_type;           // "Conv", or e.g. "Conv+BatchNormalization+Relu"
  std::vector<NodeId> nodes;     // the graph nodes this step computes
  std::vector<ValueId> inputs;   // kNoValue for omitted optional inputs
  std::vector<ValueId> outputs;  // values the step writes (others in the group stay internal)
  std::shared_ptr<Kernel> kernel;
  std::optional<int> group_id;  // the fusion group a fused step computes, when known
};

// Told after each step: timestamps are steady_clock nanoseconds; `thread` is the
// calling thread's index as the executor numbers them (steps run on one thread;
// kernels fan out inside). inputs/outputs are the step's tensors, for shapes/bytes.
struct StepEvent {
  int step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int thread = 0;
  std::optional<int> group_id;  // the step's group_id
  std::span<const Tensor* const> inputs;
  std::span<const Tensor* const> outputs;
};
using StepObserver = std::function<void(const StepEvent&)>;

// One step per node of `graph`, with the project's kernel for each op. Throws
// fx::Error naming the op and node for an unsupported op.
std::vector<Step> make_steps(const Graph& graph, int64_t opset = 0);
// Replaces the steps covering `fused.nodes` with `fused`; throws fx::Error when a
// node is not covered by exactly the steps removed (e.g. already fused elsewhere).
void substitute_step(std::vector<Step>& steps, Step fused);

class Executor {
 public:
  Executor(const Graph& graph, ExecutorOptions options = {});
  // Runs the given steps (e.g. make_steps + substitute_step). They may come in any
  // order that respects data dependencies after sorting; every graph output must be
  // produced by some step.
  Executor(const Graph& graph, std::vector<Step> steps, ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Feeds the runtime inputs by name (every one is required) and returns the graph
  // outputs in graph-output order, as owned tensors. Throws fx::Error for a missing
  // or mistyped input, a shape a kernel rejects, or a failing step (named).
  std::vector<Tensor> run(const std::map<std::string, Tensor>& inputs);
  // The same for values that may be sequences/optionals (runtime/boxed_value.h):
  // feeds the runtime inputs and, for a subgraph, its outer references
  // (Graph::outer_refs) by name; names the graph does not read are ignored. run()
  // throws when an output is boxed; this returns it. Control-flow kernels run their
  // bodies through this.
  std::vector<RunValue> run_values(const std::map<std::string, RunValue>& inputs);

  const std::vector<Step>& steps() const { return steps_; }
  const Graph& graph() const { return *graph_; }
  int threads() const { return threads_; }
  // Bytes of the activation arena: the sum of the slot sizes of the memory plan
  // (slots are shared by values with disjoint lifetimes). Before the first run it
  // is estimated from inferred static shapes; after, it is what the runs used.
  int64_t peak_activation_bytes() const;
  // Sum of all intermediate values' bytes in the last run (no reuse): what the plan
  // is compared against.
  int64_t total_activation_bytes() const;
  // Number of arena slots, and the slot of each value (-1 for inputs/constants).
  int slot_count() const;
  int slot_of(ValueId v) const;

  void set_step_observer(StepObserver observer) { observer_ = std::move(observer); }

 private:
  class State;
  void build();

  std::shared_ptr<const Graph> graph_;
  std::vector<Step> steps_;
  int threads_ = 1;
  int64_t opset_ = 0;
  StepObserver observer_;
  std::unique_ptr<State> state_;
};

}  // namespace fx
