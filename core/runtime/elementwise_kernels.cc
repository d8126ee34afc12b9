// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels: activations and math (unary), arithmetic and comparison
// with numpy broadcasting (binary, variadic), Where, Clip.

#include <cmath>
#include <limits>

#include "runtime/elementwise_ops.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

// A float (float32/float64) unary op; `make` builds the functor from the node
// (attributes), the functor is called with the element value.
template <class Make>
void add_float_unary(KernelTable& t, const std::string& op, Make make) {
  t[op] = [make, op](const Graph&, const Node& node) {
    auto f = make(node);
    return unary_fn_kernel([f, op](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      Tensor& y = ctx.output(0, x.dtype(), x.dims());
      if (x.dtype() == DType::Float32) {
        unary_map<float, float>(x, y, [f](float v) { return static_cast<float>(f(v)); });
      } else if (x.dtype() == DType::Float64) {
        unary_map<double, double>(x, y, [f](double v) { return static_cast<double>(f(v)); });
      } else {
        throw Error(op + ": unsupported dtype " + std::string(dtype_name(x.dtype())));
      }
    });
  };
}

// A unary op defined for every numeric type.
template <class Make>
void add_numeric_unary(KernelTable& t, const std::string& op, Make make) {
  t[op] = [make, op](const Graph&, const Node& node) {
    auto f = make(node);
    return unary_fn_kernel([f, op](KernelContext& ctx) {
      const Tensor& x = ctx.in(0);
      Tensor& y = ctx.output(0, x.dtype(), x.dims());
      dispatch_all(x.dtype(), op.c_str(), [&](auto tag) {
        using T = decltype(tag);
        unary_map<T, T>(x, y, [f](T v) { return static_cast<T>(f(v)); });
      });
    });
  };
}

template <class Out, class F>
void add_binary(KernelTable& t, const std::string& op, F f, bool numeric_only) {
  t[op] = [f, op, numeric_only](const Graph&, const Node&) {
    return fn_kernel([f, op, numeric_only](KernelContext& ctx) {
      const Tensor& a = ctx.in(0);
      const Tensor& b = ctx.in(1);
      if (a.dtype() != b.dtype())
        throw Error(op + ": input dtypes differ: " + a.str() + " " + b.str());
      BroadcastRows<2> rows({&a.dims(), &b.dims()});
      auto body = [&](auto tag) {
        using T = decltype(tag);
        using O = std::conditional_t<std::is_same_v<Out, void>, T, Out>;
        DType od = std::is_same_v<Out, void> ? a.dtype() : DType::Bool;
        Tensor& y = ctx.output(0, od, rows.out_dims);
        binary_map<T, O>(rows, a, b, y, [f](T x, T z) { return static_cast<O>(f(x, z)); });
      };
      if (numeric_only)
        dispatch_numeric(a.dtype(), op.c_str(), body);
      else
        dispatch_all(a.dtype(), op.c_str(), body);
    });
  };
}

// Sum/Min/Max/Mean over any number of inputs, folded pairwise.
template <class F>
void add_variadic(KernelTable& t, const std::string& op, F f, bool mean) {
  t[op] = [f, op, mean](const Graph&, const Node&) {
    return fn_kernel([f, op, mean](KernelContext& ctx) {
      int n = ctx.num_inputs();
      Tensor acc = ctx.in(0);
      for (int i = 1; i < n; ++i) {
        const Tensor& b = ctx.in(i);
        BroadcastRows<2> rows({&acc.dims(), &b.dims()});
        Tensor next(acc.dtype(), rows.out_dims);
        dispatch_numeric(acc.dtype(), op.c_str(), [&](auto tag) {
          using T = decltype(tag);
          binary_map<T, T>(rows, acc, b, next, [f](T x, T z) { return static_cast<T>(f(x, z)); });
        });
        acc = next;
      }
      Tensor& y = ctx.output(0, acc.dtype(), acc.dims());
      dispatch_numeric(acc.dtype(), op.c_str(), [&](auto tag) {
        using T = decltype(tag);
        T div = static_cast<T>(mean ? n : 1);
        unary_map<T, T>(acc, y, [div](T v) { return static_cast<T>(v / div); });
      });
    });
  };
}

