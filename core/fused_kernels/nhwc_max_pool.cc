// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/nhwc_max_pool.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "fused_kernels/pool_pad_fold.h"
#include "runtime/parallel.h"
#include "util/error.h"

namespace fx {

namespace {

// Clones by instruction set (see fused_kernels/depthwise_nhwc.cc).
#if defined(__x86_64__) && !defined(__clang__)
#define FX_CONV_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FX_CONV_CLONES
#endif

template <class T>
FX_CONV_CLONES void max_pool_nhwc_row(const T* img, T* out, int64_t C, int64_t H, int64_t W,
                                      int64_t OW, int64_t oh, const PoolGeometry& p) {
  const int64_t h0 = std::max<int64_t>(0, oh * p.sh - p.pt),
                h1 = std::min<int64_t>(H, oh * p.sh - p.pt + p.kh);
  for (int64_t ow = 0; ow < OW; ++ow) {
    const int64_t w0 = std::max<int64_t>(0, ow * p.sw - p.pl),
                  w1 = std::min<int64_t>(W, ow * p.sw - p.pl + p.kw);
    T* __restrict o = out + ow * C;
    const T* first = img + (h0 * W + w0) * C;
    for (int64_t c = 0; c < C; ++c) o[c] = first[c];
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) {
        const T* __restrict x = img + (h * W + w) * C;
        for (int64_t c = 0; c < C; ++c) o[c] = x[c] > o[c] ? x[c] : o[c];
      }
  }
}

// One output row of an average: the window's sum over channels, times one over its
// count (the runtime's AveragePool: with count_include_pad the window clipped to the
// padded input, else its input elements).
FX_CONV_CLONES void avg_pool_nhwc_row(const float* img, float* out, int64_t C, int64_t H, int64_t W,
                                      int64_t OW, int64_t oh, const PoolGeometry& p) {
  const int64_t hs = oh * p.sh - p.pt, he = std::min<int64_t>(hs + p.kh, H + p.pb);
  const int64_t h0 = std::max<int64_t>(0, hs), h1 = std::min<int64_t>(H, he);
  for (int64_t ow = 0; ow < OW; ++ow) {
    const int64_t ws = ow * p.sw - p.pl, we = std::min<int64_t>(ws + p.kw, W + p.pr);
    const int64_t w0 = std::max<int64_t>(0, ws), w1 = std::min<int64_t>(W, we);
    float* __restrict o = out + ow * C;
    for (int64_t c = 0; c < C; ++c) o[c] = 0.0f;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) {
        const float* __restrict x = img + (h * W + w) * C;
        for (int64_t c = 0; c < C; ++c) o[c] += x[c];
      }
    const int64_t n = p.count_include_pad
                          ? (he - hs) * (we - ws)
                          : std::max<int64_t>(h1 - h0, 0) * std::max<int64_t>(w1 - w0, 0);
    const float scale = 1.0f / static_cast<float>(std::max<int64_t>(n, 1));
    for (int64_t c = 0; c < C; ++c) o[c] *= scale;
  }
}

// As the runtime's MaxPool: with ceil_mode a last window that would start past the
// input and its leading pad is dropped, so every window holds an input element.
int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, bool ceil) {
  const int64_t span = in + p0 + p1 - k;
  if (span < 0) return 0;
  int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (out - 1) * s >= in + p0) --out;
  return out;
}

