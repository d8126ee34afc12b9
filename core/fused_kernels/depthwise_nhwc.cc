// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/depthwise_nhwc.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/parallel.h"
#include "runtime/thread_pool.h"
#include "util/error.h"

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
// Clamps to [lov, hiv] (vectors in scope) and stores.
#define FX_DW_STORE(o, v)              \
  do {                                 \
    v16 fx_v_ = (v) < lov ? lov : (v); \
    fx_v_ = fx_v_ > hiv ? hiv : fx_v_; \
    FX_STORE16((o), fx_v_);            \
  } while (0)

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

// The fast path of row_blocks(): kernel K x K, stride S (1 or 2), no dilation, C a
// multiple of 16; the output clamped to [lo, hi] (a Clip or Relu epilogue) as it is
// stored. `wb` holds the weights blocked as [C / 16][K * K][16], so that every weight
// of a group of channel blocks is at a compile-time offset. Inside the row, NB blocks
// of 16 channels times PX pixels at a time (NB * PX = 8): eight independent
// multiply-add chains cover the latency of both FMA units, and the loads of one
// pixel's NB blocks share one address register (offsets within a pixel are
// constants; across pixels they are multiples of C, which takes registers).
template <int K, int S, int NB, int PX>
FX_DW_CLONES void dw_group(const RowArgs& a, const float* wg, int64_t c0, int64_t in_lo,
                           int64_t in_hi, int64_t kh0, int64_t kh1, float lo, float hi) {
  constexpr int T = K * K;
  const DepthwiseShape& s = *a.s;
  const int64_t C = s.c, W = s.w;
  const int64_t ih0 = a.oh * S - s.pt;
  v16 lov, hiv;
  for (int i = 0; i < 16; ++i) lov[i] = lo, hiv[i] = hi;
  // wg: the group's weights, [NB][T][16].
  v16 bias[NB];
  for (int j = 0; j < NB; ++j) bias[j] = FX_LOAD16(a.b + c0 + 16 * j);
  const float* img = a.img + ih0 * W * C + c0;  // may point before the image
  // One pixel with column tests (the row's edges, and what is left of the inside).
  auto one = [&](int64_t ow, bool edge) __attribute__((always_inline)) {
    v16 acc[NB];
    for (int j = 0; j < NB; ++j) acc[j] = bias[j];
    const int64_t iw0 = ow * S - s.pl;
    for (int64_t kh = kh0; kh < kh1; ++kh) {
      const float* xr = img + kh * W * C;
      for (int kw = 0; kw < K; ++kw) {
        const int64_t iw = iw0 + kw;
        if (edge && (iw < 0 || iw >= W)) continue;
        for (int j = 0; j < NB; ++j)
          acc[j] += FX_LOAD16(xr + iw * C + 16 * j) * FX_LOAD16(wg + (j * T + kh * K + kw) * 16);
      }
    }
    for (int j = 0; j < NB; ++j) FX_DW_STORE(a.out + ow * C + c0 + 16 * j, acc[j]);
  };
  int64_t ow = 0;
  for (; ow < in_lo; ++ow) one(ow, true);
  for (; ow + PX <= in_hi; ow += PX) {
    v16 acc[PX][NB];
#pragma GCC unroll 8
    for (int p = 0; p < PX; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NB; ++j) acc[p][j] = bias[j];
    const float* x0 = img + (ow * S - s.pl) * C;
#pragma GCC unroll 5
    for (int kh = 0; kh < K; ++kh) {
      if (kh < kh0 || kh >= kh1) continue;
      const float* xr = x0 + kh * W * C;
#pragma GCC unroll 5
      for (int kw = 0; kw < K; ++kw) {
#pragma GCC unroll 8
        for (int j = 0; j < NB; ++j) {
          const v16 wk = FX_LOAD16(wg + (j * T + kh * K + kw) * 16);
#pragma GCC unroll 8
          for (int p = 0; p < PX; ++p) acc[p][j] += FX_LOAD16(xr + (p * S + kw) * C + 16 * j) * wk;
        }
      }
    }
    float* o = a.out + ow * C + c0;
#pragma GCC unroll 8
    for (int p = 0; p < PX; ++p)
#pragma GCC unroll 8
      for (int j = 0; j < NB; ++j) FX_DW_STORE(o + p * C + 16 * j, acc[p][j]);
  }
  for (; ow < in_hi; ++ow) one(ow, false);
  for (; ow < s.ow; ++ow) one(ow, true);
}

