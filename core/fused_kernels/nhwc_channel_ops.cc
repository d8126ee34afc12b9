// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/nhwc_channel_ops.h"

#include <algorithm>
#include <vector>

#include "runtime/parallel.h"
#include "util/error.h"

namespace fx {

namespace {

// Clones by instruction set (see fused_kernels/depthwise_nhwc.cc).
#if defined(__x86_64__) && !defined(__clang__)
#define FX_CHANNEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FX_CHANNEL_CLONES
#endif

// Channels [c0, c1) of one image: the mean over its `pixels` rows of `c` floats.
FX_CHANNEL_CLONES void mean_over_pixels(const float* img, float* out, int64_t pixels, int64_t c,
                                        int64_t c0, int64_t c1) {
  float* __restrict o = out;
  for (int64_t k = c0; k < c1; ++k) o[k] = 0.f;
  for (int64_t p = 0; p < pixels; ++p) {
    const float* __restrict x = img + p * c;
    for (int64_t k = c0; k < c1; ++k) o[k] += x[k];
  }
  const float inv = 1.f / static_cast<float>(pixels);
  for (int64_t k = c0; k < c1; ++k) o[k] *= inv;
}

FX_CHANNEL_CLONES void scale_pixels(const float* x, const float* s, float* y, int64_t p0,
                                    int64_t p1, int64_t c) {
  for (int64_t p = p0; p < p1; ++p) {
    const float* __restrict xi = x + p * c;
    float* __restrict yi = y + p * c;
    for (int64_t k = 0; k < c; ++k) yi[k] = xi[k] * s[k];
  }
}

void check_rank4_float(const Tensor& t, const KernelContext& ctx, const char* op) {
  if (t.dtype() != DType::Float32 || t.rank() != 4)
    throw Error(std::string(op) + " step " + ctx.step_name() + ": unsupported input " + t.str());
}

class NhwcGlobalPoolKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    check_rank4_float(x, ctx, "GlobalAveragePool");
    const auto& d = x.dims();
    const int64_t n = d[0], c = d[1], pixels = d[2] * d[3];
    Tensor& y = ctx.output(0, DType::Float32, {n, c, 1, 1});
    if (y.numel() == 0) return;
    if (pixels == 0) throw Error("GlobalAveragePool step " + ctx.step_name() + ": empty input");
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    // Parts: whole images times runs of 64 channels (each part reads its channels of
    // every pixel, a strided walk that stays within the rows it touches).
    const int64_t blocks = (c + 63) / 64;
    parallel_for(n * blocks, pixels * 64, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t i = t / blocks, c0 = (t % blocks) * 64, c1 = std::min(c, c0 + 64);
        mean_over_pixels(xp + i * pixels * c, yp + i * c, pixels, c, c0, c1);
      }
    });
  }
};

class NhwcChannelScaleKernel final : public Kernel {
 public:
  explicit NhwcChannelScaleKernel(int x_index) : xi_(x_index) {}
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(xi_);
    const Tensor& s = ctx.in(1 - xi_);
    check_rank4_float(x, ctx, "Mul");
    check_rank4_float(s, ctx, "Mul");
    const auto& d = x.dims();
    const int64_t n = d[0], c = d[1], pixels = d[2] * d[3];
    const auto& sd = s.dims();
    if (sd[1] != c || sd[2] != 1 || sd[3] != 1 || (sd[0] != n && sd[0] != 1))
      throw Error("Mul step " + ctx.step_name() + ": scale " + s.str() + " is not per channel of " +
                  x.str());
    Tensor& y = ctx.output(0, DType::Float32, d);
    if (y.numel() == 0) return;
    const float* xp = x.data<float>();
    const float* sp = s.data<float>();
    float* yp = y.data<float>();
    const int64_t s_step = sd[0] == 1 ? 0 : c;
    parallel_for(n * pixels, c, [&](int64_t r0, int64_t r1) {
      // Rows r0..r1 may span images: one run per image.
      for (int64_t r = r0; r < r1;) {
        const int64_t i = r / pixels, end = std::min(r1, (i + 1) * pixels);
        scale_pixels(xp, sp + i * s_step, yp, r, end, c);
        r = end;
      }
    });
  }

 private:
  int xi_;
};

bool rank4_float(const Value& v) {
  return v.dtype == DType::Float32 && v.shape.rank_known() && v.shape.rank() == 4;
}

}  // namespace

bool is_nhwc_global_pool_candidate(const Graph& g, const Step& s) {
  if (s.nodes.size() != 1 || s.inputs.size() != 1 || s.outputs.size() != 1) return false;
  const Node& n = g.node(s.nodes[0]);
  return n.op_type == "GlobalAveragePool" && n.domain.empty() && s.inputs[0] != kNoValue &&
         rank4_float(g.value(s.inputs[0]));
}

std::shared_ptr<Kernel> make_nhwc_global_pool_kernel() {
  return std::make_shared<NhwcGlobalPoolKernel>();
}

bool is_nhwc_global_pool_kernel(const Kernel* k) {
  return dynamic_cast<const NhwcGlobalPoolKernel*>(k) != nullptr;
}

std::optional<int> nhwc_channel_scale_input(const Graph& g, const Step& s) {
  if (s.nodes.size() != 1 || s.inputs.size() != 2 || s.outputs.size() != 1) return std::nullopt;
  const Node& n = g.node(s.nodes[0]);
  if (n.op_type != "Mul" || !n.domain.empty()) return std::nullopt;
  for (ValueId v : s.inputs)
    if (v == kNoValue || !rank4_float(g.value(v)) || !g.value(v).shape.is_static())
      return std::nullopt;
  for (int xi : {0, 1}) {
    const auto x = g.value(s.inputs[static_cast<std::size_t>(xi)]).shape.static_dims();
    const auto sc = g.value(s.inputs[static_cast<std::size_t>(1 - xi)]).shape.static_dims();
    if (x[2] * x[3] > 1 && sc[1] == x[1] && sc[2] == 1 && sc[3] == 1 &&
        (sc[0] == x[0] || sc[0] == 1) &&
        g.value(s.outputs[0]).shape == g.value(s.inputs[static_cast<std::size_t>(xi)]).shape)
      return xi;
  }
  return std::nullopt;
}

std::shared_ptr<Kernel> make_nhwc_channel_scale_kernel(int x_index) {
  return std::make_shared<NhwcChannelScaleKernel>(x_index);
}

bool is_nhwc_channel_scale_kernel(const Kernel* k) {
  return dynamic_cast<const NhwcChannelScaleKernel*>(k) != nullptr;
}

}  // namespace fx