class NhwcMaxPoolKernel final : public Kernel {
 public:
  explicit NhwcMaxPoolKernel(PoolGeometry p) : p_(p) {}
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    if (x.rank() != 4 || (p_.average && x.dtype() != DType::Float32))
      throw Error(name() + " step " + ctx.step_name() + ": unsupported input " + x.str());
    switch (x.dtype()) {
      case DType::Float32: return pool<float>(ctx, x);
      case DType::UInt8: return pool<uint8_t>(ctx, x);
      case DType::Int8: return pool<int8_t>(ctx, x);
      default: throw Error("MaxPool step " + ctx.step_name() + ": unsupported input " + x.str());
    }
  }

 private:
  std::string name() const { return p_.average ? "AveragePool" : "MaxPool"; }

  template <class T>
  void pool(KernelContext& ctx, const Tensor& x) {
    const auto& d = x.dims();
    const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
    const int64_t oh = out_size(h, p_.kh, p_.sh, p_.pt, p_.pb, p_.ceil),
                  ow = out_size(w, p_.kw, p_.sw, p_.pl, p_.pr, p_.ceil);
    if (oh <= 0 || ow <= 0) throw Error(name() + " step " + ctx.step_name() + ": empty output");
    Tensor& y = ctx.output(0, x.dtype(), {n, c, oh, ow});
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    parallel_for(n * oh, ow * c * p_.kh * p_.kw, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* img = xp + (r / oh) * h * w * c;
        if constexpr (std::is_same_v<T, float>) {
          if (p_.average) {
            avg_pool_nhwc_row(img, yp + r * ow * c, c, h, w, ow, r % oh, p_);
            continue;
          }
        }
        max_pool_nhwc_row(img, yp + r * ow * c, c, h, w, ow, r % oh, p_);
      }
    });
  }

  PoolGeometry p_;
};

}  // namespace

namespace {

// The geometry of a 2-D pool node's attributes this kernel runs (no auto_pad or
// dilation; pads smaller than the window), or nullopt.
std::optional<PoolGeometry> geometry_of(const Node& n) {
  const auto k = n.attrs.get_ints("kernel_shape");
  auto st = n.attrs.get_ints("strides"), pads = n.attrs.get_ints("pads"),
       dil = n.attrs.get_ints("dilations");
  if (k.size() != 2 || n.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return {};
  for (int64_t d : dil)
    if (d != 1) return {};
  if (st.empty()) st = {1, 1};
  if (pads.empty()) pads = {0, 0, 0, 0};
  if (st.size() != 2 || pads.size() != 4) return {};
  if (pads[0] >= k[0] || pads[1] >= k[1] || pads[2] >= k[0] || pads[3] >= k[1]) return {};
  PoolGeometry p{k[0],    k[1],    st[0],
                 st[1],   pads[0], pads[1],
                 pads[2], pads[3], n.attrs.get_int("ceil_mode", 0) != 0};
  p.average = n.op_type == "AveragePool";
  p.count_include_pad = n.attrs.get_int("count_include_pad", 0) != 0;
  return p;
}

}  // namespace

std::optional<PoolGeometry> nhwc_max_pool_geometry(const Graph& g, const Step& s) {
  if (s.outputs.size() != 1 || s.inputs.size() != 1 || s.nodes.empty()) return {};
  if (auto avg = folded_average_pool(g, s)) {
    if (g.value(s.inputs[0]).dtype != DType::Float32) return {};
    return geometry_of(*avg);
  }
  // A lone MaxPool, or a QDQ MaxPool group (qdq_int8_kernel.h) pooling 8-bit values.
  NodeId pool = s.nodes[0];
  if (s.nodes.size() > 1) {
    pool = kNoNode;
    for (NodeId id : s.nodes) {
      const std::string& op = g.node(id).op_type;
      if (op == "MaxPool" && pool == kNoNode)
        pool = id;
      else if (op != "DequantizeLinear" && op != "QuantizeLinear")
        return {};
    }
    const DType in = g.value(s.inputs[0]).dtype, out = g.value(s.outputs[0]).dtype;
    if (pool == kNoNode || in != out || (in != DType::UInt8 && in != DType::Int8)) return {};
  }
  const Node& n = g.node(pool);
  if (n.op_type != "MaxPool" || n.outputs.size() != 1 || n.attrs.get_int("storage_order", 0) != 0)
    return {};
  return geometry_of(n);
}

std::shared_ptr<Kernel> make_nhwc_max_pool_kernel(const PoolGeometry& p) {
  return std::make_shared<NhwcMaxPoolKernel>(p);
}

bool is_nhwc_max_pool_kernel(const Kernel* k) {
  return dynamic_cast<const NhwcMaxPoolKernel*>(k) != nullptr;
}

}  // namespace fx
