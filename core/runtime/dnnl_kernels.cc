// SPDX-License-Identifier: Apache-2.0
// Conv, MatMul and Gemm through oneDNN. Primitives are created for the input dims
// of the first run and kept until the dims change; constant weights are reordered
// once into the layout oneDNN prefers for that primitive. Activations are plain
// (NCHW / row-major) between kernels so that the project kernels around them read them
// directly; a Conv converts inside itself where oneDNN prefers channels-last
// (runtime/conv_parts.h).

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>

#include "runtime/conv_parts.h"
#include "runtime/depthwise_conv.h"
#include "runtime/dnnl_parts.h"
#include "runtime/dnnl_util.h"
#include "runtime/elementwise_ops.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/winograd_conv.h"

namespace fx {

dnnl::engine& dnnl_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& dnnl_stream() {
  thread_local dnnl::stream s(dnnl_engine());
  return s;
}

dnnl::memory::dims to_dnnl(const std::vector<int64_t>& dims) {
  return dnnl::memory::dims(dims.begin(), dims.end());
}

dnnl::memory::data_type integer_kernel_type(DType t, const char* what) {
  using dt = dnnl::memory::data_type;
  switch (t) {
    case DType::UInt8: return dt::u8;
    case DType::Int8: return dt::s8;
    case DType::Int32: return dt::s32;
    case DType::Float32: return dt::f32;
    default: throw Error(std::string(what) + ": unsupported type " + std::string(dtype_name(t)));
  }
}

dnnl::memory::desc plain_f32_desc(const std::vector<int64_t>& dims) {
  auto strides = contiguous_strides(dims);
  return dnnl::memory::desc(to_dnnl(dims), dnnl::memory::data_type::f32, to_dnnl(strides));
}

dnnl::convolution_forward::desc conv_forward_desc(
    const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
    const dnnl::memory::desc* bias, const dnnl::memory::desc& dst,
    const dnnl::memory::dims& strides, const dnnl::memory::dims& dilation,
    const dnnl::memory::dims& pad_l, const dnnl::memory::dims& pad_r) {
  constexpr auto prop = dnnl::prop_kind::forward_inference;
  constexpr auto alg = dnnl::algorithm::convolution_direct;
  if (bias) return {prop, alg, src, weights, *bias, dst, strides, dilation, pad_l, pad_r};
  return {prop, alg, src, weights, dst, strides, dilation, pad_l, pad_r};
}

namespace {

using dt = dnnl::memory::data_type;

void require_f32(const Tensor& t, const char* op) {
  if (t.dtype() != DType::Float32) {
    throw Error(std::string(op) + ": only float32 is supported, got " + t.str());
  }
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(const Graph& g, const Node& n) : name_(n.name) {
    group_ = n.attrs.get_int("group", 1);
    strides_ = n.attrs.get_ints("strides");
    dilations_ = n.attrs.get_ints("dilations");
    pads_ = n.attrs.get_ints("pads");
    kernel_shape_ = n.attrs.get_ints("kernel_shape");
    auto_pad_ = n.attrs.get_string("auto_pad", "NOTSET");
    weights_constant_ = constant_input(g, n, 1).has_value();
    bias_constant_ = n.inputs.size() < 3 || n.inputs[2] == kNoValue || constant_input(g, n, 2);
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    const Tensor& w = ctx.in(1);
    const Tensor* b = ctx.input(2);
    require_f32(x, "Conv");
    require_f32(w, "Conv");
    if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank()) {
      throw Error("Conv: unsupported shapes " + x.str() + " * " + w.str());
    }
    if (x.dims() != src_dims_ || w.dims() != w_dims_ || (b != nullptr) != has_bias_) {
      build(x, w, b, ctx.threads());
    }
    Tensor& y = ctx.output(0, DType::Float32, dst_dims_);
    if (y.numel() == 0) return;
    if (depthwise_) {
      depthwise_conv2d(dw_, x.data<float>(), w.data<float>(), b ? b->data<float>() : nullptr,
                       y.data<float>());
      return;
    }
    if (wino_) {
      wino_->run(x.raw(), nullptr, y.raw(), ctx.threads());
      return;
    }
    parts_->run(x.raw(), w.raw(), b ? b->raw() : nullptr, y.raw(), ctx.threads());
  }

