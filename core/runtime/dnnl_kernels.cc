// SPDX-License-Identifier: Apache-2.0
// Conv, MatMul and Gemm through oneDNN. Primitives are created for the input dims
// of the first run and kept until the dims change; constant weights are reordered
// once into the layout oneDNN prefers for that primitive. Activations stay plain
// (NCHW / row-major) so that the project kernels around them read them directly.

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>

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
    void* wp = const_cast<void*>(w.raw());
    void* bp = b ? const_cast<void*>(b->raw()) : nullptr;
    if (nhwc_) {  // three stages, each split over rows: reorder in, convolve, reorder out
      void* in = src_nhwc_.get_data_handle();
      void* mid = dst_nhwc_.get_data_handle();
      run_parts(in_parts_, {const_cast<void*>(x.raw()), nullptr, nullptr, in}, ctx.threads());
      run_parts(parts_, {in, wp, bp, mid}, ctx.threads());
      run_parts(out_parts_, {mid, nullptr, nullptr, y.raw()}, ctx.threads());
      return;
    }
    run_parts(parts_, {const_cast<void*>(x.raw()), wp, bp, y.raw()}, ctx.threads());
  }

 private:
  void build(const Tensor& x, const Tensor& w, const Tensor* bias, int threads) {
    const bool has_bias = bias != nullptr;
    has_bias_ = has_bias;
    parts_.clear();
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
    auto src_md = plain_f32_desc(x.dims());
    // Grouped weights are [G, O/G, I/G, k...] for oneDNN.
    std::vector<int64_t> wd = w.dims();
    if (group_ > 1) {
      wd[0] /= group_;
      wd.insert(wd.begin(), group_);
    }
    // Output channels are split into one part per thread when each part stays a
    // worthwhile GEMM: single image, no groups, constant weights (reordered per part).
    const int64_t oc = w.dims()[0];
    if (dims_numel(out) == 0) return;  // nothing to compute; run() writes an empty output
    const int64_t plane = dims_numel(out) / (out[0] * oc);
    const int64_t per_oc = plane * dims_numel(w.dims()) / oc;  // MACs per channel
    bool splittable = x.dims()[0] == 1 && group_ == 1 && weights_constant_;
    const int64_t min_oc = std::max<int64_t>(16, 65536 / per_oc + 1);
    auto ranges = splittable ? split_range(oc, threads, min_oc)
                             : std::vector<std::pair<int64_t, int64_t>>{{0, oc}};
    // Channels-last activations where oneDNN prefers them (probed with format
    // `any`): its brgemm convolutions beat its GEMM one on plain NCHW by far more
    // than reordering the input in and the output back costs. FX_NO_BLOCKED=1 keeps
    // the plain path (for comparisons).
    nhwc_ = false;
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
    // 1x1 convolutions stay plain: on NCHW they are one GEMM already, and the
    // reorders would cost about what they compute (MobileNetV2: 2.5x slower).
    if (splittable && sp == 2 && k[0] * k[1] > 1 && !getenv("FX_NO_BLOCKED")) {
      const auto any = dnnl::memory::format_tag::any;
      dnnl::convolution_forward::desc probe(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
          dnnl::memory::desc(to_dnnl(x.dims()), dt::f32, any),
          dnnl::memory::desc(to_dnnl(wd), dt::f32, any),
          dnnl::memory::desc(to_dnnl(out), dt::f32, any), strides, dil, pl, pr);
      dnnl::convolution_forward::primitive_desc ppd(probe, dnnl_engine());
      const std::string impl = ppd.impl_info_str();
      if (impl.find("gemm") == std::string::npos && ppd.src_desc() == nhwc_desc(x.dims()) &&
          ppd.dst_desc() == nhwc_desc(out)) {
        build_nhwc(x, w, has_bias, out, strides, dil, pl, pr, threads);
        return;
      }
    }
    const int64_t w_per_oc = dims_numel(w.dims()) / oc;
    for (auto [o0, o1] : ranges) {
      const int64_t n_oc = o1 - o0;
      std::vector<int64_t> part_wd = wd, part_out = out;
      if (group_ == 1) part_wd[0] = n_oc;
      part_out[1] = n_oc;
      // A single image's channel slice is dense (oneDNN's fast convolutions want
      // dense memory; with strides it falls back to its reference loop).
      auto dst_md = plain_f32_desc(part_out);
      auto user_w = plain_f32_desc(part_wd);
      dnnl::memory::desc w_md =
          weights_constant_
              ? dnnl::memory::desc(to_dnnl(part_wd), dt::f32, dnnl::memory::format_tag::any)
              : user_w;
      dnnl::memory::desc b_md({n_oc}, dt::f32, dnnl::memory::format_tag::a);
      auto desc =
          conv_forward_desc(src_md, w_md, has_bias ? &b_md : nullptr, dst_md, strides, dil, pl, pr);
      dnnl::convolution_forward::primitive_desc pd(desc, part_attr(), dnnl_engine());
      std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src_md},
                                                            {DNNL_ARG_DST, dst_md}};
      std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, 0}, {DNNL_ARG_DST, 3, o0 * plane * 4}};
      if (has_bias) {
        descs.push_back({DNNL_ARG_BIAS, b_md});
        binds.push_back({DNNL_ARG_BIAS, 2, o0 * 4});
      }
      if (!weights_constant_) {
        descs.push_back({DNNL_ARG_WEIGHTS, user_w});
        binds.push_back({DNNL_ARG_WEIGHTS, 1, 0});
      }
      DnnlPart part = make_part(pd, descs, std::move(binds));
      if (weights_constant_) {
        part.args[DNNL_ARG_WEIGHTS] =
            reorder_weights(user_w, w.data<float>() + o0 * w_per_oc, pd.weights_desc());
      }
      parts_.push_back(std::move(part));
    }
  }

  static dnnl::memory::desc nhwc_desc(const std::vector<int64_t>& d) {
    return dnnl::memory::desc(to_dnnl(d), dt::f32, dnnl::memory::format_tag::acdb);
  }

  // Reorders between NCHW and NHWC for rows [h0, h1) of an image [1, c, h, w], as
  // parts (tensor 0 -> tensor 3) split over rows.
  static std::vector<DnnlPart> row_reorders(const std::vector<int64_t>& d, bool to_nhwc,
                                            int threads) {
    const int64_t c = d[1], h = d[2], w = d[3];
    std::vector<DnnlPart> parts;
    for (auto [h0, h1] : split_range(h, threads, std::max<int64_t>(1, 65536 / (c * w)))) {
      const int64_t hp = h1 - h0;
      dnnl::memory::desc nchw(to_dnnl({1, c, hp, w}), dt::f32, to_dnnl({c * h * w, h * w, w, 1}));
      dnnl::memory::desc nhwc(to_dnnl({1, c, hp, w}), dt::f32, to_dnnl({c * hp * w, 1, w * c, c}));
      const auto& from = to_nhwc ? nchw : nhwc;
      const auto& to = to_nhwc ? nhwc : nchw;
      dnnl::reorder::primitive_desc pd(dnnl_engine(), from, dnnl_engine(), to, part_attr());
      const int64_t off_from = to_nhwc ? h0 * w : h0 * w * c,
                    off_to = to_nhwc ? h0 * w * c : h0 * w;
      parts.push_back(make_part(pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}},
                                {{DNNL_ARG_FROM, 0, off_from * 4}, {DNNL_ARG_TO, 3, off_to * 4}}));
    }
    return parts;
  }

  // The convolution in NHWC, split over output rows: each part reads the input rows
  // its outputs need, with the padding that falls inside its slice.
  void build_nhwc(const Tensor& x, const Tensor& w, bool has_bias, const std::vector<int64_t>& out,
                  const dnnl::memory::dims& strides, const dnnl::memory::dims& dil,
                  const dnnl::memory::dims& pl, const dnnl::memory::dims& pr, int threads) {
    nhwc_ = true;
    const int64_t ic = x.dims()[1], ih = x.dims()[2], iw = x.dims()[3];
    const int64_t oc = out[1], oh = out[2], ow = out[3];
    const int64_t s = strides[0], ek = (w.dims()[2] - 1) * (dil[0] + 1) + 1;
    src_nhwc_ = dnnl::memory(nhwc_desc(x.dims()), dnnl_engine());
    dst_nhwc_ = dnnl::memory(nhwc_desc(out), dnnl_engine());
    in_parts_ = row_reorders(x.dims(), true, threads);
    out_parts_ = row_reorders(out, false, threads);
    const int64_t row_macs = ow * oc * dims_numel(w.dims()) / oc;
    auto user_w = plain_f32_desc(w.dims());
    dnnl::memory::desc w_any(to_dnnl(w.dims()), dt::f32, dnnl::memory::format_tag::any);
    dnnl::memory::desc b_md({oc}, dt::f32, dnnl::memory::format_tag::a);
    dnnl::memory shared_w;
    for (auto [o0, o1] :
         split_range(oh, threads, std::max<int64_t>(1, (int64_t{1} << 20) / row_macs))) {
      const int64_t first = o0 * s - pl[0], last = (o1 - 1) * s - pl[0] + ek;  // input rows
      const int64_t lo = std::max<int64_t>(0, first), hi = std::min(ih, last);
      dnnl::memory::dims ppl{lo - first, pl[1]}, ppr{last - hi, pr[1]};
      dnnl::memory::desc src(to_dnnl({1, ic, hi - lo, iw}), dt::f32,
                             to_dnnl({ic * (hi - lo) * iw, 1, iw * ic, ic}));
      dnnl::memory::desc dst(to_dnnl({1, oc, o1 - o0, ow}), dt::f32,
                             to_dnnl({oc * (o1 - o0) * ow, 1, ow * oc, oc}));
      auto desc =
          conv_forward_desc(src, w_any, has_bias ? &b_md : nullptr, dst, strides, dil, ppl, ppr);
      // Strides of the N dim say dense (N is 1): oneDNN's fast kernels want dense memory.
      dnnl::convolution_forward::primitive_desc pd(desc, part_attr(), dnnl_engine());
      std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src},
                                                            {DNNL_ARG_DST, dst}};
      std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, lo * iw * ic * 4},
                                        {DNNL_ARG_DST, 3, o0 * ow * oc * 4}};
      if (has_bias) {
        descs.push_back({DNNL_ARG_BIAS, b_md});
        binds.push_back({DNNL_ARG_BIAS, 2, 0});
      }
      DnnlPart part = make_part(pd, descs, std::move(binds));
      if (!shared_w || shared_w.get_desc() != pd.weights_desc()) {
        shared_w = reorder_weights(user_w, w.raw(), pd.weights_desc());
      }
      part.args[DNNL_ARG_WEIGHTS] = shared_w;
      parts_.push_back(std::move(part));
    }
  }

  int64_t group_ = 1;
  std::vector<int64_t> strides_, dilations_, pads_, kernel_shape_;
  std::string auto_pad_;
  bool weights_constant_ = false, bias_constant_ = false, depthwise_ = false;
  DepthwiseShape dw_{};
  std::vector<int64_t> src_dims_, w_dims_, dst_dims_;
  bool has_bias_ = false;
  std::vector<DnnlPart> parts_;
  bool nhwc_ = false;
  std::vector<DnnlPart> in_parts_, out_parts_;  // reorders NCHW -> NHWC -> NCHW
  dnnl::memory src_nhwc_, dst_nhwc_;
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
