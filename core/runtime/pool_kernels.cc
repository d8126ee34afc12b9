// SPDX-License-Identifier: Apache-2.0
// Pooling over 1-3 spatial dims of NC... tensors: MaxPool, AveragePool,
// GlobalAveragePool, GlobalMaxPool. Parallel over the N*C planes.

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/lane_reduce.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

struct PoolAttrs {
  std::vector<int64_t> kernel, strides, pads, dilations;
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
  bool count_include_pad = false;
};

PoolAttrs pool_attrs(const Node& n) {
  PoolAttrs a;
  a.kernel = n.attrs.get_ints("kernel_shape");
  a.strides = n.attrs.get_ints("strides");
  a.pads = n.attrs.get_ints("pads");
  a.dilations = n.attrs.get_ints("dilations");
  a.auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  a.ceil_mode = n.attrs.get_int("ceil_mode", 0) != 0;
  a.count_include_pad = n.attrs.get_int("count_include_pad", 0) != 0;
  if (a.kernel.empty()) throw Error("pooling needs kernel_shape");
  return a;
}

// Geometry of one spatial dim (unused dims up to 3 have size 1, kernel 1).
struct Axis {
  int64_t in = 1, out = 1, k = 1, s = 1, d = 1, p0 = 0, p1 = 0;
};

std::array<Axis, 3> geometry(const Tensor& x, const PoolAttrs& a) {
  const std::size_t sp = x.rank() - 2;
  if (a.kernel.size() != sp) throw Error("kernel_shape " + dims_str(a.kernel) + " for " + x.str());
  std::array<Axis, 3> g;
  for (std::size_t i = 0; i < sp; ++i) {
    Axis& ax = g[3 - sp + i];
    ax.in = x.dims()[2 + i];
    ax.k = a.kernel[i];
    ax.s = i < a.strides.size() ? a.strides[i] : 1;
    ax.d = i < a.dilations.size() ? a.dilations[i] : 1;
    ax.p0 = i < a.pads.size() ? a.pads[i] : 0;
    ax.p1 = sp + i < a.pads.size() ? a.pads[sp + i] : 0;
    const int64_t ek = (ax.k - 1) * ax.d + 1;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      ax.out = (ax.in + ax.s - 1) / ax.s;
      int64_t total = std::max<int64_t>(0, (ax.out - 1) * ax.s + ek - ax.in);
      ax.p0 = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      ax.p1 = total - ax.p0;
      continue;
    }
    if (a.auto_pad == "VALID") ax.p0 = ax.p1 = 0;
    const int64_t span = ax.in + ax.p0 + ax.p1 - ek;
    if (span < 0) throw Error("pooling window larger than the padded input " + x.str());
    ax.out = (a.ceil_mode ? (span + ax.s - 1) / ax.s : span / ax.s) + 1;
    // A window must start inside the input or its leading padding.
    if (a.ceil_mode && (ax.out - 1) * ax.s >= ax.in + ax.p0) --ax.out;
  }
  return g;
}

// Float 2-D pooling (and 8-bit max pooling: a QDQ MaxPool group's) without dilation or
// Indices, one plane at a time: for each output
// row, the rows of its window are reduced into one row over the padded width (long
// contiguous loops the compiler vectorizes), then each output reduces k entries of that
// row. The generic loop below recomputes every window tap by tap, with bounds checks per
// tap (MaxPool took more time than all Convs in SqueezeNet and GoogLeNet).
bool rows_pool_applies(const Tensor& x, const std::array<Axis, 3>& g, bool indices, bool is_max) {
  const bool eight_bit_max = is_max && (x.dtype() == DType::UInt8 || x.dtype() == DType::Int8);
  return (x.dtype() == DType::Float32 || eight_bit_max) && x.rank() == 4 && !indices &&
         g[1].d == 1 && g[2].d == 1;
}

