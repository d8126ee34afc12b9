// SPDX-License-Identifier: Apache-2.0
#pragma once
// Rewrites of a lowered row kernel (kernel_ir.h) that the C++ emitter applies before
// scheduling its passes over the row.

#include "codegen/kernel_ir.h"

namespace fx {

// LayerNorm's statistics in one pass. The lowering computes the mean, then the mean of
// (x - mean)^2: two reduction passes, and x - mean buffered for a third. Rewritten:
// with sh the mean of the row's first 64 values (fx_head_mean) and e = x - sh,
// mean = sh + E[e] and variance = max(0, E[e^2] - E[e]^2), both sums in the first
// pass; the output pass reads x again (from L1) as x - mean. The shift keeps the digits
// of a row far from 0 (mean 1e4, standard deviation 0.3: unshifted, E[x^2] - E[x]^2
// cancels to noise in float). The variance's relative error grows as
// 1 + ((mean - sh) / std)^2 times float rounding; the head's 64 values can only be
// sqrt(row / 64) standard deviations off the mean together (a single first value
// could be sqrt(row) off: a first value 50 above a row of 1e4 +- 0.5 cost 5e-4 of
// the variance at row 4099). Tests: tests/codegen/row_accuracy_test.cc. The new
// "RowHeadMean" op is a per-row scalar of an input row.
// Applies to every ReduceSum(mean) of an input x whose result mu feeds
// ReduceSum(mean)(Mul(Sub(x, mu), Sub(x, mu))) with the square read nowhere else.
LoweredGroup one_pass_variance(LoweredGroup g);

}  // namespace fx
