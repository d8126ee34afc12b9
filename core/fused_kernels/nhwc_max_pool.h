// SPDX-License-Identifier: Apache-2.0
#pragma once
// MaxPool and AveragePool on NHWC in and out (a ResNet stem's pool between two NHWC
// Convs, an Inception block's pooling branch, a DenseNet transition): a direct loop over
// output rows, vectorized over channels. Adopted by the layout plan (conv_layout_plan.h)
// only where both its tensors stay NHWC.

#include <memory>
#include <optional>

#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

namespace fx {

struct PoolGeometry {
  int64_t kh, kw, sh, sw, pt, pl, pb, pr;
  bool ceil = false;               // ceil_mode: a last, partial window where the input ends
  bool average = false;            // AveragePool (float32 only); MaxPool otherwise
  bool count_include_pad = false;  // AveragePool: divide by the window's padded size
};

// The geometry of a step that is a lone 2-D MaxPool this kernel runs (no auto_pad,
// storage_order or dilation; pads smaller than the window), or a QDQ MaxPool group
// between 8-bit tensors of one type, or a float32 2-D AveragePool (alone, or with the
// zero Pad folded into it, pool_pad_fold.h), or nullopt. MaxPool pools float32, uint8
// and int8.
std::optional<PoolGeometry> nhwc_max_pool_geometry(const Graph& g, const Step& s);

std::shared_ptr<Kernel> make_nhwc_max_pool_kernel(const PoolGeometry& p);
bool is_nhwc_max_pool_kernel(const Kernel* k);

}  // namespace fx
