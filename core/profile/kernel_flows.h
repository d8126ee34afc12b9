// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which kernel of the "after" timeline each kernel of the "before" timeline became,
// for the flow arrows of the before/after view (Perfetto draws the same links as
// "flows"): a before kernel is linked to the after kernel that covers one of its nodes,
// when that after kernel is a fused one (it covers two nodes or more). Kernels that ran
// unchanged get no link: an arrow between two copies of one kernel says nothing.

#include <cstddef>
#include <vector>

#include "profile/timeline.h"

namespace fx {

struct KernelFlow {
  std::size_t before = 0;  // index into before.events
  std::size_t after = 0;   // index into after.events
};

// Links in the order of the before events. Both timelines hold one run (the views show
// the representative run); with several runs each run links within itself.
std::vector<KernelFlow> kernel_flows(const Timeline& before, const Timeline& after);

}  // namespace fx
