// SPDX-License-Identifier: Apache-2.0
#pragma once
// Steps whose results nothing reads, dropped from a program before it runs.
//
// After fusion, a group's step takes its constant operands at build time (a Clip's
// min/max folded into a oneDNN post-op), so the Constant nodes that produced them feed
// no step any more; left in, MobileNetV2's fused program ran 70 such steps each run.
//
//   remove_dead_steps(graph, steps);  // before Executor(graph, steps)

#include <vector>

#include "ir/graph.h"
#include "runtime/executor.h"

namespace fx {

// Removes, until none is left, every step that writes at least one value and none
// that another step reads or the graph outputs. Returns how many were removed.
int remove_dead_steps(const Graph& g, std::vector<Step>& steps);

}  // namespace fx
