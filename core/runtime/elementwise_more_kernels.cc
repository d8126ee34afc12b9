// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels with several dtypes in play: Pow, Where, Clip, Not, Mod,
// IsNaN, IsInf.

#include <cmath>
#include <limits>

#include "runtime/elementwise_ops.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

// y's elements as a tensor of x's dtype (Pow allows a float base with an int exponent).
template <class T>
Tensor converted(const Tensor& y, DType to) {
  Tensor out(to, y.dims());
  T* o = out.data<T>();
  if constexpr (std::is_floating_point_v<T>) {
    auto v = y.to_floats();
    for (std::size_t i = 0; i < v.size(); ++i) o[i] = static_cast<T>(v[i]);
  } else {
    auto v = y.to_int64s();
    for (std::size_t i = 0; i < v.size(); ++i) o[i] = static_cast<T>(v[i]);
  }
  return out;
}

void pow_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b0 = ctx.in(1);
  BroadcastRows<2> rows({&a.dims(), &b0.dims()});
  Tensor& y = ctx.output(0, a.dtype(), rows.out_dims);
  dispatch_numeric(a.dtype(), "Pow", [&](auto tag) {
    using T = decltype(tag);
    Tensor b = b0.dtype() == a.dtype() ? b0 : converted<T>(b0, a.dtype());
    if (b.numel() == 1) {  // common: x^2, x^0.5, x^3
      double e = static_cast<double>(b.data<T>()[0]);
      if (e == 2) return unary_map<T, T>(a, y, [](T v) { return static_cast<T>(v * v); });
      if (e == 3) return unary_map<T, T>(a, y, [](T v) { return static_cast<T>(v * v * v); });
      if (e == 1) return unary_map<T, T>(a, y, [](T v) { return v; });
      if constexpr (std::is_floating_point_v<T>) {
        if (e == 0.5) return unary_map<T, T>(a, y, [](T v) { return std::sqrt(v); });
      }
    }
    binary_map<T, T>(rows, a, b, y, [](T x, T z) { return static_cast<T>(std::pow(x, z)); });
  });
}

void where_kernel(KernelContext& ctx) {
  const Tensor& c = ctx.in(0);
  const Tensor& x = ctx.in(1);
  const Tensor& z = ctx.in(2);
  BroadcastRows<3> rows({&c.dims(), &x.dims(), &z.dims()});
  Tensor& y = ctx.output(0, x.dtype(), rows.out_dims);
  dispatch_all(x.dtype(), "Where", [&](auto tag) {
    using T = decltype(tag);
    ternary_map<uint8_t, T, T, T>(rows, c, x, z, y, [](uint8_t k, T p, T q) { return k ? p : q; });
  });
}

void clip_kernel(KernelContext& ctx, float amin, float amax, bool from_attrs) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.output(0, x.dtype(), x.dims());
  dispatch_all(x.dtype(), "Clip", [&](auto tag) {
    using T = decltype(tag);
    T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    if (from_attrs) {
      lo = static_cast<T>(std::max<double>(amin, static_cast<double>(lo)));
      hi = static_cast<T>(std::min<double>(amax, static_cast<double>(hi)));
    } else {
      if (const Tensor* m = ctx.input(1); m && m->numel()) lo = m->data<T>()[0];
      if (const Tensor* m = ctx.input(2); m && m->numel()) hi = m->data<T>()[0];
    }
    unary_map<T, T>(x, y, [lo, hi](T v) { return v < lo ? lo : (v > hi ? hi : v); });
  });
}

}  // namespace

void register_elementwise_more_kernels(KernelTable& t) {
  t["Pow"] = [](const Graph&, const Node&) { return fn_kernel(pow_kernel); };
  t["Where"] = [](const Graph&, const Node&) { return fn_kernel(where_kernel); };
  t["Clip"] = [](const Graph&, const Node& n) {
    // Before opset 11 the bounds were attributes; later they are optional inputs.
    bool from_attrs = n.attrs.has("min") || n.attrs.has("max");
    float lo = n.attrs.get_float("min", std::numeric_limits<float>::lowest());
    float hi = n.attrs.get_float("max", std::numeric_limits<float>::max());
    return unary_fn_kernel([=](KernelContext& ctx) { clip_kernel(ctx, lo, hi, from_attrs); });
  };
  t["Not"] = [](const Graph&, const Node&) {
    return fn_kernel([](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      Tensor& y = ctx.output(0, DType::Bool, x.dims());
      unary_map<uint8_t, uint8_t>(x, y, [](uint8_t v) { return static_cast<uint8_t>(!v); });
    });
  };
  t["IsNaN"] = [](const Graph&, const Node&) {
    return fn_kernel([](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      Tensor& y = ctx.output(0, DType::Bool, x.dims());
      if (x.dtype() != DType::Float32) throw Error("IsNaN: only float32");
      unary_map<float, uint8_t>(x, y, [](float v) { return static_cast<uint8_t>(v != v); });
    });
  };
  t["IsInf"] = [](const Graph&, const Node& n) {
    bool pos = n.attrs.get_int("detect_positive", 1) != 0;
    bool neg = n.attrs.get_int("detect_negative", 1) != 0;
    return fn_kernel([pos, neg](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      Tensor& y = ctx.output(0, DType::Bool, x.dims());
      if (x.dtype() != DType::Float32) throw Error("IsInf: only float32");
      unary_map<float, uint8_t>(x, y, [pos, neg](float v) {
        return static_cast<uint8_t>(std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)));
      });
    });
  };
  t["Mod"] = [](const Graph&, const Node& n) {
    bool fmod = n.attrs.get_int("fmod", 0) != 0;
    return fn_kernel([fmod](KernelContext& ctx) {
      const Tensor& a = ctx.in(0);
      const Tensor& b = ctx.in(1);
      BroadcastRows<2> rows({&a.dims(), &b.dims()});
      Tensor& y = ctx.output(0, a.dtype(), rows.out_dims);
      dispatch_all(a.dtype(), "Mod", [&](auto tag) {
        using T = decltype(tag);
        binary_map<T, T>(rows, a, b, y, [fmod](T x, T z) -> T {
          if constexpr (std::is_floating_point_v<T>) {
            T r = std::fmod(x, z);
            if (!fmod && r != 0 && ((r < 0) != (z < 0))) r += z;
            return r;
          } else {
            if (z == 0) return 0;
            if (z == 0) return T(0);  // as numpy; the CPU would trap (SIGFPE)
            T r = static_cast<T>(x % z);
            if (!fmod && r != 0 && ((r < 0) != (z < 0))) r = static_cast<T>(r + z);
            return r;
          }
        });
      });
    });
  };
}

}  // namespace fx