// One output row on the fast path: groups of 4 channel blocks, then 2, then 1.
template <int K, int S>
void row_blocks_fast(const RowArgs& a, const float* wb, float lo, float hi) {
  const DepthwiseShape& s = *a.s;
  const int64_t ih0 = a.oh * S - s.pt;  // input row of kh = 0
  int64_t kh0 = 0, kh1 = K;
  while (kh0 < K && ih0 + kh0 < 0) ++kh0;
  while (kh1 > kh0 && ih0 + kh1 - 1 >= s.h) --kh1;
  int64_t in_lo = 0, in_hi = s.ow;  // ow in [in_lo, in_hi): all kw inside
  while (in_lo < s.ow && in_lo * S - s.pl < 0) ++in_lo;
  while (in_hi > in_lo && (in_hi - 1) * S - s.pl + K - 1 >= s.w) --in_hi;
  if (in_hi < in_lo) in_hi = in_lo;
  constexpr int64_t T = K * K;
  int64_t c0 = 0;
  for (; c0 + 64 <= s.c; c0 += 64)
    dw_group<K, S, 4, 2>(a, wb + c0 * T, c0, in_lo, in_hi, kh0, kh1, lo, hi);
  for (; c0 + 32 <= s.c; c0 += 32)
    dw_group<K, S, 2, 4>(a, wb + c0 * T, c0, in_lo, in_hi, kh0, kh1, lo, hi);
  for (; c0 + 16 <= s.c; c0 += 16)
    dw_group<K, S, 1, 8>(a, wb + c0 * T, c0, in_lo, in_hi, kh0, kh1, lo, hi);
  // Channels past the last full block: the block of the last 16 channels, overlapping
  // the one before (its other channels are computed again, to the same values), with
  // its weights blocked after the full blocks'.
  if (c0 < s.c) dw_group<K, S, 1, 8>(a, wb + c0 * T, s.c - 16, in_lo, in_hi, kh0, kh1, lo, hi);
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

typedef int vi16 __attribute__((vector_size(64)));

// Tiles as 16 vectors r[16]: rows i and i + b (i without bit b) exchange the columns
// that have bit b (lo/hi: the shuffle masks that keep row i's others, and row i + b's).
#define FX_DW_SWAP(b, lo, hi)                                \
  _Pragma("GCC unroll 16") for (int i = 0; i < 16; ++i) {    \
    if (i & (b)) continue;                                   \
    const v16 u = __builtin_shuffle(r[i], r[i + (b)], (lo)); \
    r[i + (b)] = __builtin_shuffle(r[i], r[i + (b)], (hi));  \
    r[i] = u;                                                \
  }

// Output pixels [ow][C] (channels-last, in cache; one or more whole rows) into an
// NCHW output: channel c's pixels go to y[c * plane + ow]. Tiles of 16 pixels x 16 channels are
// transposed in registers, by four stages of two-input shuffles that swap the off-diagonal blocks
// of 8, 4, 2, then 1 between pairs of vectors. 16 pixels or more end with a tile
// that overlaps the one before it; fewer pixels and channels past the last block of
// 16 are copied one by one.
FX_DW_CLONES void row_to_nchw(const float* row, int64_t ow_n, int64_t C, float* y, int64_t plane) {
  const int64_t cb = C / 16 * 16, pb = ow_n < 16 ? 0 : ow_n;
  const vi16 lo8 = {0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23};
  const vi16 hi8 = {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31};
  const vi16 lo4 = {0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27};
  const vi16 hi4 = {4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31};
  const vi16 lo2 = {0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29};
  const vi16 hi2 = {2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31};
  const vi16 lo1 = {0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30};
  const vi16 hi1 = {1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31};
  for (int64_t c0 = 0; c0 < cb; c0 += 16) {
    for (int64_t t = 0; t < pb; t += 16) {
      const int64_t p0 = std::min(t, ow_n - 16);
      v16 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) r[i] = FX_LOAD16(row + (p0 + i) * C + c0);
      FX_DW_SWAP(8, lo8, hi8)
      FX_DW_SWAP(4, lo4, hi4)
      FX_DW_SWAP(2, lo2, hi2)
      FX_DW_SWAP(1, lo1, hi1)
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) FX_STORE16(y + (c0 + j) * plane + p0, r[j]);
    }
  }
  for (int64_t c = 0; c < cb; ++c)
    for (int64_t p = pb; p < ow_n; ++p) y[c * plane + p] = row[p * C + c];
  for (int64_t c = cb; c < C; ++c)
    for (int64_t p = 0; p < ow_n; ++p) y[c * plane + p] = row[p * C + c];
}

