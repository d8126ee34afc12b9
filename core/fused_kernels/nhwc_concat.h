// SPDX-License-Identifier: Apache-2.0
#pragma once
// Concat over channels on NHWC in and out (an Inception or SqueezeNet block's branches
// joined between Convs): each pixel's channels of every input copied side by side.
// Adopted by the layout plan (conv_layout_plan.h) only where every input and the
// output stay NHWC; the tensors keep their logical NCHW dims.

#include <memory>

#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

namespace fx {

// True when the step is a lone Concat of rank-4 float32 values over axis 1 (or -3)
// that this kernel runs.
bool is_nhwc_concat_candidate(const Graph& g, const Step& s);

std::shared_ptr<Kernel> make_nhwc_concat_kernel();
bool is_nhwc_concat_kernel(const Kernel* k);

}  // namespace fx
