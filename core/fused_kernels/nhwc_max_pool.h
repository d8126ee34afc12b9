// SPDX-License-Identifier: Apache-2.0
#pragma once
// MaxPool on NHWC in and out (a ResNet stem's pool between two NHWC Convs): a direct
// loop over output rows, vectorized over channels. Adopted by the layout plan
// (conv_layout_plan.h) only where both its tensors stay NHWC.

#include <memory>
#include <optional>

#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

namespace fx {

struct PoolGeometry {
  int64_t kh, kw, sh, sw, pt, pl, pb, pr;
  bool ceil = false;  // ceil_mode: a last, partial window where the input ends
};

// The geometry of a step that is a lone 2-D MaxPool this kernel runs (no auto_pad,
// storage_order or dilation; pads smaller than the window), or a QDQ MaxPool group
// between 8-bit tensors of one type, or nullopt. It pools float32, uint8 and int8.
std::optional<PoolGeometry> nhwc_max_pool_geometry(const Graph& g, const Step& s);

std::shared_ptr<Kernel> make_nhwc_max_pool_kernel(const PoolGeometry& p);
bool is_nhwc_max_pool_kernel(const Kernel* k);

}  // namespace fx
