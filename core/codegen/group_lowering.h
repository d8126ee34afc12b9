// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which part of a fusion group becomes one generated kernel (kernel_ir.h), shared by
// the program builder (fused_program.cc) and the readable source of a group
// (group_source.cc), so that what is shown is what runs. An anchor (Conv, MatMul, Gemm,
// ConvTranspose) first in a group runs through its runtime kernel and the rest is
// generated as its epilogue; bool masks computed from outside the group run first too.

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_ir.h"
#include "ir/graph.h"

namespace fx {

struct Pending {
  std::size_t index;
  std::vector<NodeId> nodes;
  NodeId anchor = kNoNode;  // runs through its runtime kernel before the generated part
  // Bool masks computed from values outside the group (masks_from_outside), run through
  // their runtime kernels before the generated part (after the anchor).
  std::vector<NodeId> masks;
  LoweredGroup lowered;
};

// The op types of `nodes` joined by '+' ("MatMul+Add+Relu").
std::string joined_ops(const Graph& g, const std::vector<NodeId>& nodes);

// `nodes` as one generated kernel (an anchor first runs through its runtime kernel),
// or nullopt with `reason`. `index`: the group's index in the program (Pending::index).
std::optional<Pending> lower_pending(const Graph& g, const std::vector<NodeId>& nodes,
                                     const std::string& id, std::size_t index, std::string* reason);

// A group that cannot be generated as a whole, cut into runs of consecutive members
// (in topological order, so each run is convex like the group) that can: each run is
// grown while it still lowers, and kept when it has two nodes or more. Part k is
// named "<id>.k".
std::vector<Pending> generated_parts(const Graph& g, const std::vector<NodeId>& nodes,
                                     const std::string& id);

}  // namespace fx
