// SPDX-License-Identifier: Apache-2.0
#pragma once
// Static memory plan: each intermediate value gets an arena slot; values whose
// lifetimes (first write .. last read, in step order) do not overlap share a slot.
// Outputs of aliasing steps (Reshape, ...) are views of their input and extend its
// lifetime instead of taking a slot. A step's outputs never share a slot with its
// inputs, except output 0 of a step that may write over an input (unary elementwise
// ops: input 0; a fused Conv: its residual): it takes that input's slot when the input
// dies at that step. Slot sizes start from inferred
// static shapes (best fit in step order, or greedy by size or by breadth over whole
// lifetimes, whichever totals least)
// and grow to what runs need.

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace fx {

struct PlanStep {
  std::vector<ValueId> inputs;  // kNoValue allowed
  std::vector<ValueId> outputs;
  bool aliases_input = false;  // outputs are views of inputs[0]
  bool over_input = false;     // outputs[0] may take inputs[over_input_index]'s slot
  int over_input_index = 0;
};

struct MemoryPlan {
  std::vector<int> slot_of_value;      // -1: no slot (input, constant, alias, unused)
  std::vector<ValueId> alias_root;     // value whose memory a value views (itself if none)
  std::vector<int64_t> slot_estimate;  // bytes per slot from static shapes (0 unknown)

  int slot_count() const { return static_cast<int>(slot_estimate.size()); }
  // Values are intermediates iff produced by a step; `graph` gives outputs and sizes.
  static MemoryPlan build(const Graph& graph, const std::vector<PlanStep>& steps);
};

}  // namespace fx
