// SPDX-License-Identifier: Apache-2.0
// Kernels that index along one axis: GatherElements, CumSum, Hardmax, and Trilu
// (a triangle of the last two dims). Plain loops: none is in the bench models' hot
// path; they are here so that models using them run (and ONNX's tests pass).

#include <algorithm>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

// Index value i of an int64 or int32 tensor.
int64_t index_at(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::Int64) return t.data<int64_t>()[i];
  if (t.dtype() == DType::Int32) return t.data<int32_t>()[i];
  throw Error("indices must be int64 or int32, got " + t.str());
}

// outer x len x inner view of dims around `axis`.
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
  AxisView(const std::vector<int64_t>& d, int64_t axis) {
    for (int64_t i = 0; i < static_cast<int64_t>(d.size()); ++i) {
      if (i < axis)
        outer *= d[i];
      else if (i == axis)
        len = d[i];
      else
        inner *= d[i];
    }
  }
};

void gather_elements(KernelContext& ctx, int64_t axis_attr) {
  const Tensor& x = ctx.in(0);
  const Tensor& idx = ctx.in(1);
  if (idx.rank() != x.rank())
    throw Error("GatherElements: indices " + idx.str() + " and data " + x.str() +
                " differ in rank");
  const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(x.rank()));
  Tensor& y = ctx.output(0, x.dtype(), idx.dims());
  const auto xs = contiguous_strides(x.dims());
  const auto& od = idx.dims();
  const int64_t n = idx.numel(), dim = x.dims()[static_cast<std::size_t>(axis)];
  dispatch_all(x.dtype(), "GatherElements", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i, off = 0;
      for (int64_t d = static_cast<int64_t>(od.size()) - 1; d >= 0; --d) {
        int64_t c = rem % od[d];
        rem /= od[d];
        if (d == axis) {
          c = index_at(idx, i);
          if (c < 0) c += dim;
          if (c < 0 || c >= dim)
            throw Error("GatherElements: index " + std::to_string(index_at(idx, i)) +
                        " out of range for axis of " + std::to_string(dim));
        } else if (c >= x.dims()[d]) {
          throw Error("GatherElements: indices " + idx.str() + " exceed data " + x.str());
        }
        off += c * xs[d];
      }
      out[i] = in[off];
    }
  });
}

void cumsum(KernelContext& ctx, bool exclusive, bool reverse) {
  const Tensor& x = ctx.in(0);
  auto axes = ints_of(&ctx.in(1));
  if (axes.size() != 1) throw Error("CumSum: axis must be a scalar");
  const int64_t axis = normalize_axis(axes[0], static_cast<int64_t>(x.rank()));
  Tensor& y = ctx.output(0, x.dtype(), x.dims());
  const AxisView v(x.dims(), axis);
  dispatch_numeric(x.dtype(), "CumSum", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    parallel_for(v.outer, v.len * v.inner, [&](int64_t b, int64_t e) {
      std::vector<T> acc(static_cast<std::size_t>(v.inner));
      for (int64_t o = b; o < e; ++o) {
        std::fill(acc.begin(), acc.end(), T{});
        for (int64_t s = 0; s < v.len; ++s) {
          const int64_t k = reverse ? v.len - 1 - s : s;
          const T* src = in + (o * v.len + k) * v.inner;
          T* dst = out + (o * v.len + k) * v.inner;
          for (int64_t i = 0; i < v.inner; ++i) {
            if (exclusive) {
              dst[i] = acc[i];
              acc[i] = static_cast<T>(acc[i] + src[i]);
            } else {
              acc[i] = static_cast<T>(acc[i] + src[i]);
              dst[i] = acc[i];
            }
          }
        }
      }
    });
  });
}

// One-hot of the first maximum along `axis` (opset 13 semantics); `legacy` (opset
// < 13): over all dims from `axis` on, as one flattened row.
void hardmax(KernelContext& ctx, int64_t axis_attr, bool legacy) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::Float32)
    throw Error("Hardmax: only float32 is supported, got " + x.str());
  const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(x.rank()));
  Tensor& y = ctx.output(0, x.dtype(), x.dims());
  AxisView v(x.dims(), axis);
  if (legacy) {
    v.len *= v.inner;
    v.inner = 1;
  }
  const float* in = x.data<float>();
  float* out = y.data<float>();
  std::fill(out, out + y.numel(), 0.0f);
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < v.len; ++k) {
        if (in[(o * v.len + k) * v.inner + i] > in[(o * v.len + best) * v.inner + i]) best = k;
      }
      if (v.len > 0) out[(o * v.len + best) * v.inner + i] = 1.0f;
    }
}

void trilu(KernelContext& ctx, bool upper) {
  const Tensor& x = ctx.in(0);
  if (x.rank() < 2) throw Error("Trilu: input must be at least 2-D, got " + x.str());
  int64_t k = 0;
  if (const Tensor* kt = ctx.input(1)) {
    auto v = ints_of(kt);
    if (v.size() != 1) throw Error("Trilu: k must be a scalar");
    k = v[0];
  }
  Tensor& y = ctx.output(0, x.dtype(), x.dims());
  const int64_t rows = x.dims()[x.rank() - 2], cols = x.dims()[x.rank() - 1];
  const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  dispatch_all(x.dtype(), "Trilu", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t at = (m * rows + i) * cols + j;
          const bool keep = upper ? j - i >= k : j - i <= k;
          out[at] = keep ? in[at] : T{};
        }
  });
}

}  // namespace

void register_index_kernels(KernelTable& t) {
  t["GatherElements"] = [](const Graph&, const Node& n) {
    int64_t axis = n.attrs.get_int("axis", 0);
    return fn_kernel([axis](KernelContext& c) { gather_elements(c, axis); });
  };
  t["CumSum"] = [](const Graph&, const Node& n) {
    bool ex = n.attrs.get_int("exclusive", 0) != 0, rev = n.attrs.get_int("reverse", 0) != 0;
    return fn_kernel([ex, rev](KernelContext& c) { cumsum(c, ex, rev); });
  };
  t["Hardmax"] = [](const Graph&, const Node& n) {
    int64_t axis = n.attrs.get_int("axis", -1);
    return fn_kernel([axis](KernelContext& c) { hardmax(c, axis, false); });
  };
  t[std::string("Hardmax") + kLegacyOpsetSuffix] = [](const Graph&, const Node& n) {
    int64_t axis = n.attrs.get_int("axis", 1);
    return fn_kernel([axis](KernelContext& c) { hardmax(c, axis, true); });
  };
  t["Trilu"] = [](const Graph&, const Node& n) {
    bool upper = n.attrs.get_int("upper", 1) != 0;
    return fn_kernel([upper](KernelContext& c) { trilu(c, upper); });
  };
}

}  // namespace fx
