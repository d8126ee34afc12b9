// SPDX-License-Identifier: Apache-2.0
// QuantizeLinear, DequantizeLinear (per tensor and per axis, opset 10 and 13 forms)
// and DynamicQuantizeLinear, elementwise as the ONNX spec defines them:
//   q = saturate(round_half_even(x / scale) + zero_point),  x = (q - zero_point) * scale.

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/parallel.h"
#include "runtime/quant_math.h"

namespace fx {

void register_qlinear_kernels(KernelTable& t);  // qlinear_kernels.cc

namespace {

// The axis an x of `rank` is quantized along, and the size of one step along it
// (elements after it); per_tensor when the scale has one element (then one channel of
// every element). Each run of `inner` elements shares one scale and zero point.
struct AxisWalk {
  bool per_tensor = true;
  int64_t channels = 1, inner = 1;
};

AxisWalk axis_walk(const Tensor& x, const Tensor& scale, int64_t axis, const char* op) {
  AxisWalk w;
  if (scale.numel() == 1 && scale.rank() <= 1) {
    w.inner = std::max<int64_t>(x.numel(), 1);
    return w;
  }
  if (scale.rank() != 1) {
    throw Error(std::string(op) + ": scale must be a scalar or 1-D, got " + scale.str() +
                " (blocked quantization is not supported)");
  }
  const int64_t a = normalize_axis(axis, static_cast<int64_t>(x.rank()));
  if (x.dims()[a] != scale.numel()) {
    throw Error(std::string(op) + ": scale " + scale.str() + " does not match axis " +
                std::to_string(a) + " of " + x.str());
  }
  w.per_tensor = false;
  w.channels = scale.numel();
  for (std::size_t i = static_cast<std::size_t>(a) + 1; i < x.rank(); ++i) w.inner *= x.dims()[i];
  return w;
}

// y = saturate(round_half_even(x / scale) + zero_point) over n elements, in a loop the
// compiler vectorizes: the quotient is clamped to +-300 first (beyond any 8-bit value
// plus zero point, so saturation is unchanged; NaN goes to the low end), then rounded by
// adding and subtracting 1.5 * 2^23 (exact round-half-even in the default rounding mode
// for |v| < 2^22; std::nearbyint is a library call without SSE4.1).
template <class In, class Q>
void quantize_block(const In* x, Q* y, int64_t n, float scale, int32_t zero_point) {
  constexpr int32_t lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  constexpr float kRound = 12582912.f;
  for (int64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(x[i]) / scale;
    v = v > -300.f ? v : -300.f;
    v = v < 300.f ? v : 300.f;
    const int32_t q = static_cast<int32_t>((v + kRound) - kRound) + zero_point;
    y[i] = static_cast<Q>(q < lo ? lo : (q > hi ? hi : q));
  }
}

void check_zero_point_shape(const Tensor* zp, const Tensor& scale, const char* op) {
  if (zp && zp->numel() != scale.numel()) {
    throw Error(std::string(op) + ": zero point " + zp->str() + " does not match scale " +
                scale.str());
  }
}

std::shared_ptr<Kernel> quantize_linear(const Graph&, const Node& n) {
  const int64_t axis = n.attrs.get_int("axis", 1);
  if (n.attrs.get_int("block_size", 0) != 0) throw Error("blocked quantization is not supported");
  const DType attr_type = static_cast<DType>(n.attrs.get_int("output_dtype", 0));
  return fn_kernel([axis, attr_type](KernelContext& ctx) {
    const Tensor& x = ctx.in(0);
    const Tensor& scale = ctx.in(1);
    const Tensor* zp = ctx.input(2);
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Int32) {
      throw Error("QuantizeLinear: input must be float32 or int32, got " + x.str());
    }
    const DType out = zp ? zp->dtype() : (attr_type != DType::Undefined ? attr_type : DType::UInt8);
    if (!is_int8_type(out)) {
      throw Error("QuantizeLinear: output type " + std::string(dtype_name(out)) +
                  " is not supported (uint8 and int8 are)");
    }
    check_zero_point_shape(zp, scale, "QuantizeLinear");
    const auto s = scales_of(scale, "QuantizeLinear");
    const auto z = zp ? zero_points_of(zp, "QuantizeLinear") : std::vector<int32_t>(s.size(), 0);
    const AxisWalk w = axis_walk(x, scale, axis, "QuantizeLinear");
    Tensor& y = ctx.output(0, out, x.dims());
    const int64_t count = x.numel();
    for (int64_t b = 0; b < count; b += w.inner) {
      const std::size_t c = static_cast<std::size_t>((b / w.inner) % w.channels);
      const int64_t n = std::min(w.inner, count - b);
      // Split over the pool: a per-tensor quantization is one block of the whole tensor.
      auto block = [&](auto* dst) {
        parallel_for(n, 4, [&](int64_t i0, int64_t i1) {
          if (x.dtype() == DType::Float32) {
            quantize_block(x.data<float>() + b + i0, dst + b + i0, i1 - i0, s[c], z[c]);
          } else {
            quantize_block(x.data<int32_t>() + b + i0, dst + b + i0, i1 - i0, s[c], z[c]);
          }
        });
      };
      if (out == DType::UInt8) {
        block(y.data<uint8_t>());
      } else {
        block(y.data<int8_t>());
      }
    }
  });
}

std::shared_ptr<Kernel> dequantize_linear(const Graph&, const Node& n) {
  const int64_t axis = n.attrs.get_int("axis", 1);
  if (n.attrs.get_int("block_size", 0) != 0) throw Error("blocked quantization is not supported");
  return fn_kernel([axis](KernelContext& ctx) {
    const Tensor& x = ctx.in(0);
    const Tensor& scale = ctx.in(1);
    const Tensor* zp = ctx.input(2);
    if (!is_int8_type(x.dtype()) && x.dtype() != DType::Int32) {
      throw Error("DequantizeLinear: input must be uint8, int8 or int32, got " + x.str());
    }
    if (zp && zp->dtype() != x.dtype()) {
      throw Error("DequantizeLinear: zero point " + zp->str() + " differs in type from " + x.str());
    }
    check_zero_point_shape(zp, scale, "DequantizeLinear");
    const auto s = scales_of(scale, "DequantizeLinear");
    const auto z = zp ? zero_points_of(zp, "DequantizeLinear") : std::vector<int32_t>(s.size(), 0);
    const AxisWalk w = axis_walk(x, scale, axis, "DequantizeLinear");
    Tensor& y = ctx.output(0, DType::Float32, x.dims());
    float* out = y.data<float>();
    const int64_t count = x.numel();
    dispatch_numeric(x.dtype(), "DequantizeLinear", [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> ||
                    std::is_same_v<T, int32_t>) {
        const T* in = x.data<T>();
        for (int64_t b = 0; b < count; b += w.inner) {
          const std::size_t c = static_cast<std::size_t>((b / w.inner) % w.channels);
          const float zc = static_cast<float>(z[c]), sc = s[c];
          const int64_t end = std::min(b + w.inner, count);
          parallel_for(end - b, 2, [&](int64_t i0, int64_t i1) {
            for (int64_t i = b + i0; i < b + i1; ++i)
              out[i] = (static_cast<float>(in[i]) - zc) * sc;
          });
        }
      }
    });
  });
}

