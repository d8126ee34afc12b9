// SPDX-License-Identifier: Apache-2.0
#include "runtime/resize_fast.h"

#include <cstring>

#include "runtime/fast_math.h"  // FX_VECTOR_CLONES
#include "runtime/parallel.h"

namespace fx {
namespace {

// Gathers: vectorized with AVX2/AVX-512 gathers in the x86-64-v3 clone.
FX_VECTOR_CLONES
void gather_row(const float* __restrict src, const int32_t* __restrict idx, float* __restrict dst,
                int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[idx[i]];
}

FX_VECTOR_CLONES
void lerp_row_gather(const float* __restrict src, const int32_t* __restrict i0,
                     const int32_t* __restrict i1, const float* __restrict w, float* __restrict dst,
                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float a = src[i0[i]], b = src[i1[i]];
    dst[i] = (1.0f - w[i]) * a + w[i] * b;
  }
}

FX_VECTOR_CLONES
void blend_rows(const float* __restrict a, const float* __restrict b, float wb,
                float* __restrict dst, int64_t n) {
  const float wa = 1.0f - wb;
  for (int64_t i = 0; i < n; ++i) dst[i] = wa * a[i] + wb * b[i];
}

// Cost of one output row in parallel_for's units (about one operation per element).
int64_t row_cost(int64_t out_w, int64_t per_element) {
  return out_w * per_element;
}

}  // namespace

void resize_planes_nearest(const float* in, float* out, int64_t planes, int64_t in_h, int64_t in_w,
                           const ResizeAxisTable& rows, const ResizeAxisTable& cols) {
  const int64_t out_h = static_cast<int64_t>(rows.i0.size());
  const int64_t out_w = static_cast<int64_t>(cols.i0.size());
  parallel_for(planes * out_h, row_cost(out_w, 2), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t p = r / out_h, oy = r % out_h;
      float* dst = out + r * out_w;
      if (r > b && oy > 0 && rows.i0[oy] == rows.i0[oy - 1]) {
        std::memcpy(dst, dst - out_w, sizeof(float) * out_w);
        continue;
      }
      const float* src = in + (p * in_h + rows.i0[oy]) * in_w;
      gather_row(src, cols.i0.data(), dst, out_w);
    }
  });
}

void resize_planes_linear(const float* in, float* out, int64_t planes, int64_t in_h, int64_t in_w,
                          const ResizeAxisTable& rows, const ResizeAxisTable& cols) {
  const int64_t out_h = static_cast<int64_t>(rows.i0.size());
  const int64_t out_w = static_cast<int64_t>(cols.i0.size());
  parallel_for(planes * out_h, row_cost(out_w, 4), [&](int64_t b, int64_t e) {
    // Two width-interpolated source rows, tagged with (plane, source row); consecutive
    // output rows mostly need the rows the previous one had.
    std::vector<float> buf(2 * static_cast<std::size_t>(out_w));
    float* slot[2] = {buf.data(), buf.data() + out_w};
    int64_t tag[2] = {-1, -1};
    auto row = [&](int64_t p, int32_t sy, int keep) -> const float* {
      const int64_t t = p * in_h + sy;
      for (int s = 0; s < 2; ++s)
        if (tag[s] == t) return slot[s];
      // Never the row the caller holds; otherwise the older (rows come in order).
      const int s = keep >= 0 ? 1 - keep : (tag[0] <= tag[1] ? 0 : 1);
      lerp_row_gather(in + t * in_w, cols.i0.data(), cols.i1.data(), cols.w.data(), slot[s], out_w);
      tag[s] = t;
      return slot[s];
    };
    auto slot_of = [&](const float* q) { return q == slot[0] ? 0 : 1; };
    for (int64_t r = b; r < e; ++r) {
      const int64_t p = r / out_h, oy = r % out_h;
      float* dst = out + r * out_w;
      const float* a = row(p, rows.i0[oy], -1);
      if (rows.w[oy] == 0.0f || rows.i1[oy] == rows.i0[oy]) {
        std::memcpy(dst, a, sizeof(float) * out_w);
        continue;
      }
      const float* c = row(p, rows.i1[oy], slot_of(a));
      blend_rows(a, c, rows.w[oy], dst, out_w);
    }
  });
}

}  // namespace fx
