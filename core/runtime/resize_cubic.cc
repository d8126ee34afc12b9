// SPDX-License-Identifier: Apache-2.0
#include "runtime/resize_cubic.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/cubic.h"
#include "runtime/parallel.h"
#include "util/error.h"

namespace fx {
namespace {

struct Taps {
  std::vector<int64_t> idx;  // 4 per output index, clamped into the input
  std::vector<float> w;
};

Taps make_taps(const std::vector<double>& coords, int64_t in, double a, bool exclude_outside) {
  Taps t;
  t.idx.resize(coords.size() * 4);
  t.w.resize(coords.size() * 4);
  for (std::size_t o = 0; o < coords.size(); ++o) {
    const double f = std::floor(coords[o]);
    auto w = cubic_weights(coords[o] - f, a);
    double sum = 0;
    for (int k = 0; k < 4; ++k) {
      const int64_t src = static_cast<int64_t>(f) - 1 + k;
      if (exclude_outside && (src < 0 || src >= in)) w[static_cast<std::size_t>(k)] = 0;
      sum += w[static_cast<std::size_t>(k)];
    }
    for (int k = 0; k < 4; ++k) {
      const int64_t src = static_cast<int64_t>(f) - 1 + k;
      t.idx[o * 4 + static_cast<std::size_t>(k)] = std::clamp<int64_t>(src, 0, in - 1);
      t.w[o * 4 + static_cast<std::size_t>(k)] =
          static_cast<float>(exclude_outside && sum != 0 ? w[static_cast<std::size_t>(k)] / sum
                                                         : w[static_cast<std::size_t>(k)]);
    }
  }
  return t;
}

// One axis: x viewed as [outer, in, inner] to y [outer, out, inner].
void cubic_pass(const float* x, float* y, int64_t outer, int64_t in, int64_t inner, const Taps& t) {
  const auto out = static_cast<int64_t>(t.idx.size() / 4);
  parallel_for(outer * out, inner * 8, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / out, o = r % out;
      const float* src = x + n * in * inner;
      float* dst = y + r * inner;
      const int64_t* ix = &t.idx[static_cast<std::size_t>(o * 4)];
      const float* w = &t.w[static_cast<std::size_t>(o * 4)];
      const float* s0 = src + ix[0] * inner;
      const float* s1 = src + ix[1] * inner;
      const float* s2 = src + ix[2] * inner;
      const float* s3 = src + ix[3] * inner;
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = w[0] * s0[i] + w[1] * s1[i] + w[2] * s2[i] + w[3] * s3[i];
    }
  });
}

}  // namespace

void resize_cubic(const Tensor& x, Tensor& y, const std::vector<CubicAxis>& axes, double a,
                  bool exclude_outside, float extrapolation) {
  const std::size_t r = x.rank();
  std::vector<int64_t> dims = x.dims();
  Tensor cur = x;
  bool any_outside = false;
  for (std::size_t d = 0; d < r; ++d) {
    if (!axes[d].active) continue;
    int64_t outer = 1, inner = 1;
    for (std::size_t k = 0; k < d; ++k) outer *= dims[k];
    for (std::size_t k = d + 1; k < r; ++k) inner *= dims[k];
    const int64_t in = dims[d];
    dims[d] = static_cast<int64_t>(axes[d].coords.size());
    Tensor next(DType::Float32, dims);
    cubic_pass(cur.data<float>(), next.data<float>(), outer, in, inner,
               make_taps(axes[d].coords, in, a, exclude_outside));
    cur = next;
    for (uint8_t o : axes[d].outside) any_outside = any_outside || o;
  }
  if (cur.dims() != y.dims()) throw Error("Resize: cubic output " + cur.str() + " vs " + y.str());
  std::memcpy(y.raw(), cur.raw(), y.byte_size());
  if (!any_outside) return;
  float* o = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t rem = i;
    bool out = false;
    for (std::size_t d = r; d-- > 0;) {
      const int64_t k = rem % dims[d];
      rem /= dims[d];
      if (axes[d].active && axes[d].outside[static_cast<std::size_t>(k)]) out = true;
    }
    if (out) o[i] = extrapolation;
  }
}

}  // namespace fx
