// SPDX-License-Identifier: Apache-2.0
#include "runtime/tiled_transpose.h"

#include "runtime/fast_math.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

typedef uint32_t u8v __attribute__((vector_size(32), aligned(4)));  // unaligned access
typedef int32_t mask8 __attribute__((vector_size(32)));
#define FX_TLOAD(p) (*reinterpret_cast<const u8v*>(p))
#define FX_TSTORE(p, v) (*reinterpret_cast<u8v*>(p) = (v))

// One 8x8 tile: rows src + n * n_stride (n = 0..7, each 8 consecutive m) to rows
// dst + m * row (m = 0..7, each 8 consecutive n). Unpack pairs, then quads, then halves.
inline void tile8(const uint32_t* src, int64_t n_stride, uint32_t* dst, int64_t row) {
  const u8v r0 = FX_TLOAD(src), r1 = FX_TLOAD(src + n_stride), r2 = FX_TLOAD(src + 2 * n_stride),
            r3 = FX_TLOAD(src + 3 * n_stride), r4 = FX_TLOAD(src + 4 * n_stride),
            r5 = FX_TLOAD(src + 5 * n_stride), r6 = FX_TLOAD(src + 6 * n_stride),
            r7 = FX_TLOAD(src + 7 * n_stride);
  const mask8 lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
  const u8v t0 = __builtin_shuffle(r0, r1, lo), t1 = __builtin_shuffle(r0, r1, hi),
            t2 = __builtin_shuffle(r2, r3, lo), t3 = __builtin_shuffle(r2, r3, hi),
            t4 = __builtin_shuffle(r4, r5, lo), t5 = __builtin_shuffle(r4, r5, hi),
            t6 = __builtin_shuffle(r6, r7, lo), t7 = __builtin_shuffle(r6, r7, hi);
  const mask8 qlo = {0, 1, 8, 9, 4, 5, 12, 13}, qhi = {2, 3, 10, 11, 6, 7, 14, 15};
  const u8v u0 = __builtin_shuffle(t0, t2, qlo), u1 = __builtin_shuffle(t0, t2, qhi),
            u2 = __builtin_shuffle(t1, t3, qlo), u3 = __builtin_shuffle(t1, t3, qhi),
            u4 = __builtin_shuffle(t4, t6, qlo), u5 = __builtin_shuffle(t4, t6, qhi),
            u6 = __builtin_shuffle(t5, t7, qlo), u7 = __builtin_shuffle(t5, t7, qhi);
  const mask8 first = {0, 1, 2, 3, 8, 9, 10, 11}, second = {4, 5, 6, 7, 12, 13, 14, 15};
  FX_TSTORE(dst, __builtin_shuffle(u0, u4, first));
  FX_TSTORE(dst + row, __builtin_shuffle(u1, u5, first));
  FX_TSTORE(dst + 2 * row, __builtin_shuffle(u2, u6, first));
  FX_TSTORE(dst + 3 * row, __builtin_shuffle(u3, u7, first));
  FX_TSTORE(dst + 4 * row, __builtin_shuffle(u0, u4, second));
  FX_TSTORE(dst + 5 * row, __builtin_shuffle(u1, u5, second));
  FX_TSTORE(dst + 6 * row, __builtin_shuffle(u2, u6, second));
  FX_TSTORE(dst + 7 * row, __builtin_shuffle(u3, u7, second));
}

// Output rows [m0, m1) of one tile plane: full 8x8 tiles, then the ragged edges.
FX_VECTOR_CLONES void rows(const uint32_t* in, uint32_t* out, int64_t m0, int64_t m1,
                           int64_t n_count, int64_t n_stride) {
  const int64_t n8 = n_count / 8 * 8;
  int64_t m = m0;
  for (; m + 8 <= m1; m += 8) {
    for (int64_t n = 0; n < n8; n += 8)
      tile8(in + m + n * n_stride, n_stride, out + m * n_count + n, n_count);
    for (int64_t mm = m; mm < m + 8; ++mm)
      for (int64_t n = n8; n < n_count; ++n) out[mm * n_count + n] = in[mm + n * n_stride];
  }
  for (; m < m1; ++m)
    for (int64_t n = 0; n < n_count; ++n) out[m * n_count + n] = in[m + n * n_stride];
}

}  // namespace

void transpose_4byte(const uint32_t* in, uint32_t* out, int64_t outer, int64_t outer_stride,
                     int64_t m_count, int64_t n_count, int64_t n_stride) {
  // Work items: blocks of 8 output rows of every plane, so that one plane splits too.
  const int64_t blocks = (m_count + 7) / 8;
  parallel_for(outer * blocks, 8 * n_count, [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / blocks, m0 = item % blocks * 8;
      rows(in + o * outer_stride, out + o * m_count * n_count, m0,
           m0 + 8 < m_count ? m0 + 8 : m_count, n_count, n_stride);
    }
  });
}

}  // namespace fx
