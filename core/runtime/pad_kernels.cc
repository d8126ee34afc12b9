// SPDX-License-Identifier: Apache-2.0
// Pad: constant, reflect, edge and wrap modes; negative pads crop. Pads come from
// input 1 (opset 11+) or the "pads" attribute; optional axes (opset 18).

#include <cstring>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

enum class PadMode { Constant, Reflect, Edge, Wrap };

// Source index of output position o along an axis of length n (leading pad p0);
// -1 when it falls in constant padding.
int64_t source_index(int64_t o, int64_t p0, int64_t n, PadMode m) {
  int64_t s = o - p0;
  if (s >= 0 && s < n) return s;
  switch (m) {
    case PadMode::Constant: return -1;
    case PadMode::Edge: return s < 0 ? 0 : n - 1;
    case PadMode::Wrap: return ((s % n) + n) % n;
    case PadMode::Reflect:
      if (n == 1) return 0;
      while (s < 0 || s >= n) s = s < 0 ? -s : 2 * (n - 1) - s;
      return s;
  }
  return -1;
}

void pad_kernel(KernelContext& ctx, const Node& n, PadMode mode) {
  const Tensor& x = ctx.in(0);
  const int64_t r = static_cast<int64_t>(x.rank());
  std::vector<int64_t> given = n.attrs.has("pads") ? n.attrs.get_ints("pads") : ints_of(ctx.input(1));
  std::vector<int64_t> axes = ints_of(ctx.input(3));
  if (axes.empty()) for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  if (given.size() != 2 * axes.size()) throw Error("Pad: pads " + dims_str(given) + " for " + x.str());
  std::vector<int64_t> p0(r, 0), p1(r, 0), out(r);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normalize_axis(axes[i], r);
    p0[a] = given[i];
    p1[a] = given[axes.size() + i];
  }
  for (int64_t d = 0; d < r; ++d) {
    out[d] = x.dims()[d] + p0[d] + p1[d];
    if (out[d] < 0) throw Error("Pad: negative output size for " + x.str());
    if (mode != PadMode::Constant && x.dims()[d] == 0 && out[d] > 0) {
      throw Error("Pad: cannot reflect/edge-pad an empty axis");
    }
  }
  Tensor& y = ctx.output(0, x.dtype(), out);
  if (y.numel() == 0) return;
  const std::size_t es = dtype_size(x.dtype());
  // The fill value as bytes of x's dtype.
  std::vector<std::byte> fill(es, std::byte{0});
  if (const Tensor* cv = ctx.input(2); cv && cv->numel()) {
    std::memcpy(fill.data(), cv->raw(), es);
  } else if (n.attrs.has("value")) {
    float v = n.attrs.get_float("value", 0.0f);
    if (x.dtype() == DType::Float32) std::memcpy(fill.data(), &v, es);
  }
  auto xs = contiguous_strides(x.dims());
  const int64_t inner = out[r - 1], n_in = x.dims()[r - 1];
  int64_t rows = y.numel() / inner;
  std::vector<int64_t> col_src(static_cast<std::size_t>(inner));
  for (int64_t c = 0; c < inner; ++c) col_src[c] = source_index(c, p0[r - 1], n_in, mode);
  const auto* in = static_cast<const std::byte*>(x.raw());
  auto* o = static_cast<std::byte*>(y.raw());
  parallel_for(rows, inner, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t rem = row, off = 0;
      bool blank = false;
      for (int64_t d = r - 2; d >= 0; --d) {
        int64_t s = source_index(rem % out[d], p0[d], x.dims()[d], mode);
        rem /= out[d];
        if (s < 0) blank = true;
        else off += s * xs[d];
      }
      std::byte* dst = o + row * inner * static_cast<int64_t>(es);
      for (int64_t c = 0; c < inner; ++c) {
        const std::byte* src = (blank || col_src[c] < 0) ? fill.data()
                                                         : in + (off + col_src[c]) * static_cast<int64_t>(es);
        std::memcpy(dst + c * static_cast<int64_t>(es), src, es);
      }
    }
  });
}

}  // namespace

void register_pad_kernels(KernelTable& t) {
  t["Pad"] = [](const Graph&, const Node& n) {
    std::string m = n.attrs.get_string("mode", "constant");
    PadMode mode = m == "reflect" ? PadMode::Reflect
                   : m == "edge"  ? PadMode::Edge
                   : m == "wrap"  ? PadMode::Wrap
                   : m == "constant"
                       ? PadMode::Constant
                       : throw Error("Pad: unknown mode '" + m + "'");
    return fn_kernel([n, mode](KernelContext& ctx) { pad_kernel(ctx, n, mode); });
  };
}

}  // namespace fx
