// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fused graph: the original graph with each given fusion group contracted into one
// node (a "kernel"), what the GUI shows beside the original. The mapping both ways lets
// a view highlight the original nodes a kernel replaced, and the kernel holding a node.
//
//   FusedGraph f = contract_groups(graph, plan.accepted());
//   f.graph.node(f.kernel_of[conv1])   // the kernel node that replaced conv1
//   f.originals[k]                     // the original nodes of fused node k
//
// A kernel node is named after the group id, has domain kFusedKernelDomain, op type
// "Conv+BatchNormalization+Relu" (members' op types, long chains shortened), the
// group's external inputs and outputs, and the members' common name scope (so it sits
// where its members sat in the hierarchy). Nodes outside every group are copied as
// they are (same names). Groups naming nodes the graph lacks, groups overlapping an
// earlier group, and groups whose contraction would make a cycle are left out and
// listed in `skipped`.

#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "ir/graph.h"

namespace fx {

inline constexpr const char* kFusedKernelDomain = "ai.fusion_explorer";

struct FusedGraph {
  Graph graph;
  std::vector<std::vector<NodeId>> originals;  // fused node -> original nodes (topo order)
  std::vector<NodeId> kernel_of;               // original node -> fused node
  std::vector<int> group_of;                   // fused node -> index into the groups, or -1
  std::vector<std::string> skipped;            // "<group id>: why"

  bool is_kernel(NodeId fused) const { return group_of[std::size_t(fused)] >= 0; }
};

FusedGraph contract_groups(const Graph& g, const std::vector<const FusionGroup*>& groups);

// "Conv+BatchNormalization+Relu"; more than `max_ops` ops become "Conv+…+Relu (7 ops)".
std::string kernel_op_label(const std::vector<std::string>& ops, std::size_t max_ops = 4);

}  // namespace fx