template <class T>
void rows_pool(const T* src, T* dst, const Axis& ay, const Axis& ax, bool is_max,
               bool count_include_pad, std::vector<T>& buf) {
  // buf[j] holds padded column j (input column j - ax.p0) of the window's reduced rows.
  const int64_t width = std::max((ax.out - 1) * ax.s + ax.k, ax.p0 + ax.in);
  buf.resize(static_cast<std::size_t>(width));
  const T lowest = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity()
                                               : std::numeric_limits<T>::lowest();
  const T none = is_max ? lowest : T(0);
  T* b = buf.data();
  T* mid = b + ax.p0;  // input column 0
  for (int64_t j = 0; j < ax.p0; ++j) b[j] = none;
  for (int64_t j = ax.p0 + ax.in; j < width; ++j) b[j] = none;
  for (int64_t oy = 0; oy < ay.out; ++oy) {
    const int64_t start = oy * ay.s - ay.p0, end = std::min(start + ay.k, ay.in + ay.p1);
    const int64_t r0 = std::max<int64_t>(start, 0), r1 = std::min(end, ay.in);
    if (r1 <= r0) {
      for (int64_t c = 0; c < ax.in; ++c) mid[c] = none;
    } else {
      const T* first = src + r0 * ax.in;
      for (int64_t c = 0; c < ax.in; ++c) mid[c] = first[c];
      for (int64_t r = r0 + 1; r < r1; ++r) {
        const T* row = src + r * ax.in;
        if (is_max)
          for (int64_t c = 0; c < ax.in; ++c) mid[c] = std::max(mid[c], row[c]);
        else
          for (int64_t c = 0; c < ax.in; ++c) mid[c] += row[c];
      }
    }
    T* out = dst + oy * ax.out;
    for (int64_t ox = 0; ox < ax.out; ++ox) {
      const int64_t cs = ox * ax.s, ce = std::min(cs + ax.k, ax.in + ax.p0 + ax.p1);
      T acc = b[cs];
      for (int64_t j = cs + 1; j < ce; ++j) acc = is_max ? std::max(acc, b[j]) : acc + b[j];
      if (!is_max) {
        const int64_t c0 = std::max<int64_t>(cs - ax.p0, 0), c1 = std::min(ce - ax.p0, ax.in);
        const int64_t n = count_include_pad
                              ? (end - start) * (ce - cs)
                              : std::max<int64_t>(r1 - r0, 0) * std::max<int64_t>(c1 - c0, 0);
        acc /= static_cast<float>(std::max<int64_t>(n, 1));
      }
      out[ox] = acc;
    }
  }
}

// MaxPool's Indices (when `indices` is set) are flat offsets into the whole input,
// row-major or, with storage_order 1, column-major within each plane.
template <class T>
void pool(KernelContext& ctx, const PoolAttrs& a, bool is_max, bool indices = false,
          bool column_major = false) {
  const Tensor& x = ctx.in(0);
  if (x.rank() < 3 || x.rank() > 5) throw Error("pooling: unsupported rank " + x.str());
  auto g = geometry(x, a);
  std::vector<int64_t> out{x.dims()[0], x.dims()[1]};
  for (std::size_t i = 3 - (x.rank() - 2); i < 3; ++i) out.push_back(g[i].out);
  Tensor& y = ctx.output(0, x.dtype(), out);
  int64_t* arg = indices ? ctx.output(1, DType::Int64, out).data<int64_t>() : nullptr;
  const int64_t planes = x.dims()[0] * x.dims()[1];
  const int64_t in_plane = g[0].in * g[1].in * g[2].in, out_plane = g[0].out * g[1].out * g[2].out;
  const T* in = x.data<T>();
  T* o = y.data<T>();
  const int64_t window = g[0].k * g[1].k * g[2].k;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, uint8_t> ||
                std::is_same_v<T, int8_t>) {
    if (rows_pool_applies(x, g, indices, is_max)) {
      parallel_for(planes, out_plane * window, [&](int64_t b, int64_t e) {
        std::vector<T> buf;
        for (int64_t p = b; p < e; ++p)
          rows_pool(in + p * in_plane, o + p * out_plane, g[1], g[2], is_max, a.count_include_pad,
                    buf);
      });
      return;
    }
  }
  parallel_for(planes, out_plane * window, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* src = in + p * in_plane;
      T* dst = o + p * out_plane;
      for (int64_t z = 0; z < g[0].out; ++z)
        for (int64_t yy = 0; yy < g[1].out; ++yy)
          for (int64_t xx = 0; xx < g[2].out; ++xx) {
            const int64_t pos[3] = {z, yy, xx};
            int64_t lo[3], hi[3], count_pad = 1;
            for (int i = 0; i < 3; ++i) {
              const Axis& ax = g[i];
              int64_t start = pos[i] * ax.s - ax.p0;
              int64_t end = std::min(start + (ax.k - 1) * ax.d + 1, ax.in + ax.p1);
              count_pad *= (end - start + ax.d - 1) / ax.d;
              lo[i] = start;
              hi[i] = end;
            }
            using Acc = std::conditional_t<std::is_floating_point_v<T>, T, float>;
            Acc acc = is_max ? (std::numeric_limits<T>::has_infinity
                                    ? -std::numeric_limits<Acc>::infinity()
                                    : static_cast<Acc>(std::numeric_limits<T>::lowest()))
                             : Acc(0);
            int64_t valid = 0, best = -1;
            for (int64_t i0 = lo[0]; i0 < hi[0]; i0 += g[0].d) {
              if (i0 < 0 || i0 >= g[0].in) continue;
              for (int64_t i1 = lo[1]; i1 < hi[1]; i1 += g[1].d) {
                if (i1 < 0 || i1 >= g[1].in) continue;
                const T* row = src + (i0 * g[1].in + i1) * g[2].in;
                for (int64_t i2 = lo[2]; i2 < hi[2]; i2 += g[2].d) {
                  if (i2 < 0 || i2 >= g[2].in) continue;
                  if (arg) {
                    if (best < 0 || static_cast<Acc>(row[i2]) > acc) {
                      acc = static_cast<Acc>(row[i2]);
                      best = column_major ? (i2 * g[1].in + i1) * g[0].in + i0
                                          : (i0 * g[1].in + i1) * g[2].in + i2;
                    }
                    continue;
                  }
                  acc = is_max ? std::max(acc, static_cast<Acc>(row[i2]))
                               : acc + static_cast<Acc>(row[i2]);
                  ++valid;
                }
              }
            }
            if (arg) arg[p * out_plane + (z * g[1].out + yy) * g[2].out + xx] = p * in_plane + best;
            if (!is_max)
              acc /=
                  static_cast<Acc>(a.count_include_pad ? count_pad : std::max<int64_t>(valid, 1));
            dst[(z * g[1].out + yy) * g[2].out + xx] = static_cast<T>(acc);
          }
    }
  });
}