std::shared_ptr<Kernel> dynamic_quantize_linear(const Graph&, const Node&) {
  return fn_kernel([](KernelContext& ctx) {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::Float32) {
      throw Error("DynamicQuantizeLinear: input must be float32, got " + x.str());
    }
    const float* in = x.data<float>();
    const int64_t count = x.numel();
    // The range always includes 0 so that 0 is exactly representable.
    float lo = 0.f, hi = 0.f;
    for (int64_t i = 0; i < count; ++i) {
      lo = std::min(lo, in[i]);
      hi = std::max(hi, in[i]);
    }
    const float scale = (hi - lo) / 255.f;
    const uint8_t zp = scale > 0.f ? saturate_round<uint8_t>(-lo / scale) : uint8_t{0};
    Tensor& y = ctx.output(0, DType::UInt8, x.dims());
    ctx.output(1, DType::Float32, {}).data<float>()[0] = scale;
    ctx.output(2, DType::UInt8, {}).data<uint8_t>()[0] = zp;
    uint8_t* out = y.data<uint8_t>();
    for (int64_t i = 0; i < count; ++i) {
      out[i] =
          scale > 0.f ? saturate_round<uint8_t>(std::nearbyint(in[i] / scale) + float(zp)) : zp;
    }
  });
}

}  // namespace

void register_quant_kernels(KernelTable& t) {
  t["QuantizeLinear"] = quantize_linear;
  t["DequantizeLinear"] = dequantize_linear;
  t["DynamicQuantizeLinear"] = dynamic_quantize_linear;
  register_qlinear_kernels(t);
}

}  // namespace fx
