// SPDX-License-Identifier: Apache-2.0
// GridSample (opset 16, 4-D): each output pixel reads the input at a normalized
// (x, y) location from the grid, by nearest, bilinear or bicubic interpolation,
// with zeros, border or reflection padding. Bilinear and nearest with zeros or
// border padding take a float fast path that computes each output pixel's taps
// once for every channel and spreads pixels over threads; bicubic and
// reflection keep the double-precision reference loop.

#include <algorithm>
#include <cmath>

#include "runtime/cubic.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

enum class Mode { Nearest, Bilinear, Bicubic };
enum class Padding { Zeros, Border, Reflection };

struct GridSampleAttrs {
  Mode mode = Mode::Bilinear;
  Padding padding = Padding::Zeros;
  bool align_corners = false;
};

// x reflected into [lo, hi] (repeatedly, as a mirror would).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double d = lo - x;
    const auto n = static_cast<int64_t>(d / range);
    const double r = d - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double d = x - hi;
    const auto n = static_cast<int64_t>(d / range);
    const double r = d - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

class Sampler {
 public:
  Sampler(const GridSampleAttrs &a, int64_t h, int64_t w) : a_(a), h_(h), w_(w) {}

  // Normalized [-1, 1] to pixel coordinates.
  double unnormalize(double g, int64_t size) const {
    return a_.align_corners ? (g + 1) / 2 * static_cast<double>(size - 1)
                            : ((g + 1) * static_cast<double>(size) - 1) / 2;
  }
  // The padding rule applied to a coordinate (border: clamp; reflection:
  // mirror).
  double pad_coord(double x, int64_t size) const {
    if (a_.padding == Padding::Border) return std::clamp(x, 0.0, static_cast<double>(size - 1));
    if (a_.padding == Padding::Reflection) {
      x = a_.align_corners ? reflect(x, 0, static_cast<double>(size - 1))
                           : reflect(x, -0.5, static_cast<double>(size) - 0.5);
      return std::clamp(x, 0.0, static_cast<double>(size - 1));
    }
    return x;
  }
  // The pixel (y, x) of one plane, under the padding rule.
  double pixel(const float *plane, int64_t y, int64_t x) const {
    if (a_.padding == Padding::Zeros) {
      if (y < 0 || y >= h_ || x < 0 || x >= w_) return 0;
    } else {
      y = static_cast<int64_t>(pad_coord(static_cast<double>(y), h_));
      x = static_cast<int64_t>(pad_coord(static_cast<double>(x), w_));
    }
    return plane[y * w_ + x];
  }

  double sample(const float *plane, double gx, double gy) const {
    double x = unnormalize(gx, w_), y = unnormalize(gy, h_);
    if (a_.mode != Mode::Bicubic) {
      x = pad_coord(x, w_);
      y = pad_coord(y, h_);
    }
    if (a_.mode == Mode::Nearest) {
      return pixel(plane, static_cast<int64_t>(std::nearbyint(y)),
                   static_cast<int64_t>(std::nearbyint(x)));
    }
    const double fx0 = std::floor(x), fy0 = std::floor(y);
    const auto x0 = static_cast<int64_t>(fx0), y0 = static_cast<int64_t>(fy0);
    const double tx = x - fx0, ty = y - fy0;
    if (a_.mode == Mode::Bilinear) {
      return (1 - ty) * ((1 - tx) * pixel(plane, y0, x0) + tx * pixel(plane, y0, x0 + 1)) +
             ty * ((1 - tx) * pixel(plane, y0 + 1, x0) + tx * pixel(plane, y0 + 1, x0 + 1));
    }
    const auto wx = cubic_weights(tx, -0.75), wy = cubic_weights(ty, -0.75);
    double sum = 0;
    for (int i = 0; i < 4; ++i) {
      double row = 0;
      for (int j = 0; j < 4; ++j) row += wx[j] * pixel(plane, y0 - 1 + i, x0 - 1 + j);
      sum += wy[i] * row;
    }
    return sum;
  }

 private:
  GridSampleAttrs a_;
  int64_t h_, w_;
};

// The taps of one output pixel: up to four input offsets and their weights; a
// tap outside the plane under zeros padding has weight 0 and offset 0.
struct Taps {
  int64_t at[4];
  float weight[4];
};

// Bilinear or nearest sampling with zeros or border padding, in float: the grid
// is read once per output pixel and its taps serve every channel.
class FastSampler {
 public:
  FastSampler(const GridSampleAttrs &a, int64_t h, int64_t w) : a_(a), h_(h), w_(w) {
    const auto fw = static_cast<float>(w), fh = static_cast<float>(h);
    // Both unnormalize conventions are x = g * scale + (size - 1) / 2.
    sx_ = a.align_corners ? (fw - 1) / 2 : fw / 2;
    sy_ = a.align_corners ? (fh - 1) / 2 : fh / 2;
    bx_ = (fw - 1) / 2;
    by_ = (fh - 1) / 2;
  }

  static bool handles(const GridSampleAttrs &a) {
    return a.mode != Mode::Bicubic && a.padding != Padding::Reflection;
  }

  Taps taps(float gx, float gy) const {
    // Clamped to one pixel beyond each edge, where zeros padding reads only zeros
    // anyway: the integer conversions below then stay in range for any grid value
    // (NaN included, which clamps to the low edge).
    const float x = clamp_coord(gx * sx_ + bx_, w_), y = clamp_coord(gy * sy_ + by_, h_);
    Taps t{};
    if (a_.mode == Mode::Nearest) {
      set(t, 0, round_half_even(y), round_half_even(x), 1.0f);
      return t;
    }
    const int64_t x0 = floor_of(x), y0 = floor_of(y);
    const float tx = x - static_cast<float>(x0), ty = y - static_cast<float>(y0);
    set(t, 0, y0, x0, (1 - ty) * (1 - tx));
    set(t, 1, y0, x0 + 1, (1 - ty) * tx);
    set(t, 2, y0 + 1, x0, ty * (1 - tx));
    set(t, 3, y0 + 1, x0 + 1, ty * tx);
    return t;
  }

