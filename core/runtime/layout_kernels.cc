// SPDX-License-Identifier: Apache-2.0
// Kernels that rearrange or normalize NC... tensors: DepthToSpace, SpaceToDepth,
// MaxUnpool, LRN and MeanVarianceNormalization. Plain loops, parallel over planes;
// no corpus model uses them (they are reference speed).

#include <cmath>
#include <cstring>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

void check_nchw(const Tensor& x, const char* op) {
  if (x.rank() != 4)
    throw Error(std::string(op) + ": input must be 4-D [N, C, H, W], got " + x.str());
}

// DepthToSpace (to_space) or SpaceToDepth between x [N, C, H, W] and the other
// layout; `crd` picks the column-row-depth channel order of DepthToSpace.
void depth_space(KernelContext& ctx, int64_t b, bool to_space, bool crd) {
  const Tensor& x = ctx.in(0);
  const char* op = to_space ? "DepthToSpace" : "SpaceToDepth";
  check_nchw(x, op);
  if (b < 1) throw Error(std::string(op) + ": blocksize must be positive");
  const int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], w = x.dims()[3];
  // Names from the depth side: channels cd, spatial hs x ws; space side: cs, hs*b x ws*b.
  int64_t cd, cs, hs, ws;
  if (to_space) {
    if (c % (b * b) != 0)
      throw Error("DepthToSpace: channels of " + x.str() + " are not a multiple of blocksize^2");
    cd = c, cs = c / (b * b), hs = h, ws = w;
  } else {
    if (h % b != 0 || w % b != 0)
      throw Error("SpaceToDepth: H and W of " + x.str() + " are not multiples of blocksize");
    cs = c, cd = c * b * b, hs = h / b, ws = w / b;
  }
  Tensor& y = ctx.output(
      0, x.dtype(),
      to_space ? std::vector<int64_t>{n, cs, hs * b, ws * b} : std::vector<int64_t>{n, cd, hs, ws});
  const std::size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(y.raw());
  parallel_for(n * cs, hs * ws * b * b, [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      const int64_t in = p / cs, ch = p % cs;
      for (int64_t i = 0; i < b; ++i)
        for (int64_t j = 0; j < b; ++j) {
          const int64_t dc = crd ? (ch * b + i) * b + j : (i * b + j) * cs + ch;
          for (int64_t yy = 0; yy < hs; ++yy)
            for (int64_t xx = 0; xx < ws; ++xx) {
              const int64_t depth_at = ((in * cd + dc) * hs + yy) * ws + xx;
              const int64_t space_at = ((in * cs + ch) * hs * b + yy * b + i) * ws * b + xx * b + j;
              const int64_t from = to_space ? depth_at : space_at,
                            to = to_space ? space_at : depth_at;
              std::memcpy(dst + static_cast<std::size_t>(to) * es,
                          src + static_cast<std::size_t>(from) * es, es);
            }
        }
    }
  });
}

void max_unpool(KernelContext& ctx, const std::vector<int64_t>& kernel,
                const std::vector<int64_t>& strides_attr, const std::vector<int64_t>& pads) {
  const Tensor& x = ctx.in(0);
  const Tensor& idx = ctx.in(1);
  const std::size_t sp = kernel.size();
  if (x.rank() != sp + 2 || idx.dims() != x.dims())
    throw Error("MaxUnpool: X " + x.str() + " and I " + idx.str() +
                " must have one shape with kernel_shape's spatial rank");
  std::vector<int64_t> od{x.dims()[0], x.dims()[1]};
  for (std::size_t i = 0; i < sp; ++i) {
    const int64_t s = i < strides_attr.size() ? strides_attr[i] : 1;
    const int64_t p = (i < pads.size() ? pads[i] : 0) + (sp + i < pads.size() ? pads[sp + i] : 0);
    od.push_back((x.dims()[2 + i] - 1) * s + kernel[i] - p);
  }
  // Indices are offsets into the default output; an explicit output_shape (larger,
  // to undo a pooling that dropped a border) keeps each element's coordinates.
  std::vector<int64_t> target = od;
  if (const Tensor* os = ctx.input(2)) {
    target = ints_of(os);
    if (target.size() != od.size() || target[0] != od[0] || target[1] != od[1])
      throw Error("MaxUnpool: output_shape " + os->str() + " does not fit X " + x.str());
  }
  const auto at = idx.to_int64s();
  const int64_t plane = dims_numel(od) / std::max<int64_t>(od[0] * od[1], 1);
  const int64_t tplane = dims_numel(target) / std::max<int64_t>(od[0] * od[1], 1);
  const int64_t total = dims_numel(od);
  dispatch_all(x.dtype(), "MaxUnpool", [&](auto tag) {
    using T = decltype(tag);
    Tensor& y = ctx.output(0, x.dtype(), target);
    T* out = y.data<T>();
    std::fill(out, out + y.numel(), T(0));
    const T* in = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t k = at[static_cast<std::size_t>(i)];
      if (k < 0 || k >= total)
        throw Error("MaxUnpool: index " + std::to_string(k) + " outside the output " +
                    dims_str(od));
      int64_t rem = k % plane, off = 0, scale = 1;
      for (std::size_t d = od.size() - 1; d >= 2; --d) {
        const int64_t c = rem % od[d];
        rem /= od[d];
        if (c >= target[d])
          throw Error("MaxUnpool: output_shape " + dims_str(target) + " is smaller than " +
                      dims_str(od));
        off += c * scale;
        scale *= target[d];
      }
      out[k / plane * tplane + off] = in[i];
    }
  });
}

