// SPDX-License-Identifier: Apache-2.0
#pragma once
// y = alpha * W x (+ c): a matrix-vector product over row-major weights [n, k], for
// Gemm and MatMul with a single row on the left (a classifier head: MobileNetV2's
// 1280 x 1000). It is memory-bound (each weight is used once); oneDNN's matmul with
// M = 1 ran at about 40 GB/s on the bench machine, this loop streams the rows with
// eight independent FMA chains (four rows at a time, two vectors each), split over
// the runtime's pool.

#include <cstdint>

namespace fx {

// w: n rows of k floats (row j at w + j * k); c: n floats or null.
void gemv_rows(const float* x, const float* w, const float* c, float alpha, int64_t n, int64_t k,
               float* y);

}  // namespace fx
