#include "runtime/depthwise_conv.h"

#include <algorithm>
#include <vector>

#include "runtime/fast_math.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

// out[i] += wv * in[i * stride] for i in [0, n).
FX_VECTOR_CLONES void axpy_strided(float* out, const float* in, int64_t n, int64_t stride, float wv) {
  if (stride == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] += wv * in[i];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] += wv * in[i * stride];
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

void depthwise_conv2d(const DepthwiseShape& s, const float* x, const float* w, const float* bias,
                      float* y) {
  const int64_t planes = s.n * s.c;
  // For each kernel column, the output columns whose input column is inside the
  // image: iw = ow*sw - pl + kw*dw in [0, w).
  std::vector<std::pair<int64_t, int64_t>> cols(static_cast<std::size_t>(s.kw));
  for (int64_t kw = 0; kw < s.kw; ++kw) {
    int64_t off = kw * s.dw - s.pl;
    int64_t lo = std::max<int64_t>(0, ceil_div(-off, s.sw));
    int64_t hi = std::min<int64_t>(s.ow, floor_div(s.w - 1 - off, s.sw) + 1);
    cols[static_cast<std::size_t>(kw)] = {lo, std::max(lo, hi)};
  }
  parallel_for(planes, s.oh * s.ow * s.kh * s.kw, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t c = p % s.c;
      const float* in = x + p * s.h * s.w;
      const float* wc = w + c * s.kh * s.kw;
      float* out = y + p * s.oh * s.ow;
      const float b0 = bias ? bias[c] : 0.0f;
      for (int64_t oh = 0; oh < s.oh; ++oh) {
        float* orow = out + oh * s.ow;
        std::fill(orow, orow + s.ow, b0);
        for (int64_t kh = 0; kh < s.kh; ++kh) {
          const int64_t ih = oh * s.sh - s.pt + kh * s.dh;
          if (ih < 0 || ih >= s.h) continue;
          const float* irow = in + ih * s.w;
          for (int64_t kw = 0; kw < s.kw; ++kw) {
            auto [lo, hi] = cols[static_cast<std::size_t>(kw)];
            if (lo >= hi) continue;
            const int64_t iw0 = lo * s.sw - s.pl + kw * s.dw;
            axpy_strided(orow + lo, irow + iw0, hi - lo, s.sw, wc[kh * s.kw + kw]);
          }
        }
      }
    }
  });
}

}  // namespace fx
