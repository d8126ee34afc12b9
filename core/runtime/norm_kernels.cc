// SPDX-License-Identifier: Apache-2.0
// Normalizations: BatchNormalization (inference), LayerNormalization,
// InstanceNormalization, Softmax, LogSoftmax. Each works on contiguous rows.

#include <cmath>
#include <limits>

#include "runtime/fast_math.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/lane_reduce.h"
#include "runtime/parallel.h"

namespace fx {
namespace {

void require_f32(const Tensor& t, const char* op) {
  if (t.dtype() != DType::Float32) throw Error(std::string(op) + ": only float32, got " + t.str());
}

void batch_norm(KernelContext& ctx, float eps) {
  const Tensor& x = ctx.in(0);
  require_f32(x, "BatchNormalization");
  if (x.rank() < 2) throw Error("BatchNormalization: input " + x.str() + " has no channel dim");
  const int64_t n = x.dims()[0], c = x.dims()[1], plane = c ? x.numel() / (n * c) : 0;
  const float *sc = ctx.in(1).data<float>(), *bi = ctx.in(2).data<float>();
  const float *mean = ctx.in(3).data<float>(), *var = ctx.in(4).data<float>();
  for (int i = 1; i <= 4; ++i) {
    if (ctx.in(i).numel() != c)
      throw Error("BatchNormalization: parameter " + ctx.in(i).str() + " for " + x.str());
  }
  Tensor& y = ctx.output(0, DType::Float32, x.dims());
  const float* in = x.data<float>();
  float* out = y.data<float>();
  parallel_for(n * c, plane, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      int64_t ch = p % c;
      const float a = sc[ch] / std::sqrt(var[ch] + eps), s = bi[ch] - mean[ch] * a;
      const float* src = in + p * plane;
      float* dst = out + p * plane;
      for (int64_t i = 0; i < plane; ++i) dst[i] = src[i] * a + s;
    }
  });
}

// One contiguous row of Softmax / LogSoftmax. Max and sum in lanes (a serial float
// chain neither vectorizes nor overlaps), the exp pass vectorized; AVX2 clone. This
// kernel ran ViT-B/16's twelve attention Softmaxes 2.4x slower than the generated
// row kernel.
FX_VECTOR_CLONES void softmax_row(const float* src, float* dst, int64_t len, bool log) {
  const float mx = lane_max(src, len, -std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < len; ++i) dst[i] = fast_exp(src[i] - mx);
  const float sum = lane_sum(dst, len);
  if (log) {
    const float ls = std::log(sum);
    for (int64_t i = 0; i < len; ++i) dst[i] = src[i] - mx - ls;
  } else {
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < len; ++i) dst[i] *= inv;
  }
}

// One row of LayerNormalization: mean, then the centred sum of squares (two passes,
// as the decomposed graph computes it), in lanes; AVX2 clone.
FX_VECTOR_CLONES void layer_norm_row(const float* src, float* dst, int64_t cols, const float* g,
                                     const float* bb, float eps, float& mu_out, float& inv_out) {
  const float mu = lane_sum(src, cols) / static_cast<float>(cols);
  const float var = lane_sum_sq_centered(src, cols, mu) / static_cast<float>(cols);
  const float inv = 1.0f / std::sqrt(var + eps);
  if (bb) {
    for (int64_t i = 0; i < cols; ++i) dst[i] = (src[i] - mu) * inv * g[i] + bb[i];
  } else {
    for (int64_t i = 0; i < cols; ++i) dst[i] = (src[i] - mu) * inv * g[i];
  }
  mu_out = mu;
  inv_out = inv;
}

void layer_norm(KernelContext& ctx, int64_t axis_attr, float eps) {
  const Tensor& x = ctx.in(0);
  require_f32(x, "LayerNormalization");
  const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(x.rank()));
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d) rows *= x.dims()[d];
  const int64_t cols = rows ? x.numel() / rows : 0;
  const Tensor& scale = ctx.in(1);
  const Tensor* bias = ctx.input(2);
  if (scale.numel() != cols || (bias && bias->numel() != cols)) {
    throw Error("LayerNormalization: scale/bias must have the normalized size " +
                std::to_string(cols));
  }
  Tensor& y = ctx.output(0, DType::Float32, x.dims());
  std::vector<int64_t> stat_dims = x.dims();
  for (std::size_t d = static_cast<std::size_t>(axis); d < stat_dims.size(); ++d) stat_dims[d] = 1;
  float* mean_out =
      ctx.num_outputs() > 1 ? ctx.output(1, DType::Float32, stat_dims).data<float>() : nullptr;
  float* inv_out =
      ctx.num_outputs() > 2 ? ctx.output(2, DType::Float32, stat_dims).data<float>() : nullptr;
  const float *in = x.data<float>(), *g = scale.data<float>(),
              *bb = bias ? bias->data<float>() : nullptr;
  float* out = y.data<float>();
  parallel_for(rows, cols * 4, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      float mu = 0, inv = 0;
      layer_norm_row(in + r * cols, out + r * cols, cols, g, bb, eps, mu, inv);
      if (mean_out) mean_out[r] = mu;
      if (inv_out) inv_out[r] = inv;
    }
  });
}

