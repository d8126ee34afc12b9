// SPDX-License-Identifier: Apache-2.0
#include "runtime/grid_sample.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/cubic.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

using Mode = GridSampleMode;
using Padding = GridSamplePadding;

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

// Coordinates and the padding rule of one plane size.
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
  // The plane offset of pixel (y, x) under the padding rule; -1 outside (zeros).
  int64_t offset(int64_t y, int64_t x) const {
    if (a_.padding == Padding::Zeros) {
      if (y < 0 || y >= h_ || x < 0 || x >= w_) return -1;
    } else {
      y = static_cast<int64_t>(pad_coord(static_cast<double>(y), h_));
      x = static_cast<int64_t>(pad_coord(static_cast<double>(x), w_));
    }
    return y * w_ + x;
  }

  // The reference form: the pixel (y, x) of one plane under the padding rule, and
  // one sample of one plane, in double.
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

  // Calls tap(offset, weight) for each input pixel the grid point (gx, gy) reads
  // (1, 4 or 16 of them, in a fixed order; offset -1 for a zero-padded one).
  template <class Tap>
  void taps(double gx, double gy, Tap&& tap) const {
    double x = unnormalize(gx, w_), y = unnormalize(gy, h_);
    if (a_.mode != Mode::Bicubic) {
      x = pad_coord(x, w_);
      y = pad_coord(y, h_);
    }
    if (a_.mode == Mode::Nearest) {
      tap(offset(static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x))),
          1.0);
      return;
    }
    const double fx0 = std::floor(x), fy0 = std::floor(y);
    const auto x0 = static_cast<int64_t>(fx0), y0 = static_cast<int64_t>(fy0);
    const double tx = x - fx0, ty = y - fy0;
    if (a_.mode == Mode::Bilinear) {
      tap(offset(y0, x0), (1 - ty) * (1 - tx));
      tap(offset(y0, x0 + 1), (1 - ty) * tx);
      tap(offset(y0 + 1, x0), ty * (1 - tx));
      tap(offset(y0 + 1, x0 + 1), ty * tx);
      return;
    }
    const auto wx = cubic_weights(tx, -0.75), wy = cubic_weights(ty, -0.75);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) tap(offset(y0 - 1 + i, x0 - 1 + j), wy[i] * wx[j]);
  }

 private:
  GridSampleAttrs a_;
  int64_t h_, w_;
};

int taps_per_pixel(Mode m) {
  return m == Mode::Nearest ? 1 : m == Mode::Bilinear ? 4 : 16;
}

// Output pixels per block: their taps stay in L1 while every channel reads them.
constexpr int64_t kBlock = 256;

// One block of K-tap pixels over every channel of one image.
template <int K>
void run_block(const int64_t* off, const float* wt, int64_t count, const float* x, int64_t plane,
               int64_t channels, float* y, int64_t out_plane) {
  for (int64_t c = 0; c < channels; ++c) {
    const float* p = x + c * plane;
    float* o = y + c * out_plane;
    for (int64_t i = 0; i < count; ++i) {
      float sum = 0;
      for (int k = 0; k < K; ++k) sum += wt[i * K + k] * p[off[i * K + k]];
      o[i] = sum;
    }
  }
}

}  // namespace

void grid_sample(const GridSampleAttrs& a, const GridSampleShape& s, const float* x,
                 const float* grid, float* y) {
  const Sampler sampler(a, s.h, s.w);
  const int k = taps_per_pixel(a.mode);
  const int64_t pixels = s.ho * s.wo, plane = s.h * s.w;
  const int64_t blocks = (pixels + kBlock - 1) / kBlock;
  parallel_for(s.n * blocks, kBlock * (8 + k * 2 * s.c), [&](int64_t b, int64_t e) {
    std::vector<int64_t> off(static_cast<std::size_t>(kBlock * k));
    std::vector<float> wt(static_cast<std::size_t>(kBlock * k));
    for (int64_t unit = b; unit < e; ++unit) {
      const int64_t img = unit / blocks, p0 = (unit % blocks) * kBlock;
      const int64_t count = std::min(kBlock, pixels - p0);
      const float* g = grid + (img * pixels + p0) * 2;
      // A zero-padded tap reads pixel 0 with weight 0: the channel loop has no branch.
      std::size_t t = 0;
      for (int64_t i = 0; i < count; ++i)
        sampler.taps(g[2 * i], g[2 * i + 1], [&](int64_t o, double w) {
          off[t] = o < 0 ? 0 : o;
          wt[t++] = o < 0 ? 0.0f : static_cast<float>(w);
        });
      const float* xi = x + img * s.c * plane;
      float* yi = y + img * s.c * pixels + p0;
      switch (k) {
        case 1: run_block<1>(off.data(), wt.data(), count, xi, plane, s.c, yi, pixels); break;
        case 4: run_block<4>(off.data(), wt.data(), count, xi, plane, s.c, yi, pixels); break;
        default: run_block<16>(off.data(), wt.data(), count, xi, plane, s.c, yi, pixels); break;
      }
    }
  });
}

void grid_sample_reference(const GridSampleAttrs& a, const GridSampleShape& s, const float* x,
                           const float* grid, float* y) {
  const Sampler sampler(a, s.h, s.w);
  const int64_t pixels = s.ho * s.wo, plane = s.h * s.w;
  for (int64_t nc = 0; nc < s.n * s.c; ++nc) {
    const float* p = x + nc * plane;
    const float* g = grid + (nc / s.c) * pixels * 2;
    for (int64_t i = 0; i < pixels; ++i)
      y[nc * pixels + i] = static_cast<float>(sampler.sample(p, g[2 * i], g[2 * i + 1]));
  }
}

}  // namespace fx
