// SPDX-License-Identifier: Apache-2.0
#pragma once
// The steps that run inside control-flow bodies, for whoever times the outer graph.
//
// An Executor's StepObserver sees one step per node of its own graph: a Loop is one
// step however many body kernels it ran. A profiler that wants the body's kernels
// nested under the Loop installs a ScopedNestedObserver on the thread that runs the
// outer executor; each control-flow kernel (subgraph_runner.h) then reports every
// step of its body, named by its path ("Loop_0/body/Add_3", deeper bodies
// "Loop_0/body/If_2/then_branch/Relu_1") with its nesting depth (1 inside one body).
// Without an observer installed nothing is reported and nothing is timed.

#include <cstdint>
#include <functional>
#include <string>

namespace fx {

struct NestedStepEvent {
  std::string path;     // "<node>/<attribute>/.../<step>"
  std::string op_type;  // the body step's op
  std::string parent;   // the outermost control-flow node ("Loop_0")
  int depth = 1;
  int64_t start_ns = 0;  // steady_clock, like StepEvent
  int64_t end_ns = 0;
};
using NestedStepObserver = std::function<void(const NestedStepEvent&)>;

// While alive, control-flow kernels run on this thread report their body steps.
class ScopedNestedObserver {
 public:
  explicit ScopedNestedObserver(NestedStepObserver observer);
  ~ScopedNestedObserver();
  ScopedNestedObserver(const ScopedNestedObserver&) = delete;
  ScopedNestedObserver& operator=(const ScopedNestedObserver&) = delete;

 private:
  NestedStepObserver observer_;
  const void* saved_;
};

namespace detail {
// What a control-flow kernel reads: the observer and where in the nesting it runs.
struct NestedScope {
  const NestedStepObserver* observer = nullptr;
  std::string prefix;  // "" at the top, "Loop_0/body/" inside that body
  std::string parent;
  int depth = 0;
};
const NestedScope* current_nested_scope();
// Enters a body for the duration: its nested control-flow kernels report under it.
class EnterNestedScope {
 public:
  EnterNestedScope(const NestedScope& outer, const std::string& node, const std::string& attr);
  ~EnterNestedScope();
  const NestedScope& scope() const { return scope_; }

 private:
  NestedScope scope_;
  const NestedScope* saved_;
};
}  // namespace detail

}  // namespace fx