void instance_norm(KernelContext& ctx, float eps) {
  const Tensor& x = ctx.in(0);
  require_f32(x, "InstanceNormalization");
  const int64_t n = x.dims()[0], c = x.dims()[1], plane = c ? x.numel() / (n * c) : 0;
  const float *sc = ctx.in(1).data<float>(), *bi = ctx.in(2).data<float>();
  Tensor& y = ctx.output(0, DType::Float32, x.dims());
  const float* in = x.data<float>();
  float* out = y.data<float>();
  parallel_for(n * c, plane * 3, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const float* src = in + p * plane;
      float* dst = out + p * plane;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < plane; ++i) sum += src[i];
      const double mu = sum / static_cast<double>(plane);
      for (int64_t i = 0; i < plane; ++i) sq += (src[i] - mu) * (src[i] - mu);
      const float inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(plane) + eps));
      const float a = sc[p % c] * inv, s = bi[p % c] - static_cast<float>(mu) * a;
      for (int64_t i = 0; i < plane; ++i) dst[i] = src[i] * a + s;
    }
  });
}

// Softmax over `len` elements spaced `inner` apart, for outer*inner such vectors.
// legacy (opset < 13): the input is a 2-D [prod(dims[:axis]), prod(dims[axis:])].
void softmax(KernelContext& ctx, int64_t axis_attr, bool log, bool legacy) {
  const Tensor& x = ctx.in(0);
  require_f32(x, log ? "LogSoftmax" : "Softmax");
  Tensor& y = ctx.output(0, DType::Float32, x.dims());
  if (x.numel() == 0) return;
  const int64_t rank = static_cast<int64_t>(x.rank());
  const int64_t axis = normalize_axis(axis_attr, rank);
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims()[d];
  if (legacy) {
    len = x.numel() / outer;
  } else {
    len = x.dims()[axis];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dims()[d];
  }
  const float* in = x.data<float>();
  float* out = y.data<float>();
  parallel_for(outer * inner, len * 8, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      const int64_t o = v / inner, j = v % inner;
      const float* src = in + o * len * inner + j;
      float* dst = out + o * len * inner + j;
      if (inner == 1) {
        softmax_row(src, dst, len, log);
        continue;
      }
      float mx = src[0];
      for (int64_t i = 1; i < len; ++i) mx = std::max(mx, src[i * inner]);
      float sum = 0;
      for (int64_t i = 0; i < len; ++i) sum += std::exp(src[i * inner] - mx);
      const float ls = std::log(sum), inv = 1.0f / sum;
      for (int64_t i = 0; i < len; ++i) {
        float z = src[i * inner] - mx;
        dst[i * inner] = log ? z - ls : std::exp(z) * inv;
      }
    }
  });
}

}  // namespace

void register_norm_kernels(KernelTable& t) {
  t["BatchNormalization"] = [](const Graph&, const Node& n) {
    if (n.attrs.get_int("training_mode", 0) != 0 || n.outputs.size() > 1) {
      throw Error("training-mode BatchNormalization is not supported");
    }
    float eps = n.attrs.get_float("epsilon", 1e-5f);
    return fn_kernel([eps](KernelContext& ctx) { batch_norm(ctx, eps); });
  };
  t["LayerNormalization"] = [](const Graph&, const Node& n) {
    int64_t axis = n.attrs.get_int("axis", -1);
    float eps = n.attrs.get_float("epsilon", 1e-5f);
    return fn_kernel([axis, eps](KernelContext& ctx) { layer_norm(ctx, axis, eps); });
  };
  t["InstanceNormalization"] = [](const Graph&, const Node& n) {
    float eps = n.attrs.get_float("epsilon", 1e-5f);
    return fn_kernel([eps](KernelContext& ctx) { instance_norm(ctx, eps); });
  };
  for (bool log : {false, true}) {
    std::string name = log ? "LogSoftmax" : "Softmax";
    t[name] = [log](const Graph&, const Node& n) {
      int64_t axis = n.attrs.get_int("axis", -1);
      return fn_kernel([axis, log](KernelContext& ctx) { softmax(ctx, axis, log, false); });
    };
    // Before opset 13 the axis split the input into 2-D rows (default axis 1).
    t[name + kLegacyOpsetSuffix] = [log](const Graph&, const Node& n) {
      int64_t axis = n.attrs.get_int("axis", 1);
      return fn_kernel([axis, log](KernelContext& ctx) { softmax(ctx, axis, log, true); });
    };
  }
}

}  // namespace fx
