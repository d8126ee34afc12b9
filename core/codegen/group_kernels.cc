// SPDX-License-Identifier: Apache-2.0
#include "codegen/group_kernels.h"

#include <algorithm>

#include "util/error.h"

namespace fx {

GroupKernels plan_group_kernels(const Graph& g, const std::vector<NodeId>& nodes,
                                const std::string& id) {
  GroupKernels k;
  if (nodes.empty()) return k;
  if (g.node(nodes[0]).op_type == "Conv") {
    if ((k.pointwise_depthwise = plan_pointwise_depthwise(g, nodes, nullptr))) {
      k.form = GroupKernels::Form::PointwiseDepthwise;
      k.kernels = {nodes};
      return k;
    }
    if ((k.conv = plan_conv_post_ops(g, nodes, &k.no_post_ops))) {
      k.form = GroupKernels::Form::ConvPostOps;
      k.kernels = {nodes};
      return k;
    }
  }
  try {
    if ((k.whole = lower_pending(g, nodes, id, 0, &k.reason))) {
      k.form = GroupKernels::Form::Generated;
      // Masks run first through their runtime kernels; the rest is one kernel.
      std::vector<NodeId> rest;
      for (NodeId n : nodes) {
        if (std::find(k.whole->masks.begin(), k.whole->masks.end(), n) != k.whole->masks.end())
          k.kernels.push_back({n});
        else
          rest.push_back(n);
      }
      k.kernels.push_back(std::move(rest));
      return k;
    }
    k.parts = generated_parts(g, nodes, id);
  } catch (const Error& e) {
    k.reason = e.what();
    k.parts.clear();
  }
  k.form = k.parts.empty() ? GroupKernels::Form::Runtime : GroupKernels::Form::Parts;
  // Parts and the members outside them, in the group's order.
  std::vector<int> part_of(nodes.size(), -1);
  for (std::size_t p = 0; p < k.parts.size(); ++p)
    for (NodeId n : k.parts[p].nodes)
      part_of[std::size_t(std::find(nodes.begin(), nodes.end(), n) - nodes.begin())] = int(p);
  std::vector<bool> emitted(k.parts.size(), false);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const int p = part_of[i];
    if (p < 0) {
      k.kernels.push_back({nodes[i]});
    } else if (!emitted[std::size_t(p)]) {
      emitted[std::size_t(p)] = true;
      k.kernels.push_back(k.parts[std::size_t(p)].nodes);
    }
  }
  return k;
}

void use_generated_kernels(FusionOptions& options, const Graph& g) {
  options.kernels_of = [&g](const std::vector<NodeId>& members) {
    return plan_group_kernels(g, members, "fg").kernels;
  };
}

}  // namespace fx
