// SPDX-License-Identifier: Apache-2.0
// Resize (opset 10+) and Upsample: nearest, (multi-)linear and cubic
// (resize_cubic.h) interpolation over any dims, with ONNX's coordinate
// transformation and nearest rounding modes. Per-axis index/weight tables are
// computed once per run; each output element then blends 2^k source elements over
// the k axes that actually change.

#include <climits>
#include <cmath>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/parallel.h"
#include "runtime/resize_cubic.h"
#include "runtime/resize_fast.h"

namespace fx {
namespace {

struct ResizeAttrs {
  bool linear = false;
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  float extrapolation = 0.0f;
  bool upsample = false;  // the deprecated Upsample op: asymmetric, scales input 1
  bool cubic = false;     // mode cubic: resize_cubic.h
  float cubic_a = -0.75f;
  bool exclude_outside = false;
};

struct AxisMap {
  std::vector<int64_t> i0, i1;
  std::vector<float> w;        // weight of i1 (linear)
  std::vector<uint8_t> outside;  // tf_crop_and_resize outside the input
  bool active = false;
};

// out_len is the resized length before rounding (in * scale): ONNX's reference
// uses it for align_corners when scales are given.
double original_coord(const ResizeAttrs& a, int64_t x, double scale, int64_t in, int64_t out,
                      double out_len, double roi0, double roi1) {
  const std::string& c = a.coord;
  if (c == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (c == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (c == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out_len - 1);
  if (c == "asymmetric") return x / scale;
  if (c == "tf_half_pixel_for_nearest" || c == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (c == "tf_crop_and_resize") {
    return out > 1 ? roi0 * (in - 1) + x * (roi1 - roi0) * (in - 1) / (out - 1)
                   : 0.5 * (roi0 + roi1) * (in - 1);
  }
  throw Error("Resize: unsupported coordinate_transformation_mode '" + c + "'");
}

int64_t round_nearest(const ResizeAttrs& a, double v) {
  const std::string& m = a.nearest;
  if (m == "floor") return static_cast<int64_t>(std::floor(v));
  if (m == "ceil") return static_cast<int64_t>(std::ceil(v));
  double f = std::floor(v);
  if (v - f == 0.5) return static_cast<int64_t>(m == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(v));
}

// Only the two innermost axes change (NCHW spatial) and every output lies inside the
// input: the row kernels of resize_fast.h. False when the general loop must run.
bool resize_fast_path(const Tensor& x, Tensor& y, const std::vector<AxisMap>& maps,
                      const std::vector<std::size_t>& active, const ResizeAttrs& a) {
  const std::size_t r = x.rank();
  if (r < 2 || x.numel() == 0) return false;
  for (std::size_t d : active)
    if (d + 2 < r) return false;
  const int64_t in_h = x.dims()[r - 2], in_w = x.dims()[r - 1];
  if (in_h >= INT32_MAX || in_w >= INT32_MAX) return false;
  for (const AxisMap* m : {&maps[r - 2], &maps[r - 1]})
    for (uint8_t o : m->outside)
      if (o) return false;
  auto table = [&](const AxisMap& m) {
    ResizeAxisTable t;
    t.i0.assign(m.i0.begin(), m.i0.end());
    t.i1.assign(m.i1.begin(), m.i1.end());
    if (a.linear) t.w = m.w;
    return t;
  };
  const ResizeAxisTable rows = table(maps[r - 2]), cols = table(maps[r - 1]);
  const int64_t planes = x.numel() / std::max<int64_t>(in_h * in_w, 1);
  if (a.linear)
    resize_planes_linear(x.data<float>(), y.data<float>(), planes, in_h, in_w, rows, cols);
  else
    resize_planes_nearest(x.data<float>(), y.data<float>(), planes, in_h, in_w, rows, cols);
  return true;
}

void resize_kernel(KernelContext& ctx, const ResizeAttrs& a) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::Float32) throw Error("Resize: only float32, got " + x.str());
  const std::size_t r = x.rank();
  std::vector<float> scales, roi;
  std::vector<int64_t> sizes;
  if (a.upsample || ctx.num_inputs() == 2) {
    scales = ctx.in(1).to_floats();
  } else {
    if (const Tensor* t = ctx.input(1)) roi = t->to_floats();
    if (const Tensor* t = ctx.input(2)) scales = t->to_floats();
    if (const Tensor* t = ctx.input(3)) sizes = t->to_int64s();
  }
  std::vector<int64_t> out(r);
  std::vector<double> scale(r);
  for (std::size_t d = 0; d < r; ++d) {
    if (!sizes.empty()) {
      if (sizes.size() != r) throw Error("Resize: sizes " + dims_str(sizes) + " for " + x.str());
      out[d] = sizes[d];
      scale[d] = x.dims()[d] ? static_cast<double>(out[d]) / x.dims()[d] : 1.0;
    } else {
      if (scales.size() != r) throw Error("Resize: needs " + std::to_string(r) + " scales or sizes");
      scale[d] = scales[d];
      out[d] = static_cast<int64_t>(std::floor(x.dims()[d] * static_cast<double>(scales[d])));
    }
  }
  Tensor& y = ctx.output(0, DType::Float32, out);
  if (y.numel() == 0) return;
  if (a.cubic) {
    std::vector<CubicAxis> axes(r);
    for (std::size_t d = 0; d < r; ++d) {
      const int64_t in = x.dims()[d];
      const double roi0 = roi.size() == 2 * r ? roi[d] : 0.0,
                   roi1 = roi.size() == 2 * r ? roi[r + d] : 1.0;
      for (int64_t o = 0; o < out[d]; ++o) {
        const double c = original_coord(a, o, scale[d], in, out[d], in * scale[d], roi0, roi1);
        axes[d].coords.push_back(c);
        axes[d].outside.push_back(a.coord == "tf_crop_and_resize" && (c < 0 || c > in - 1));
        axes[d].active = axes[d].active || c != static_cast<double>(o) || in != out[d];
      }
    }
    return resize_cubic(x, y, axes, a.cubic_a, a.exclude_outside, a.extrapolation);
  }
  std::vector<AxisMap> maps(r);
  std::vector<std::size_t> active;
  for (std::size_t d = 0; d < r; ++d) {
    AxisMap& m = maps[d];
    const int64_t in = x.dims()[d];
    double roi0 = roi.size() == 2 * r ? roi[d] : 0.0, roi1 = roi.size() == 2 * r ? roi[r + d] : 1.0;
    m.i0.resize(out[d]);
    m.i1.resize(out[d]);
    m.w.assign(out[d], 0.0f);
    m.outside.assign(out[d], 0);
    for (int64_t o = 0; o < out[d]; ++o) {
      double c = original_coord(a, o, scale[d], in, out[d], in * scale[d], roi0, roi1);
      if (a.coord == "tf_crop_and_resize" && (c < 0 || c > in - 1)) m.outside[o] = 1;
      if (a.linear) {
        double cc = std::clamp(c, 0.0, static_cast<double>(in - 1));
        int64_t f = static_cast<int64_t>(std::floor(cc));
        m.i0[o] = f;
        m.i1[o] = std::min(f + 1, in - 1);
        m.w[o] = static_cast<float>(cc - f);
      } else {
        m.i0[o] = m.i1[o] = std::clamp<int64_t>(round_nearest(a, c), 0, in - 1);
      }
      if (m.i0[o] != o || m.w[o] != 0.0f || m.outside[o] || in != out[d]) m.active = true;
    }
    if (m.active) active.push_back(d);
  }
  if (resize_fast_path(x, y, maps, active, a)) return;
  auto xs = contiguous_strides(x.dims());
  const float* in = x.data<float>();
  float* o = y.data<float>();
  const std::size_t k = active.size();
  parallel_for(y.numel(), static_cast<int64_t>(1) << k, [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(r);
    for (int64_t i = b; i < e; ++i) {
      int64_t rem = i, base = 0;
      bool outside = false;
      for (std::size_t d = r; d-- > 0;) {
        idx[d] = rem % out[d];
        rem /= out[d];
        if (maps[d].outside[idx[d]]) outside = true;
        if (!maps[d].active) base += idx[d] * xs[d];
      }
      if (outside) {
        o[i] = a.extrapolation;
        continue;
      }
      float acc = 0;
      for (int64_t corner = 0; corner < (int64_t{1} << k); ++corner) {
        float w = 1;
        int64_t off = base;
        for (std::size_t j = 0; j < k; ++j) {
          const AxisMap& m = maps[active[j]];
          int64_t oi = idx[active[j]];
          bool hi = (corner >> j) & 1;
          if (!a.linear && hi) { w = 0; break; }
          w *= a.linear ? (hi ? m.w[oi] : 1 - m.w[oi]) : 1.0f;
          off += (hi ? m.i1[oi] : m.i0[oi]) * xs[active[j]];
        }
        if (w != 0) acc += w * in[off];
      }
      o[i] = acc;
    }
  });
}

ResizeAttrs resize_attrs(const Node& n) {
  ResizeAttrs a;
  std::string mode = n.attrs.get_string("mode", "nearest");
  if (mode == "linear" || mode == "bilinear") a.linear = true;
  else if (mode == "cubic" || mode == "bicubic") a.cubic = true;
  else if (mode != "nearest") throw Error("Resize: mode '" + mode + "' is not supported");
  a.coord = n.attrs.get_string("coordinate_transformation_mode", "half_pixel");
  a.nearest = n.attrs.get_string("nearest_mode", "round_prefer_floor");
  a.extrapolation = n.attrs.get_float("extrapolation_value", 0.0f);
  a.cubic_a = n.attrs.get_float("cubic_coeff_a", -0.75f);
  a.exclude_outside = n.attrs.get_int("exclude_outside", 0) != 0;
  if (n.attrs.get_int("antialias", 0) != 0) throw Error("Resize: antialias is not supported");
  if (n.attrs.has("axes")) throw Error("Resize: the axes attribute is not supported");
  if (n.attrs.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
    throw Error("Resize: keep_aspect_ratio_policy is not supported");
  }
  return a;
}

}  // namespace

void register_resize_kernels(KernelTable& t) {
  t["Resize"] = [](const Graph&, const Node& n) {
    auto a = resize_attrs(n);
    return fn_kernel([a](KernelContext& ctx) { resize_kernel(ctx, a); });
  };
  t["Upsample"] = [](const Graph&, const Node& n) {
    auto a = resize_attrs(n);
    a.coord = "asymmetric";
    a.nearest = "floor";
    a.upsample = true;
    return fn_kernel([a](KernelContext& ctx) { resize_kernel(ctx, a); });
  };
}

}  // namespace fx