// An epilogue that is a lone Clip or Relu (slope 0) as bounds [lo, hi].
bool clamp_of(const ConvEpilogue& ep, float* lo, float* hi) {
  if (ep.ops().size() != 1) return false;
  const EpilogueOp& op = ep.ops()[0];
  if (op.kind == EpilogueOp::Clip) {
    *lo = op.alpha;
    *hi = op.beta;
    return true;
  }
  if (op.kind == EpilogueOp::Relu && op.alpha == 0.f) {
    *lo = 0.f;
    return true;
  }
  return false;
}

// Below this many multiply-adds a convolution runs on the calling thread
// (parallel_for's threshold).
constexpr int64_t kMinSplitWork = 262144;

}  // namespace

DepthwiseNhwc::DepthwiseNhwc(const DepthwiseShape& s, const std::vector<float>& w,
                             const std::vector<float>& bias)
    : s_(s) {
  const int64_t taps = s.kh * s.kw;
  w_.resize(static_cast<std::size_t>(taps * s.c));
  for (int64_t c = 0; c < s.c; ++c)
    for (int64_t t = 0; t < taps; ++t)
      w_[static_cast<std::size_t>(t * s.c + c)] = w[static_cast<std::size_t>(c * taps + t)];
  // [C / 16][taps][16] for the fast path (every weight of a channel group at a
  // compile-time offset), then, when C is no multiple of 16, the block of the last 16
  // channels (row_blocks_fast's overlapping last block).
  if (s.c >= 16) {
    const int64_t full = s.c / 16, blocks = full + (s.c % 16 != 0);
    w_blocked_.resize(static_cast<std::size_t>(blocks * taps * 16));
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t i = 0; i < 16; ++i) {
        const int64_t c = b < full ? b * 16 + i : s.c - 16 + i;
        for (int64_t t = 0; t < taps; ++t)
          w_blocked_[static_cast<std::size_t>((b * taps + t) * 16 + i)] =
              w[static_cast<std::size_t>(c * taps + t)];
      }
  }
  bias_ = bias.empty() ? std::vector<float>(static_cast<std::size_t>(s.c), 0.f) : bias;
}

