#include "codegen/depthwise_nhwc.h"

#include <algorithm>

#include "runtime/parallel.h"

namespace fx {

namespace {

// Clones by instruction set (resolved with __builtin_cpu_supports). Not "arch=..."
// clones: those are picked only when the CPU *is* that model, so a newer CPU (this
// machine's Sapphire Rapids) would run the SSE2 default.
#if defined(__x86_64__) && !defined(__clang__)
#define FX_DW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FX_DW_CLONES
#endif

typedef float v16 __attribute__((vector_size(64), aligned(4)));  // unaligned loads/stores

// Macros, not functions: code outside the clones must not pass 64-byte vectors.
#define FX_LOAD16(p) (*reinterpret_cast<const v16*>(p))
#define FX_STORE16(p, v) (*reinterpret_cast<v16*>(p) = (v))

struct RowArgs {
  const DepthwiseShape* s;
  const float* img;  // the image's input, [h][w][C]
  const float* w;    // [kh * kw][C]
  const float* b;    // [C]
  float* out;        // the output row, [ow][C]
  int64_t oh;
};

// One output row, 16 channels at a time with the block's weights held in registers
// over the row; K = kh = kw known at compile time (0: any). Channels past the last
// full block of 16 are left to row_tail().
template <int K>
FX_DW_CLONES void row_blocks(const RowArgs& a) {
  const DepthwiseShape& s = *a.s;
  const int64_t C = s.c, kh_n = K ? K : s.kh, kw_n = K ? K : s.kw;
  // Input rows of this output row inside the image, and the output columns whose
  // window lies inside the image's width (no per-tap test there).
  int64_t kh0 = 0, kh1 = kh_n;
  while (kh0 < kh_n && a.oh * s.sh - s.pt + kh0 * s.dh < 0) ++kh0;
  while (kh1 > kh0 && a.oh * s.sh - s.pt + (kh1 - 1) * s.dh >= s.h) --kh1;
  int64_t in_lo = 0, in_hi = s.ow;  // ow in [in_lo, in_hi): all kw inside
  while (in_lo < s.ow && in_lo * s.sw - s.pl < 0) ++in_lo;
  while (in_hi > in_lo && (in_hi - 1) * s.sw - s.pl + (kw_n - 1) * s.dw >= s.w) --in_hi;
  if (in_hi < in_lo) in_hi = in_lo;
  for (int64_t c0 = 0; c0 + 16 <= C; c0 += 16) {
    v16 wv[K ? K * K : 1];
    if constexpr (K != 0)
      for (int t = 0; t < K * K; ++t) wv[t] = FX_LOAD16(a.w + t * C + c0);
    const v16 bias = FX_LOAD16(a.b + c0);
    // Three stretches of the row: left edge, inside (no column test), right edge.
    const int64_t ends[3] = {in_lo, in_hi, s.ow};
    for (int64_t seg = 0, ow = 0; seg < 3; ++seg) {
      const bool edge = seg != 1;
      // Inside, four pixels at a time: four independent multiply-add chains (one
      // chain waits for each FMA's latency) sharing each weight.
      for (; !edge && ow + 4 <= ends[seg]; ow += 4) {
        v16 acc0 = bias, acc1 = bias, acc2 = bias, acc3 = bias;
        const int64_t iw0 = ow * s.sw - s.pl, step = s.sw * C;
        for (int64_t kh = kh0; kh < kh1; ++kh) {
          const float* xr = a.img + (a.oh * s.sh - s.pt + kh * s.dh) * s.w * C + c0 + iw0 * C;
          for (int64_t kw = 0; kw < kw_n; ++kw) {
            v16 wk;
            if constexpr (K != 0)
              wk = wv[kh * K + kw];
            else
              wk = FX_LOAD16(a.w + (kh * kw_n + kw) * C + c0);
            const float* xp = xr + kw * s.dw * C;
            acc0 += FX_LOAD16(xp) * wk;
            acc1 += FX_LOAD16(xp + step) * wk;
            acc2 += FX_LOAD16(xp + 2 * step) * wk;
            acc3 += FX_LOAD16(xp + 3 * step) * wk;
          }
        }
        float* o = a.out + ow * C + c0;
        FX_STORE16(o, acc0);
        FX_STORE16(o + C, acc1);
        FX_STORE16(o + 2 * C, acc2);
        FX_STORE16(o + 3 * C, acc3);
      }
      for (; ow < ends[seg]; ++ow) {
        v16 acc = bias;
        const int64_t iw0 = ow * s.sw - s.pl;
        for (int64_t kh = kh0; kh < kh1; ++kh) {
          const float* xr = a.img + (a.oh * s.sh - s.pt + kh * s.dh) * s.w * C + c0;
          for (int64_t kw = 0; kw < kw_n; ++kw) {
            const int64_t iw = iw0 + kw * s.dw;
            if (edge && (iw < 0 || iw >= s.w)) continue;
            if constexpr (K != 0)
              acc += FX_LOAD16(xr + iw * C) * wv[kh * K + kw];
            else
              acc += FX_LOAD16(xr + iw * C) * FX_LOAD16(a.w + (kh * kw_n + kw) * C + c0);
          }
        }
        FX_STORE16(a.out + ow * C + c0, acc);
      }
    }
  }
}

// The channels of one output row past the last full block of 16, plainly.
void row_tail(const RowArgs& a) {
  const DepthwiseShape& s = *a.s;
  const int64_t C = s.c, c_begin = C / 16 * 16;
  if (c_begin == C) return;
  for (int64_t ow = 0; ow < s.ow; ++ow) {
    float* o = a.out + ow * C;
    for (int64_t c = c_begin; c < C; ++c) o[c] = a.b[c];
    for (int64_t kh = 0; kh < s.kh; ++kh) {
      const int64_t ih = a.oh * s.sh - s.pt + kh * s.dh;
      if (ih < 0 || ih >= s.h) continue;
      for (int64_t kw = 0; kw < s.kw; ++kw) {
        const int64_t iw = ow * s.sw - s.pl + kw * s.dw;
        if (iw < 0 || iw >= s.w) continue;
        const float* xi = a.img + (ih * s.w + iw) * C;
        const float* wi = a.w + (kh * s.kw + kw) * C;
        for (int64_t c = c_begin; c < C; ++c) o[c] += wi[c] * xi[c];
      }
    }
  }
}

}  // namespace

DepthwiseNhwc::DepthwiseNhwc(const DepthwiseShape& s, const std::vector<float>& w,
                             const std::vector<float>& bias)
    : s_(s) {
  const int64_t taps = s.kh * s.kw;
  w_.resize(static_cast<std::size_t>(taps * s.c));
  for (int64_t c = 0; c < s.c; ++c)
    for (int64_t t = 0; t < taps; ++t)
      w_[static_cast<std::size_t>(t * s.c + c)] = w[static_cast<std::size_t>(c * taps + t)];
  bias_ = bias.empty() ? std::vector<float>(static_cast<std::size_t>(s.c), 0.f) : bias;
}

void DepthwiseNhwc::run(const float* x, float* y, const ConvEpilogue* ep,
                        const std::vector<const float*>& residuals) const {
  const int64_t rows_total = s_.n * s_.oh;
  parallel_for(rows_total, s_.ow * s_.c * s_.kh * s_.kw,
               [&](int64_t r0, int64_t r1) { this->rows(x, y, ep, residuals, r0, r1); });
}

void DepthwiseNhwc::rows(const float* x, float* y, const ConvEpilogue* ep,
                         const std::vector<const float*>& residuals, int64_t r0, int64_t r1) const {
  const int64_t C = s_.c;
  const int k = s_.kh == s_.kw && (s_.kh == 3 || s_.kh == 5) ? static_cast<int>(s_.kh) : 0;
  std::vector<const float*> res(residuals.size());
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / s_.oh;
    RowArgs a{&s_, x + n * s_.h * s_.w * C, w_.data(), bias_.data(), y + r * s_.ow * C, r % s_.oh};
    if (k == 3)
      row_blocks<3>(a);
    else if (k == 5)
      row_blocks<5>(a);
    else
      row_blocks<0>(a);
    row_tail(a);
    if (ep && !ep->empty()) {
      for (std::size_t i = 0; i < res.size(); ++i) res[i] = residuals[i] + r * s_.ow * C;
      ep->apply_span(a.out, s_.ow * C, res.data());
    }
  }
}

}  // namespace fx
