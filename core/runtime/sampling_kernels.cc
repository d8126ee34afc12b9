// SPDX-License-Identifier: Apache-2.0
// GridSample (opset 16, 4-D): each output pixel reads the input at a normalized
// (x, y) location from the grid, by nearest, bilinear or bicubic interpolation,
// with zeros, border or reflection padding. Reference speed: no corpus model uses it.

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
  // The pixel (y, x) of one plane, under the padding rule.
  double pixel(const float* plane, int64_t y, int64_t x) const {
    if (a_.padding == Padding::Zeros) {
      if (y < 0 || y >= h_ || x < 0 || x >= w_) return 0;
    } else {
      y = static_cast<int64_t>(pad_coord(static_cast<double>(y), h_));
      x = static_cast<int64_t>(pad_coord(static_cast<double>(x), w_));
    }
    return plane[y * w_ + x];
  }

  double sample(const float* plane, double gx, double gy) const {
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
  parallel_for(n * c, ho * wo * 16, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const float* plane = xp + nc * h * w;
      const float* g = gp + (nc / c) * ho * wo * 2;
      float* out = yp + nc * ho * wo;
      for (int64_t p = 0; p < ho * wo; ++p)
        out[p] = static_cast<float>(s.sample(plane, g[2 * p], g[2 * p + 1]));
    }
  });
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