void DepthwiseNhwc::run(const float* x, float* y, const ConvEpilogue* ep,
                        const std::vector<const float*>& residuals, bool y_nchw) const {
  if (y_nchw && !residuals.empty())
    throw Error("depthwise convolution: an NCHW output takes no residual");
  const int64_t rows_total = s_.n * s_.oh;
  const int threads = current_threads();
  const int64_t work = rows_total * s_.ow * s_.c * s_.kh * s_.kw;
  if (threads > 1 && rows_total >= threads && work >= kMinSplitWork) {
    // One contiguous band of rows per thread, like the row parts of the channels-last
    // convolutions around it (conv_path_nhwc_rows.cc): the thread that wrote the band
    // of the input this band reads has it in its own L2 (MobileNetV2's expanded
    // activations are ~1-2 MiB), which the interleaved chunks of parallel_for lost.
    pool_run(threads, threads, [&](int64_t t) {
      this->rows(x, y, ep, residuals, rows_total * t / threads, rows_total * (t + 1) / threads,
                 y_nchw);
    });
    return;
  }
  parallel_for(rows_total, s_.ow * s_.c * s_.kh * s_.kw,
               [&](int64_t r0, int64_t r1) { this->rows(x, y, ep, residuals, r0, r1, y_nchw); });
}

bool DepthwiseNhwc::can_run_in_place() const {
  const int64_t k = s_.kh, p = (k - 1) / 2;
  return s_.n == 1 && s_.kw == k && k % 2 == 1 && s_.sh == 1 && s_.sw == 1 && s_.dh == 1 &&
         s_.dw == 1 && s_.pt == p && s_.pl == p && s_.oh == s_.h && s_.ow == s_.w;
}

void DepthwiseNhwc::run_in_place(float* xy, const ConvEpilogue* ep) const {
  const int64_t p = (s_.kh - 1) / 2, H = s_.h, row = s_.w * s_.c;  // floats per row
  const auto row_bytes = static_cast<std::size_t>(row) * sizeof(float);
  const int threads = current_threads();
  const int64_t work = H * s_.ow * s_.c * s_.kh * s_.kw;
  const int bands = threads > 1 && H >= 2 * threads && work >= kMinSplitWork ? threads : 1;
  std::vector<int64_t> start(static_cast<std::size_t>(bands) + 1);
  for (int t = 0; t <= bands; ++t) start[static_cast<std::size_t>(t)] = H * t / bands;
  // halo[t]: input rows [max(0, b - p), min(H, b + p)) around boundary b = start[t],
  // copied before any band writes (either neighbour may overwrite its side first).
  std::vector<std::vector<float>> halo(static_cast<std::size_t>(bands) + 1);
  auto halo_lo = [&](int64_t b) { return std::max<int64_t>(0, b - p); };
  for (int t = 1; t < bands; ++t) {
    const int64_t b = start[static_cast<std::size_t>(t)];
    halo[static_cast<std::size_t>(t)].assign(xy + halo_lo(b) * row, xy + std::min(H, b + p) * row);
  }
  auto band = [&](int64_t t) {
    const auto u = static_cast<std::size_t>(t);
    const int64_t r0 = start[u], r1 = start[u + 1];
    // Input row q as this band reads it: outside the band from the saved rows, inside
    // in place (the band writes row q back only once no later row of it reads row q).
    auto src_row = [&](int64_t q) -> const float* {
      if (q < r0) return halo[u].data() + (q - halo_lo(r0)) * row;
      if (q >= r1) return halo[u + 1].data() + (q - halo_lo(r1)) * row;
      return xy + q * row;
    };
    std::vector<float> ring(static_cast<std::size_t>((p + 1) * row));
    std::vector<float> window(static_cast<std::size_t>((2 * p + 1) * row));
    auto slot = [&](int64_t r) { return ring.data() + (r % (p + 1)) * row; };
    for (int64_t r = r0; r < r1; ++r) {
      const float* base = xy;
      if (r - p < r0 || r + p >= r1) {
        // A window of input rows r - p .. r + p (those inside the image), addressed as
        // the image would be.
        for (int64_t q = std::max<int64_t>(0, r - p); q < std::min(H, r + p + 1); ++q)
          std::memcpy(window.data() + (q - (r - p)) * row, src_row(q), row_bytes);
        base = window.data() - (r - p) * row;
      }
      rows(base, slot(r) - r * row, ep, {}, r, r + 1);
      // Row r - p of the input is read by no later row of this band.
      if (r - p >= r0) std::memcpy(xy + (r - p) * row, slot(r - p), row_bytes);
    }
    for (int64_t r = std::max(r0, r1 - p); r < r1; ++r)
      std::memcpy(xy + r * row, slot(r), row_bytes);
  };
  if (bands == 1) {
    band(0);
    return;
  }
  pool_run(bands, threads, band);
}

