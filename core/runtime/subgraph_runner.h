// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs one subgraph of a control-flow node (If branch, Loop/Scan/SequenceMap body)
// with a nested Executor, for the kernels of control_flow_kernels.cc and
// sequence_kernels.cc.
//
// The body's formal inputs come from the kernel (iteration number, carried values,
// slices); its outer references (ir/subgraph.h) from the node's implicit inputs,
// matched by name. The nested executor is built on the first run, with the caller's
// thread count, and reused by every iteration: its kernels and memory plan are
// made once per node, not once per trip. When a profiler watches (nested_steps.h),
// each body step is reported under the node's path.

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/boxed_value.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace fx {

class SubgraphRunner {
 public:
  // Throws fx::Error when the node lacks the attribute or the body uses an op the
  // runtime does not have (named, with the subgraph).
  SubgraphRunner(const Graph& outer, const Node& node, const std::string& attribute);
  SubgraphRunner(SubgraphRunner&&) = default;

  const Graph& body() const { return *body_; }
  // The body's inputs that a caller feeds, in order.
  const std::vector<ValueId>& formal_inputs() const { return formal_; }
  // Runs the body with `inputs` (one per formal input) and returns its outputs.
  std::vector<RunValue> run(KernelContext& ctx, const std::vector<RunValue>& inputs);

 private:
  std::shared_ptr<const Graph> body_;
  std::string node_, attribute_;
  std::string where_;  // "subgraph 'body' of node 'Loop_0'", for errors
  std::vector<ValueId> formal_;
  std::vector<std::string> outer_names_;  // name of each implicit input of the node
  int first_implicit_ = 0;
  std::unique_ptr<Executor> exec_;
};

// Input i as a RunValue: a box when it holds one, else the tensor (undefined when
// the optional input is omitted).
RunValue input_value(const KernelContext& ctx, int i);
// Writes a RunValue to output i (a tensor is copied into the planned memory).
void write_output(KernelContext& ctx, int i, const RunValue& v);
// A tensor's first element as a bool / int64 (cond and trip-count inputs).
bool scalar_bool(const Tensor& t, const char* what);
int64_t scalar_int(const Tensor& t, const char* what);

void register_sequence_kernels(KernelTable& t);

}  // namespace fx