void pool_any(KernelContext& ctx, const PoolAttrs& a, bool is_max, bool indices = false,
              bool column_major = false) {
  switch (ctx.in(0).dtype()) {
    case DType::Float32: return pool<float>(ctx, a, is_max, indices, column_major);
    case DType::Float64: return pool<double>(ctx, a, is_max, indices, column_major);
    case DType::UInt8: return pool<uint8_t>(ctx, a, is_max, indices, column_major);
    case DType::Int8: return pool<int8_t>(ctx, a, is_max, indices, column_major);
    default: throw Error("pooling: unsupported dtype " + ctx.in(0).str());
  }
}

void global_pool(KernelContext& ctx, bool is_max) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::Float32) throw Error("global pooling: only float32, got " + x.str());
  if (x.rank() < 2) throw Error("global pooling: input " + x.str() + " has no channel dim");
  std::vector<int64_t> out(x.rank(), 1);
  out[0] = x.dims()[0];
  out[1] = x.dims()[1];
  Tensor& y = ctx.output(0, DType::Float32, out);
  const int64_t planes = x.dims()[0] * x.dims()[1], plane = planes ? x.numel() / planes : 0;
  const float* in = x.data<float>();
  float* o = y.data<float>();
  parallel_for(planes, plane, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const float* src = in + p * plane;
      o[p] = is_max ? lane_max(src, plane, -std::numeric_limits<float>::infinity())
                    : lane_sum(src, plane) / static_cast<float>(plane);
    }
  });
}

}  // namespace

void register_pool_kernels(KernelTable& t) {
  t["MaxPool"] = [](const Graph&, const Node& n) {
    const bool column_major = n.attrs.get_int("storage_order", 0) != 0;
    const bool indices = n.outputs.size() > 1 && n.outputs[1] != kNoValue;
    auto a = pool_attrs(n);
    return fn_kernel([a, indices, column_major](KernelContext& ctx) {
      pool_any(ctx, a, true, indices, column_major);
    });
  };
  t["AveragePool"] = [](const Graph&, const Node& n) {
    auto a = pool_attrs(n);
    return fn_kernel([a](KernelContext& ctx) { pool_any(ctx, a, false); });
  };
  t["GlobalAveragePool"] = [](const Graph&, const Node&) {
    return fn_kernel([](KernelContext& ctx) { global_pool(ctx, false); });
  };
  t["GlobalMaxPool"] = [](const Graph&, const Node&) {
    return fn_kernel([](KernelContext& ctx) { global_pool(ctx, true); });
  };
}

}  // namespace fx