 private:
  float clamp_coord(float v, int64_t size) const {
    const float hi = static_cast<float>(size - 1);
    if (a_.padding == Padding::Border) return v >= 0 ? (v <= hi ? v : hi) : 0.0f;
    return v >= -2 ? (v <= hi + 2 ? v : hi + 2) : -2.0f;
  }
  // floor and round-half-to-even of a value in [-2, size + 1], without a libm call.
  static int64_t floor_of(float v) { return static_cast<int64_t>(v + 2.0f) - 2; }
  static int64_t round_half_even(float v) {
    constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
    return static_cast<int64_t>((v + kMagic) - kMagic);
  }

  // A tap at (y, x); under border padding the clamped coordinate can still step
  // one past the last pixel with a zero weight, so it is clamped too.
  void set(Taps &t, int k, int64_t y, int64_t x, float weight) const {
    if (a_.padding == Padding::Border) {
      y = std::clamp<int64_t>(y, 0, h_ - 1);
      x = std::clamp<int64_t>(x, 0, w_ - 1);
    } else if (y < 0 || y >= h_ || x < 0 || x >= w_) {
      t.at[k] = 0;
      t.weight[k] = 0;
      return;
    }
    t.at[k] = y * w_ + x;
    t.weight[k] = weight;
  }

  GridSampleAttrs a_;
  int64_t h_, w_;
  float sx_, bx_, sy_, by_;
};

void grid_sample_fast(const GridSampleAttrs &a, const float *xp, const float *gp, float *yp,
                      int64_t n, int64_t c, int64_t h, int64_t w, int64_t ho, int64_t wo) {
  const FastSampler s(a, h, w);
  const int64_t pixels = ho * wo, plane = h * w;
  const int taps = a.mode == Mode::Nearest ? 1 : 4;
  // Simple operations per output pixel: the coordinate transform, clamps, floors,
  // weights and bounds checks of its taps, then a multiply-add per tap and channel.
  const int64_t per_pixel = (taps == 1 ? 12 : 28) + 2 * taps * c;
  parallel_for(n, pixels * per_pixel, [&](int64_t b, int64_t e) {
    for (int64_t img = b; img < e; ++img) {
      const float *src0 = xp + img * c * plane;
      const float *g = gp + img * pixels * 2;
      float *dst0 = yp + img * c * pixels;
      for (int64_t p = 0; p < pixels; ++p) {
        const Taps t = s.taps(g[2 * p], g[2 * p + 1]);
        const float *src = src0;
        float *dst = dst0 + p;
        for (int64_t ch = 0; ch < c; ++ch, src += plane, dst += pixels) {
          float v = 0;
          for (int k = 0; k < taps; ++k) v += t.weight[k] * src[t.at[k]];
          *dst = v;
        }
      }
    }
  });
}

void grid_sample(KernelContext &ctx, const GridSampleAttrs &a) {
  const Tensor &x = ctx.in(0);
  const Tensor &grid = ctx.in(1);
  if (x.dtype() != DType::Float32 || grid.dtype() != DType::Float32)
    throw Error("GridSample: float32 input and grid expected, got " + x.str() + " " + grid.str());
  if (x.rank() != 4 || grid.rank() != 4 || grid.dim(3) != 2 || grid.dim(0) != x.dim(0))
    throw Error("GridSample: expects X [N,C,H,W] and grid [N,H_out,W_out,2], got " + x.str() + " " +
                grid.str());
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t ho = grid.dim(1), wo = grid.dim(2);
  Tensor &y = ctx.output(0, DType::Float32, {n, c, ho, wo});
  const float *xp = x.data<float>();
  const float *gp = grid.data<float>();
  float *yp = y.data<float>();
  if (FastSampler::handles(a) && h > 0 && w > 0) {
    grid_sample_fast(a, xp, gp, yp, n, c, h, w, ho, wo);
    return;
  }
  const Sampler s(a, h, w);
  parallel_for(n * c, ho * wo * 16, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const float *plane = xp + nc * h * w;
      const float *g = gp + (nc / c) * ho * wo * 2;
      float *out = yp + nc * ho * wo;
      for (int64_t p = 0; p < ho * wo; ++p)
        out[p] = static_cast<float>(s.sample(plane, g[2 * p], g[2 * p + 1]));
    }
  });
}

}  // namespace

void register_sampling_kernels(KernelTable &t) {
  t["GridSample"] = [](const Graph &, const Node &n) {
    GridSampleAttrs a;
    const std::string mode = n.attrs.get_string("mode", "bilinear");
    const std::string pad = n.attrs.get_string("padding_mode", "zeros");
    if (mode == "nearest")
      a.mode = Mode::Nearest;
    else if (mode == "bicubic" || mode == "cubic")
      a.mode = Mode::Bicubic;
    else if (mode != "bilinear" && mode != "linear")
      throw Error("GridSample: unknown mode '" + mode + "'");
    if (pad == "border")
      a.padding = Padding::Border;
    else if (pad == "reflection")
      a.padding = Padding::Reflection;
    else if (pad != "zeros")
      throw Error("GridSample: unknown padding_mode '" + pad + "'");
    a.align_corners = n.attrs.get_int("align_corners", 0) != 0;
    return fn_kernel([a](KernelContext &ctx) { grid_sample(ctx, a); });
  };
}

}  // namespace fx
