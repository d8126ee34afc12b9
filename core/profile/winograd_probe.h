// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the runtime does with Winograd on this host, as device data
// (device/winograd_support.h): the runtime's own decision (runtime/winograd_conv.h:
// winograd_runs) asked for each shape. Building oneDNN primitive descriptors only, no
// weights and no timing: well under a millisecond a shape.
//
// Calibration records the answers for a set of common shapes in the cpu-host profile
// (calibration/host_device.h); the before/after measurement asks for the model's own
// shapes, so that the cost terms it writes say what ran (before_after.h).

#include <vector>

#include "device/winograd_support.h"
#include "ir/graph.h"

namespace fx {

// The runtime's answers for `shapes` on `threads` parts (0: all hardware threads, as
// the executor). Under FX_WINOGRAD=0 every answer is false.
WinogradSupport probe_winograd(const std::vector<WinogradShape>& shapes, int threads = 0);

// The distinct Winograd shapes of `g`'s convolutions (analysis/cost_model.h:
// CostModel::node_winograd_shape).
std::vector<WinogradShape> winograd_shapes(const Graph& g);

}  // namespace fx
