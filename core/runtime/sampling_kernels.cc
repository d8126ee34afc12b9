// SPDX-License-Identifier: Apache-2.0
// GridSample (opset 16, 4-D): each output pixel reads the input at a normalized
// (x, y) location from the grid, by nearest, bilinear or bicubic interpolation,
// with zeros, border or reflection padding. Nearest and bilinear find each output
// pixel's taps (source offsets and weights) once per image and then gather every channel
// with them, spread over threads; bicubic is a plain loop (reference speed).

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
  Sampler(const GridSampleAttrs& a, int64_t h, int64_t w) : a_(a), h_(h), w_(w) {}

  // Normalized [-1, 1] to pixel coordinates.
  double unnormalize(double g, int64_t size) const {
    return a_.align_corners ? (g + 1) / 2 * static_cast<double>(size - 1)
                            : ((g + 1) * static_cast<double>(size) - 1) / 2;
  }
  // The padding rule applied to a coordinate (border: clamp; reflection: mirror).
  double pad_coord(double x, int64_t size) const {
    if (a_.padding == Padding::Border) return std::clamp(x, 0.0, static_cast<double>(size - 1));
    if (a_.padding == Padding::Reflection) {
      x = a_.align_corners ? reflect(x, 0, static_cast<double>(size - 1))
                           : reflect(x, -0.5, static_cast<double>(size) - 0.5);
      return std::clamp(x, 0.0, static_cast<double>(size - 1));
    }
    return x;
  }
  // The offset of pixel (y, x) in a plane under the padding rule; -1: it reads a zero.
  int64_t offset(int64_t y, int64_t x) const {
    if (a_.padding == Padding::Zeros) {
      if (y < 0 || y >= h_ || x < 0 || x >= w_) return -1;
    } else {
      y = static_cast<int64_t>(pad_coord(static_cast<double>(y), h_));
      x = static_cast<int64_t>(pad_coord(static_cast<double>(x), w_));
    }
    return y * w_ + x;
  }
  double pixel(const float* plane, int64_t y, int64_t x) const {
    const int64_t o = offset(y, x);
    return o < 0 ? 0.0 : plane[o];
  }

  // Taps of one output pixel: 1 (nearest) or 4 (bilinear) offsets and weights.
  int taps() const { return a_.mode == Mode::Nearest ? 1 : 4; }
  void find_taps(double gx, double gy, int64_t* at, float* wt) const {
    const double x = pad_coord(unnormalize(gx, w_), w_), y = pad_coord(unnormalize(gy, h_), h_);
    if (a_.mode == Mode::Nearest) {
      at[0] =
          offset(static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)));
      wt[0] = 1;
      return;
    }
    const double fx0 = std::floor(x), fy0 = std::floor(y);
    const auto x0 = static_cast<int64_t>(fx0), y0 = static_cast<int64_t>(fy0);
    const double tx = x - fx0, ty = y - fy0;
    at[0] = offset(y0, x0), at[1] = offset(y0, x0 + 1);
    at[2] = offset(y0 + 1, x0), at[3] = offset(y0 + 1, x0 + 1);
    wt[0] = static_cast<float>((1 - ty) * (1 - tx)), wt[1] = static_cast<float>((1 - ty) * tx);
    wt[2] = static_cast<float>(ty * (1 - tx)), wt[3] = static_cast<float>(ty * tx);
  }

  // Bicubic (the 16 taps' weights are separable: computed per pixel, not stored).
  double sample_bicubic(const float* plane, double gx, double gy) const {
    const double x = unnormalize(gx, w_), y = unnormalize(gy, h_);
    const double fx0 = std::floor(x), fy0 = std::floor(y);
    const auto x0 = static_cast<int64_t>(fx0), y0 = static_cast<int64_t>(fy0);
    const double tx = x - fx0, ty = y - fy0;
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

void grid_sample(KernelContext& ctx, const GridSampleAttrs& a) {
  const Tensor& x = ctx.in(0);
  const Tensor& grid = ctx.in(1);
  if (x.dtype() != DType::Float32 || grid.dtype() != DType::Float32)
    throw Error("GridSample: float32 input and grid expected, got " + x.str() + " " + grid.str());
  if (x.rank() != 4 || grid.rank() != 4 || grid.dim(3) != 2 || grid.dim(0) != x.dim(0))
    throw Error("GridSample: expects X [N,C,H,W] and grid [N,H_out,W_out,2], got " + x.str() + " " +
                grid.str());
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t ho = grid.dim(1), wo = grid.dim(2);
  Tensor& y = ctx.output(0, DType::Float32, {n, c, ho, wo});
  const Sampler s(a, h, w);
  const float* xp = x.data<float>();
  const float* gp = grid.data<float>();
  float* yp = y.data<float>();
  const int64_t pixels = ho * wo;
  if (a.mode == Mode::Bicubic) {
    parallel_for(n * c, pixels * 16, [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc) {
        const float* plane = xp + nc * h * w;
        const float* g = gp + (nc / c) * pixels * 2;
        float* out = yp + nc * pixels;
        for (int64_t p = 0; p < pixels; ++p)
          out[p] = static_cast<float>(s.sample_bicubic(plane, g[2 * p], g[2 * p + 1]));
      }
    });
    return;
  }
  // The taps depend on the grid only: found once per image, shared by its channels.
  const int k = s.taps();
  std::vector<int64_t> at(static_cast<std::size_t>(pixels * k));
  std::vector<float> wt(at.size());
  for (int64_t i = 0; i < n; ++i) {
    const float* g = gp + i * pixels * 2;
    parallel_for(pixels, 32, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) s.find_taps(g[2 * p], g[2 * p + 1], &at[p * k], &wt[p * k]);
    });
    parallel_for(c, pixels * k, [&](int64_t b, int64_t e) {
      for (int64_t ch = b; ch < e; ++ch) {
        const float* plane = xp + (i * c + ch) * h * w;
        float* out = yp + (i * c + ch) * pixels;
        for (int64_t p = 0; p < pixels; ++p) {
          float acc = 0;
          for (int j = 0; j < k; ++j) {
            const int64_t o = at[p * k + j];
            acc += o < 0 ? 0.f : wt[p * k + j] * plane[o];
          }
          out[p] = acc;
        }
      }
    });
  }
}

}  // namespace

void register_sampling_kernels(KernelTable& t) {
  t["GridSample"] = [](const Graph&, const Node& n) {
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
    return fn_kernel([a](KernelContext& ctx) { grid_sample(ctx, a); });
  };
}

}  // namespace fx