// float32 takes the vectorizable approximations; float64 keeps libm's precision.
inline float approx_exp(float v) {
  return fast_exp(v);
}
inline double approx_exp(double v) {
  return std::exp(v);
}
inline float approx_sigmoid(float v) {
  return fast_sigmoid(v);
}
inline double approx_sigmoid(double v) {
  return 1 / (1 + std::exp(-v));
}
inline float approx_tanh(float v) {
  return fast_tanh(v);
}
inline double approx_tanh(double v) {
  return std::tanh(v);
}
inline float approx_erf(float v) {
  return fast_erf(v);
}
inline double approx_erf(double v) {
  return std::erf(v);
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
  auto none = [](auto fn) { return [fn](const Node&) { return fn; }; };
  add_numeric_unary(t, "Relu", none([](auto v) { return v > 0 ? v : decltype(v)(0); }));
  add_numeric_unary(t, "Neg", none([](auto v) { return -v; }));
  add_numeric_unary(t, "Abs", none([](auto v) { return v < 0 ? -v : v; }));
  add_numeric_unary(t, "Sign", none([](auto v) {
                      return static_cast<decltype(v)>(v > 0 ? 1 : (v < 0 ? -1 : 0));
                    }));
  add_float_unary(t, "Sigmoid", none([](auto v) { return approx_sigmoid(v); }));
  add_float_unary(t, "Tanh", none([](auto v) { return approx_tanh(v); }));
  add_float_unary(t, "Erf", none([](auto v) { return approx_erf(v); }));
  add_float_unary(t, "Exp", none([](auto v) { return approx_exp(v); }));
  add_float_unary(t, "Log", none([](auto v) { return std::log(v); }));
  add_float_unary(t, "Sqrt", none([](auto v) { return std::sqrt(v); }));
  add_float_unary(t, "Reciprocal", none([](auto v) { return 1 / v; }));
  add_float_unary(t, "Floor", none([](auto v) { return std::floor(v); }));
  add_float_unary(t, "Ceil", none([](auto v) { return std::ceil(v); }));
  add_float_unary(t, "Round", none([](auto v) { return std::nearbyint(v); }));
  add_float_unary(t, "Sin", none([](auto v) { return std::sin(v); }));
  add_float_unary(t, "Cos", none([](auto v) { return std::cos(v); }));
  add_float_unary(t, "Softsign", none([](auto v) { return v / (1 + std::abs(v)); }));
  add_float_unary(t, "Softplus", none([](auto v) { return v > 20 ? v : std::log1p(std::exp(v)); }));
  add_float_unary(t, "Mish", none([](auto v) { return v * std::tanh(std::log1p(std::exp(v))); }));
  add_float_unary(t, "HardSwish", none([](auto v) {
                    auto r = v / 6 + decltype(v)(0.5);
                    r = r < 0 ? decltype(v)(0) : (r > 1 ? decltype(v)(1) : r);
                    return v * r;
                  }));
  add_float_unary(t, "LeakyRelu", [](const Node& n) {
    float a = n.attrs.get_float("alpha", 0.01f);
    return [a](auto v) { return v >= 0 ? v : v * a; };
  });
  add_float_unary(t, "HardSigmoid", [](const Node& n) {
    float a = n.attrs.get_float("alpha", 0.2f), b = n.attrs.get_float("beta", 0.5f);
    return [a, b](auto v) {
      auto r = v * a + b;
      return r < 0 ? decltype(v)(0) : (r > 1 ? decltype(v)(1) : r);
    };
  });
  add_float_unary(t, "Elu", [](const Node& n) {
    float a = n.attrs.get_float("alpha", 1.0f);
    return [a](auto v) { return v >= 0 ? v : a * (std::exp(v) - 1); };
  });
  add_float_unary(t, "Celu", [](const Node& n) {
    float a = n.attrs.get_float("alpha", 1.0f);
    return [a](auto v) {
      return std::max(decltype(v)(0), v) + std::min(decltype(v)(0), a * (std::exp(v / a) - 1));
    };
  });
  add_float_unary(t, "Selu", [](const Node& n) {
    float a = n.attrs.get_float("alpha", 1.67326319217681884765625f);
    float g = n.attrs.get_float("gamma", 1.05070102214813232421875f);
    return [a, g](auto v) { return v > 0 ? g * v : g * (a * std::exp(v) - a); };
  });
  add_float_unary(t, "ThresholdedRelu", [](const Node& n) {
    float a = n.attrs.get_float("alpha", 1.0f);
    return [a](auto v) { return v > a ? v : decltype(v)(0); };
  });
  add_float_unary(t, "Gelu", [](const Node& n) {
    bool tanh_approx = n.attrs.get_string("approximate", "none") == "tanh";
    return [tanh_approx](auto v) {
      using T = decltype(v);
      if (tanh_approx) {
        return T(0.5) * v *
               (1 + approx_tanh(T(0.7978845608028654) * (v + T(0.044715) * v * v * v)));
      }
      return T(0.5) * v * (1 + approx_erf(v * T(0.7071067811865476)));
    };
  });

  add_binary<void>(
      t, "Add", [](auto a, auto b) { return a + b; }, true);
  add_binary<void>(
      t, "Sub", [](auto a, auto b) { return a - b; }, true);
  add_binary<void>(
      t, "Mul", [](auto a, auto b) { return a * b; }, true);
  add_binary<void>(
      t, "Div",
      [](auto a, auto b) {
        using T = decltype(a);
        // Integer division by zero gives 0, as numpy does, instead of a trap (SIGFPE).
        if constexpr (std::is_integral_v<T>) {
          if (b == 0) return T(0);
        }
        return static_cast<T>(a / b);
      },
      true);
  add_binary<bool>(
      t, "Equal", [](auto a, auto b) { return a == b; }, false);
  add_binary<bool>(
      t, "Less", [](auto a, auto b) { return a < b; }, false);
  add_binary<bool>(
      t, "Greater", [](auto a, auto b) { return a > b; }, false);
  add_binary<bool>(
      t, "LessOrEqual", [](auto a, auto b) { return a <= b; }, false);
  add_binary<bool>(
      t, "GreaterOrEqual", [](auto a, auto b) { return a >= b; }, false);
  add_binary<bool>(
      t, "And", [](auto a, auto b) { return a && b; }, false);
  add_binary<bool>(
      t, "Or", [](auto a, auto b) { return a || b; }, false);
  add_binary<bool>(
      t, "Xor", [](auto a, auto b) { return (a != 0) != (b != 0); }, false);
  add_binary<void>(
      t, "PRelu", [](auto x, auto s) { return x < 0 ? x * s : x; }, true);
  add_variadic(
      t, "Sum", [](auto a, auto b) { return a + b; }, false);
  add_variadic(
      t, "Mean", [](auto a, auto b) { return a + b; }, true);
  add_variadic(
      t, "Max", [](auto a, auto b) { return a > b ? a : b; }, false);
  add_variadic(
      t, "Min", [](auto a, auto b) { return a < b ? a : b; }, false);
}

}  // namespace fx
