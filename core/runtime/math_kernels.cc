// SPDX-License-Identifier: Apache-2.0
// Math kernels at reference speed (no corpus model uses them): trigonometric and
// hyperbolic functions, Shrink, BitShift, Det (LU with partial pivoting), and
// PRelu as opset 6 defined it.

#include <cmath>
#include <type_traits>

#include "runtime/elementwise_ops.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

// float32/float64 unary op through libm (float64 keeps double precision).
template <class F>
void add_libm_unary(KernelTable& t, const std::string& op, F f) {
  t[op] = [f, op](const Graph&, const Node&) {
    return unary_fn_kernel([f, op](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      Tensor& y = ctx.output(0, x.dtype(), x.dims());
      if (x.dtype() == DType::Float32) {
        unary_map<float, float>(x, y, [f](float v) { return static_cast<float>(f(v)); });
      } else if (x.dtype() == DType::Float64) {
        unary_map<double, double>(x, y, [f](double v) { return f(v); });
      } else {
        throw Error(op + ": unsupported dtype " + std::string(dtype_name(x.dtype())));
      }
    });
  };
}

void shrink_kernel(KernelContext& ctx, float bias, float lambd) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.output(0, x.dtype(), x.dims());
  dispatch_numeric(x.dtype(), "Shrink", [&](auto tag) {
    using T = decltype(tag);
    unary_map<T, T>(x, y, [bias, lambd](T v) {
      const double d = static_cast<double>(v);
      if (d < -lambd) return static_cast<T>(d + bias);
      if (d > lambd) return static_cast<T>(d - bias);
      return T(0);
    });
  });
}

void bitshift_kernel(KernelContext& ctx, bool left) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  if (a.dtype() != b.dtype())
    throw Error("BitShift: input dtypes differ: " + a.str() + " " + b.str());
  BroadcastRows<2> rows({&a.dims(), &b.dims()});
  Tensor& y = ctx.output(0, a.dtype(), rows.out_dims);
  auto body = [&](auto tag) {
    using T = decltype(tag);
    constexpr T kBits = static_cast<T>(sizeof(T) * 8);
    if (left) {
      binary_map<T, T>(rows, a, b, y,
                       [](T v, T s) { return s >= kBits ? T(0) : static_cast<T>(v << s); });
    } else {
      binary_map<T, T>(rows, a, b, y,
                       [](T v, T s) { return s >= kBits ? T(0) : static_cast<T>(v >> s); });
    }
  };
  switch (a.dtype()) {
    case DType::UInt8: body(uint8_t{}); break;
    case DType::UInt16: body(uint16_t{}); break;
    case DType::UInt32: body(uint32_t{}); break;
    case DType::UInt64: body(uint64_t{}); break;
    default: throw Error("BitShift: unsupported dtype " + std::string(dtype_name(a.dtype())));
  }
}

// Determinant of an n x n matrix by LU with partial pivoting, in double.
double determinant(std::vector<double> m, int64_t n) {
  double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::abs(m[r * n + c]) > std::abs(m[p * n + c])) p = r;
    if (m[p * n + c] == 0) return 0;
    if (p != c) {
      for (int64_t k = 0; k < n; ++k) std::swap(m[c * n + k], m[p * n + k]);
      det = -det;
    }
    const double pivot = m[c * n + c];
    det *= pivot;
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = m[r * n + c] / pivot;
      for (int64_t k = c + 1; k < n; ++k) m[r * n + k] -= f * m[c * n + k];
    }
  }
  return det;
}

void det_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.rank() < 2 || x.dim(-1) != x.dim(-2))
    throw Error("Det: input must be [..., M, M], got " + x.str());
  const int64_t n = x.dim(-1);
  std::vector<int64_t> out_dims(x.dims().begin(), x.dims().end() - 2);
  Tensor& y = ctx.output(0, x.dtype(), out_dims);
  const int64_t batch = y.numel();
  auto body = [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    T* o = y.data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> m(p + b * n * n, p + (b + 1) * n * n);
      o[b] = static_cast<T>(determinant(std::move(m), n));
    }
  };
  if (x.dtype() == DType::Float32)
    body(float{});
  else if (x.dtype() == DType::Float64)
    body(double{});
  else
    throw Error("Det: unsupported dtype " + std::string(dtype_name(x.dtype())));
}

// PRelu before opset 7 had no numpy broadcasting: a slope of C values is per
// channel (axis 1), whatever the input's rank.
void prelu_legacy_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& s = ctx.in(1);
  if (x.dtype() != s.dtype()) throw Error("PRelu: input dtypes differ: " + x.str() + " " + s.str());
  Tensor& y = ctx.output(0, x.dtype(), x.dims());
  const int64_t c = x.rank() >= 2 ? x.dim(1) : 1;
  int64_t inner = 1;
  for (std::size_t d = 2; d < x.rank(); ++d) inner *= x.dims()[d];
  const bool per_channel = s.numel() == c && c != 1;
  if (!per_channel && s.numel() != 1) {
    throw Error("PRelu (opset < 7): slope " + s.str() +
                " is neither one value nor one per channel of " + x.str());
  }
  auto body = [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    const T* sp = s.data<T>();
    T* yp = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const T slope = per_channel ? sp[(i / inner) % c] : sp[0];
      yp[i] = xp[i] < 0 ? xp[i] * slope : xp[i];
    }
  };
  if (x.dtype() == DType::Float32)
    body(float{});
  else if (x.dtype() == DType::Float64)
    body(double{});
  else
    throw Error("PRelu: unsupported dtype " + std::string(dtype_name(x.dtype())));
}

}  // namespace

void register_math_kernels(KernelTable& t) {
  add_libm_unary(t, "Tan", [](auto v) { return std::tan(v); });
  add_libm_unary(t, "Asin", [](auto v) { return std::asin(v); });
  add_libm_unary(t, "Acos", [](auto v) { return std::acos(v); });
  add_libm_unary(t, "Atan", [](auto v) { return std::atan(v); });
  add_libm_unary(t, "Sinh", [](auto v) { return std::sinh(v); });
  add_libm_unary(t, "Cosh", [](auto v) { return std::cosh(v); });
  add_libm_unary(t, "Asinh", [](auto v) { return std::asinh(v); });
  add_libm_unary(t, "Acosh", [](auto v) { return std::acosh(v); });
  add_libm_unary(t, "Atanh", [](auto v) { return std::atanh(v); });
  t["Shrink"] = [](const Graph&, const Node& n) {
    const float bias = n.attrs.get_float("bias", 0.0f), lambd = n.attrs.get_float("lambd", 0.5f);
    return unary_fn_kernel([=](KernelContext& ctx) { shrink_kernel(ctx, bias, lambd); });
  };
  t["BitShift"] = [](const Graph&, const Node& n) {
    const std::string dir = n.attrs.get_string("direction", "");
    if (dir != "LEFT" && dir != "RIGHT")
      throw Error("BitShift: direction must be LEFT or RIGHT, got '" + dir + "'");
    const bool left = dir == "LEFT";
    return fn_kernel([left](KernelContext& ctx) { bitshift_kernel(ctx, left); });
  };
  t["Det"] = [](const Graph&, const Node&) { return fn_kernel(det_kernel); };
  t[std::string("PRelu") + kLegacyOpsetSuffix] = [](const Graph&, const Node&) {
    return fn_kernel(prelu_legacy_kernel);
  };
}

}  // namespace fx