 private:
  void build(const Tensor& x, const Tensor& w, const Tensor* bias, int threads) {
    const bool has_bias = bias != nullptr;
    has_bias_ = has_bias;
    parts_.reset();
    wino_.reset();
    const std::size_t sp = x.rank() - 2;
    std::vector<int64_t> k(w.dims().begin() + 2, w.dims().end());
    auto at = [](const std::vector<int64_t>& v, std::size_t i, int64_t def) {
      return i < v.size() ? v[i] : def;
    };
    if (x.dims()[1] != w.dims()[1] * group_) {
      throw Error("Conv: input channels of " + x.str() + " do not match weights " + w.str() +
                  " with group " + std::to_string(group_));
    }
    dnnl::memory::dims strides(sp), dil(sp), pl(sp), pr(sp);
    std::vector<int64_t> out{x.dims()[0], w.dims()[0]};
    for (std::size_t i = 0; i < sp; ++i) {
      int64_t in = x.dims()[2 + i], s = at(strides_, i, 1), d = at(dilations_, i, 1);
      int64_t ek = (k[i] - 1) * d + 1;
      int64_t p0 = at(pads_, i, 0), p1 = at(pads_, sp + i, 0);
      if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        int64_t o = (in + s - 1) / s;
        int64_t total = std::max<int64_t>(0, (o - 1) * s + ek - in);
        p0 = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        p1 = total - p0;
      } else if (auto_pad_ == "VALID") {
        p0 = p1 = 0;
      }
      int64_t o = (in + p0 + p1 - ek) / s + 1;
      if (o <= 0) throw Error("Conv: output would be empty for " + x.str());
      out.push_back(o);
      strides[i] = s;
      dil[i] = d - 1;  // oneDNN counts dilation from 0
      pl[i] = p0;
      pr[i] = p1;
    }
    src_dims_ = x.dims();
    w_dims_ = w.dims();
    dst_dims_ = out;
    // Depthwise 2-D (one filter per channel): the project's direct loop.
    depthwise_ = sp == 2 && group_ > 1 && group_ == x.dims()[1] && w.dims()[0] == group_;
    if (depthwise_) {
      dw_ = DepthwiseShape{x.dims()[0], x.dims()[1], x.dims()[2], x.dims()[3], out[2],
                           out[3],      k[0],        k[1],        strides[0],  strides[1],
                           dil[0] + 1,  dil[1] + 1,  pl[0],       pl[1]};
      return;
    }
    if (dims_numel(out) == 0) return;  // nothing to compute; run() writes an empty output
    const int64_t oc = w.dims()[0];
    const bool splittable = x.dims()[0] == 1 && group_ == 1 && weights_constant_;
    // 3x3 stride-1 convolutions through oneDNN's Winograd kernels where it has them
    // (runtime/winograd_conv.h), reading and writing NCHW.
    if (splittable && sp == 2 && bias_constant_ &&
        winograd_shape(x.dims()[0], x.dims()[1], oc, group_, out[2], out[3], k, strides_,
                       dilations_)) {
      WinogradConvSpec ws;
      ws.name = name_;
      ws.ic = x.dims()[1], ws.ih = x.dims()[2], ws.iw = x.dims()[3];
      ws.oc = oc, ws.oh = out[2], ws.ow = out[3];
      ws.pad_top = pl[0], ws.pad_left = pl[1], ws.pad_bottom = pr[0], ws.pad_right = pr[1];
      ws.weights = w.data<float>();
      // A copy: the Winograd parts point at it for as long as they live.
      if (has_bias) wino_bias_.assign(bias->data<float>(), bias->data<float>() + oc);
      ws.bias = has_bias ? wino_bias_.data() : nullptr;
      if ((wino_ = WinogradConv::make(ws, threads))) return;
    }
    ConvPartsSpec spec;
    spec.x = x.dims(), spec.w = w.dims(), spec.out = out, spec.group = group_;
    spec.strides = strides, spec.dil = dil, spec.pl = pl, spec.pr = pr;
    spec.weights = weights_constant_ ? w.data<float>() : nullptr;
    spec.bias = has_bias;
    parts_ = std::make_unique<ConvParts>(spec, threads);
  }

  int64_t group_ = 1;
  std::vector<int64_t> strides_, dilations_, pads_, kernel_shape_;
  std::string auto_pad_;
  bool weights_constant_ = false, bias_constant_ = false, depthwise_ = false;
  DepthwiseShape dw_{};
  std::vector<int64_t> src_dims_, w_dims_, dst_dims_;
  bool has_bias_ = false;
  std::unique_ptr<ConvParts> parts_;  // the direct path: everything but depthwise, Winograd
  std::string name_;
  std::unique_ptr<WinogradConv> wino_;  // set: the Winograd path
  std::vector<float> wino_bias_;
};

}  // namespace

void register_dnnl_kernels(KernelTable& t) {
  t["Conv"] = [](const Graph& g, const Node& n) { return std::make_shared<ConvKernel>(g, n); };
  register_matmul_kernels(t);
}

}  // namespace fx