// y = x / (bias + alpha / size * sum of x^2 over the `size` nearest channels)^beta.
void lrn(KernelContext& ctx, int64_t size, float alpha, float beta, float bias) {
  const Tensor& x = ctx.in(0);
  if (x.rank() < 3 || x.dtype() != DType::Float32)
    throw Error("LRN: input must be float32 [N, C, ...], got " + x.str());
  Tensor& y = ctx.output(0, DType::Float32, x.dims());
  const int64_t n = x.dims()[0], c = x.dims()[1], plane = x.numel() / std::max<int64_t>(n * c, 1);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  const float* in = x.data<float>();
  float* out = y.data<float>();
  parallel_for(n * c, plane * size, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t in_n = p / c, ch = p % c;
      const int64_t c0 = std::max<int64_t>(0, ch - lo), c1 = std::min<int64_t>(c - 1, ch + hi);
      for (int64_t i = 0; i < plane; ++i) {
        float sq = 0;
        for (int64_t k = c0; k <= c1; ++k) {
          const float v = in[(in_n * c + k) * plane + i];
          sq += v * v;
        }
        out[p * plane + i] =
            in[p * plane + i] / std::pow(bias + alpha / static_cast<float>(size) * sq, beta);
      }
    }
  });
}

// (x - mean) / (std + 1e-9) over `axes` (ONNX's function body of the op).
void mean_variance_normalization(KernelContext& ctx, const std::vector<int64_t>& axes_attr) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::Float32)
    throw Error("MeanVarianceNormalization: only float32 is supported, got " + x.str());
  const int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t a : axes_attr) reduced[static_cast<std::size_t>(normalize_axis(a, rank))] = true;
  // Group of an element: its index with the reduced dims dropped.
  std::vector<int64_t> gstride(x.rank(), 0);
  int64_t groups = 1;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (!reduced[d]) {
      gstride[d] = groups;
      groups *= x.dims()[d];
    }
  const int64_t n = x.numel(), per_group = groups ? n / groups : 0;
  auto group_of = [&](int64_t i) {
    int64_t g = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      g += (i % x.dims()[d]) * gstride[d];
      i /= x.dims()[d];
    }
    return g;
  };
  std::vector<double> sum(static_cast<std::size_t>(groups)), sq(sum.size());
  const float* in = x.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t g = group_of(i);
    sum[g] += in[i];
    sq[g] += static_cast<double>(in[i]) * in[i];
  }
  Tensor& y = ctx.output(0, DType::Float32, x.dims());
  float* out = y.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t g = group_of(i);
    const double mean = sum[g] / per_group, var = std::max(0.0, sq[g] / per_group - mean * mean);
    out[i] = static_cast<float>((in[i] - mean) / (std::sqrt(var) + 1e-9));
  }
}

}  // namespace

void register_layout_kernels(KernelTable& t) {
  t["DepthToSpace"] = [](const Graph&, const Node& n) {
    const int64_t b = n.attrs.get_int("blocksize", 0);
    const std::string mode = n.attrs.get_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") throw Error("mode must be DCR or CRD, got '" + mode + "'");
    const bool crd = mode == "CRD";
    return fn_kernel([b, crd](KernelContext& c) { depth_space(c, b, true, crd); });
  };
  t["SpaceToDepth"] = [](const Graph&, const Node& n) {
    const int64_t b = n.attrs.get_int("blocksize", 0);
    return fn_kernel([b](KernelContext& c) { depth_space(c, b, false, false); });
  };
  t["MaxUnpool"] = [](const Graph&, const Node& n) {
    const auto k = n.attrs.get_ints("kernel_shape");
    if (k.empty()) throw Error("MaxUnpool needs kernel_shape");
    const auto s = n.attrs.get_ints("strides"), p = n.attrs.get_ints("pads");
    return fn_kernel([k, s, p](KernelContext& c) { max_unpool(c, k, s, p); });
  };
  t["LRN"] = [](const Graph&, const Node& n) {
    const int64_t size = n.attrs.get_int("size", 0);
    if (size < 1) throw Error("LRN needs a positive size");
    const float alpha = n.attrs.get_float("alpha", 1e-4f), beta = n.attrs.get_float("beta", 0.75f),
                bias = n.attrs.get_float("bias", 1.0f);
    return fn_kernel([=](KernelContext& c) { lrn(c, size, alpha, beta, bias); });
  };
  t["MeanVarianceNormalization"] = [](const Graph&, const Node& n) {
    const auto axes = n.attrs.get_ints("axes", {0, 2, 3});
    return fn_kernel([axes](KernelContext& c) { mean_variance_normalization(c, axes); });
  };
}

}  // namespace fx
