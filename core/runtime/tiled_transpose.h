// SPDX-License-Identifier: Apache-2.0
#pragma once
// The 4-byte transpose that NCHW <-> NHWC permutes come down to, in 8x8 tiles
// transposed in registers: out[o][m][n] = in[o * outer_stride + m + n * n_stride]
// (m walks the input contiguously, n with stride n_stride >= m_count). Each tile reads
// 8 rows of 8 and writes 8 rows of 8, so a cache line read is used up while it is in
// L1 however many n there are (the transpose kernel's strided copy is not, past about
// 256 n: it ran at 15 GB/s where this runs at 25 on one core).

#include <cstdint>

namespace fx {

// `outer` independent [m_count x n_count] tiles of the output, the o-th reading from
// in + o * outer_stride. Split over the runtime's thread pool.
void transpose_4byte(const uint32_t* in, uint32_t* out, int64_t outer, int64_t outer_stride,
                     int64_t m_count, int64_t n_count, int64_t n_stride);

}  // namespace fx