void DepthwiseNhwc::rows(const float* x, float* y, const ConvEpilogue* ep,
                         const std::vector<const float*>& residuals, int64_t r0, int64_t r1,
                         bool y_nchw) const {
  const int64_t C = s_.c;
  const int k = s_.kh == s_.kw && (s_.kh == 3 || s_.kh == 5) ? static_cast<int>(s_.kh) : 0;
  // The fast path: 3x3 or 5x5, stride 1 or 2 (both axes), no dilation, at least 16
  // channels (a tail past the last block of 16 as one more block that overlaps it); a
  // lone Clip or Relu epilogue is then applied in registers.
  const bool fast =
      k != 0 && s_.sh == s_.sw && (s_.sh == 1 || s_.sh == 2) && s_.dh == 1 && s_.dw == 1 && C >= 16;
  float lo = -INFINITY, hi = INFINITY;
  bool ep_done = !ep || ep->empty();
  if (fast && !ep_done) ep_done = clamp_of(*ep, &lo, &hi);
  std::vector<const float*> res(residuals.size());
  // NCHW output: rows go through this thread's buffer, enough of them for 32 pixels
  // (one row of 32 or more; 3 of a 14-wide map), so that the transposition's tiles of
  // 16 pixels span rows on small maps (a channel's pixels are contiguous in NCHW).
  const int64_t plane = s_.oh * s_.ow, chunk = y_nchw ? (32 + s_.ow - 1) / s_.ow : 1;
  thread_local std::vector<float> row_buf;
  if (y_nchw && static_cast<int64_t>(row_buf.size()) < chunk * s_.ow * C)
    row_buf.resize(static_cast<std::size_t>(chunk * s_.ow * C));
  int64_t buffered = 0;  // rows in row_buf
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / s_.oh;
    float* out_row = y_nchw ? row_buf.data() + buffered * s_.ow * C : y + r * s_.ow * C;
    RowArgs a{&s_, x + n * s_.h * s_.w * C, w_.data(), bias_.data(), out_row, r % s_.oh};
    if (fast) {
      const int key = k * 10 + static_cast<int>(s_.sh);
      const float* wb = w_blocked_.data();
      if (key == 31)
        row_blocks_fast<3, 1>(a, wb, lo, hi);
      else if (key == 32)
        row_blocks_fast<3, 2>(a, wb, lo, hi);
      else if (key == 51)
        row_blocks_fast<5, 1>(a, wb, lo, hi);
      else
        row_blocks_fast<5, 2>(a, wb, lo, hi);
    } else {
      if (k == 3)
        row_blocks<3>(a);
      else if (k == 5)
        row_blocks<5>(a);
      else
        row_blocks<0>(a);
      row_tail(a);
    }
    if (!ep_done) {
      for (std::size_t i = 0; i < res.size(); ++i) res[i] = residuals[i] + r * s_.ow * C;
      ep->apply_span(a.out, s_.ow * C, res.data());
    }
    if (!y_nchw) continue;
    // Transposed when the buffer is full, the band ends, or the image does.
    if (++buffered < chunk && r + 1 < r1 && (r + 1) % s_.oh != 0) continue;
    const int64_t first = r % s_.oh + 1 - buffered;
    row_to_nchw(row_buf.data(), buffered * s_.ow, C, y + n * C * plane + first * s_.ow, plane);
    buffered = 0;
  }
}

}  // namespace fx
