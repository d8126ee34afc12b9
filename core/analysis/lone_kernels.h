// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the fused program runs the nodes it does not fuse (device_profile.h:
// lone_kernel_saving), decided from the graph as the codegen's layout plan and step merges
// decide it (fused_kernels/conv_layout_plan.h, pool_pad_fold.h, nhwc_batch_norm.h), which
// analysis cannot call: the rules are re-stated here, and a test checks that both agree
// on sample graphs.
//
//   auto kinds = lone_kinds(g, cost, grouped);   // per node
//   double s = lone_saving_s(profile, kinds[i], cost.node(i));
//
// A 2-D Conv the layout plan keeps in a chain of NHWC tensors (its input or its output
// stays NHWC) becomes a fused conv kernel that converts nothing: a spatial one saves its
// relayout, another (1x1, grouped) a share of its time. A Conv outside any chain, a 3-D
// one or one the runtime runs with Winograd in both programs runs unchanged; so does a
// depthwise conv outside every chain (in one, its class's share). A zero Pad
// whose one reader is a lone AveragePool runs merged with it as one step. (The program
// merges a BatchNormalization into the Relu that reads it too; too few models have it to
// fit that apart, so those two keep their classes' shares.)
//
// Not re-stated: the plan's byte balance per NHWC component (conv_layout_plan.cc:
// drop_unprofitable_components), which turns a component back to NCHW where its 1x1
// Convs would add more conversions than its spatial Convs save, or where its depthwise
// Convs run faster on NCHW. Analysis counts such a component's Convs as in a chain (an
// Inception block whose Pad is read elsewhere: the plan drops the 1x1 branch Convs'
// component, analysis credits them).

#include <vector>

#include "analysis/cost_model.h"
#include "device/device_profile.h"
#include "ir/graph.h"

namespace fx {

enum class LoneKind {
  ClassShare,   // its kernel class's share (lone_kernel_saving.share)
  SpatialConv,  // a spatial 2-D conv in an NHWC chain: its relayout saved
  OtherConv,    // a 1x1 or grouped 2-D conv in an NHWC chain
  Unchanged,    // a conv the fused program runs as the unfused one does
  Merged,       // a zero Pad and the AveragePool it is folded into
};
const char* lone_kind_name(LoneKind k);

// Per node (by NodeId): its kind when it runs outside every group (`grouped`: per node,
// nonzero when it is in a group).
std::vector<LoneKind> lone_kinds(const Graph& g, const CostModel& cost,
                                 const std::vector<char>& grouped);

// What the fused program saves on one node of that kind (seconds): the profile's fitted
// rate or share for the kind, the class's share where the profile has none for it.
double lone_saving_s(const DeviceProfile& p, LoneKind k, const Cost& c);

// True when the profile has a fit of its own for kind `k` (not the class's share).
bool kind_fitted(const DeviceProfile& p, LoneKind k);

// True for the kinds the fused program changes whether or not the plan fuses any group
// (the layout plan and the step merges run on every program), where the profile has a
// fit for the kind: a class share was measured beside fused groups only.
inline bool changed_without_groups(const DeviceProfile& p, LoneKind k) {
  return (k == LoneKind::SpatialConv || k == LoneKind::OtherConv || k == LoneKind::Merged) &&
         kind_fitted(p, k);
}

}  // namespace fx
