// SPDX-License-Identifier: Apache-2.0
#pragma once
// Cutting tensors along one axis and joining them again, for any fixed-size dtype:
// what Scan and Loop do with their scanned inputs and stacked outputs, and what the
// sequence ops do (SplitToSequence, ConcatFromSequence). Results are owned tensors.

#include <cstdint>
#include <vector>

#include "runtime/tensor.h"

namespace fx {

// Elements [begin, end) of `axis`; the axis stays (its extent end - begin).
Tensor range_along(const Tensor& t, int axis, int64_t begin, int64_t end);
// Index `i` of `axis`, the axis removed.
Tensor take_along(const Tensor& t, int axis, int64_t i);
// Tensors with equal dtype and dims except `axis`, joined along it.
Tensor concat_along(const std::vector<Tensor>& parts, int axis);
// Tensors with equal dtype and dims, stacked on a new axis `axis` (0..rank).
Tensor stack_along(const std::vector<Tensor>& parts, int axis);
// `axis` in [-rank, rank) made non-negative; throws fx::Error naming `what` otherwise.
int normalize_axis(int64_t axis, int64_t rank, const char* what);

}  // namespace fx
