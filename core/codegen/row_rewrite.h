#pragma once
// Rewrites of a lowered row kernel (kernel_ir.h) that the C++ emitter applies before
// scheduling its passes over the row.

#include "codegen/kernel_ir.h"

namespace fx {

// LayerNorm's statistics in one pass. The lowering computes the mean, then the mean of
// (x - mean)^2: two reduction passes, and x - mean buffered for the third. Rewritten:
// with sh the row's first value and e = x - sh, mean = sh + E[e] and variance =
// max(0, E[e^2] - E[e]^2), both sums in the first pass; the output pass reads x again
// (from L1) as x - mean. Shifting by a value of the row keeps the digits of a row far
// from 0 (mean 1e4, standard deviation 1: the unshifted E[x^2] - E[x]^2 loses all of
// them in float); the relative error of the variance grows as 1 + ((mean - sh) / std)^2
// times float rounding, so only a first value many standard deviations away costs
// digits (tests/codegen/row_accuracy_test.cc). The new "RowFirst" op is a per-row
// scalar: the row's first element of its (input) argument.
// Applies to every ReduceSum(mean) of an input x whose result mu feeds
// ReduceSum(mean)(Mul(Sub(x, mu), Sub(x, mu))) with the square read nowhere else.
LoweredGroup one_pass_variance(LoweredGroup g);

}  // namespace fx
