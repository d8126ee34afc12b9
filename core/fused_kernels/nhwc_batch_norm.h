// SPDX-License-Identifier: Apache-2.0
#pragma once
// Inference BatchNormalization, and a Relu after it, as one pass on NHWC or NCHW:
// y = x * a[c] + b[c] (then max(y, 0)), with a and b folded from the constant scale,
// bias, mean and variance. A BatchNormalization that follows a Concat (DenseNet's
// pre-activation layers: Concat -> BN -> Relu -> Conv) cannot be folded into a Conv;
// with only an NCHW kernel it forced every dense block's Concats, and so its Convs, to
// NCHW, and its Relu took a second pass over each Concat-sized tensor. The layout plan
// (conv_layout_plan.h) gives a step the NHWC kernel only where its input and output
// stay NHWC.
//
//   fold_relus_into_batch_norms(g, steps);   // before plan_conv_layouts

#include <memory>
#include <vector>

#include "ir/graph.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"

namespace fx {

// True when the step is a lone inference BatchNormalization (one output, not training)
// of a static rank-4 float32 value whose four parameters are constants of C floats, or
// such a BatchNormalization and the Relu that reads it (fold_relus_into_batch_norms).
bool is_nhwc_batch_norm_candidate(const Graph& g, const Step& s);
// The kernel of such a step on NHWC or NCHW tensors (its parameters folded now).
std::shared_ptr<Kernel> make_batch_norm_kernel(const Graph& g, const Step& s, bool nhwc);
inline std::shared_ptr<Kernel> make_nhwc_batch_norm_kernel(const Graph& g, const Step& s) {
  return make_batch_norm_kernel(g, s, true);
}
// True for the NHWC kernel only.
bool is_nhwc_batch_norm_kernel(const Kernel* k);

// Merges each lone candidate BatchNormalization step whose one reader is a lone Relu
// step (and not a graph output) with that step, on the NCHW kernel. Returns how many.
int fold_relus_into_batch_norms(const Graph& g, std::vector<Step>& steps);

}  // namespace fx
