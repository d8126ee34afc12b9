// SPDX-License-Identifier: Apache-2.0
#pragma once
// Inference BatchNormalization on NHWC in and out: y = x * a[c] + b[c], with a and b
// folded from the constant scale, bias, mean and variance. A BatchNormalization that
// follows a Concat (DenseNet's pre-activation layers: Concat -> BN -> Relu -> Conv)
// cannot be folded into a Conv, and with only an NCHW kernel it forced every dense
// block's Concats, and so its Convs, to NCHW. Adopted by the layout plan
// (conv_layout_plan.h) only where its input and output stay NHWC.

#include <memory>

#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

namespace fx {

// True when the step is a lone inference BatchNormalization (one output, not training)
// of a static rank-4 float32 value whose four parameters are constants of C floats.
bool is_nhwc_batch_norm_candidate(const Graph& g, const Step& s);
// The NHWC kernel of such a step (its parameters folded now).
std::shared_ptr<Kernel> make_nhwc_batch_norm_kernel(const Graph& g, const Step& s);
bool is_nhwc_batch_norm_kernel(const Kernel* k);

}  // namespace fx
