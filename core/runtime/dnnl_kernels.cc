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

namespace {

using dt = dnnl::memory::data_type;

void require_f32(const Tensor& t, const char* op) {
  if (t.dtype() != DType::Float32) {
    throw Error(std::string(op) + ": only float32 is supported, got " + t.str());
  }
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(const Graph& g, const Node& n) {
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
    void* src = const_cast<void*>(x.raw());
    void* dst = y.raw();
    if (blk_) {
      if (src_reorder_) {
        src_user_.set_data_handle(src);
        src_reorder_prim_.execute(dnnl_stream(), src_user_, src_blk_);
        dnnl_stream().wait();
        src = src_blk_.get_data_handle();
      }
      dst = dst_blk_.get_data_handle();
    }
    run_parts(parts_,
              {src, const_cast<void*>(w.raw()), b ? const_cast<void*>(b->raw()) : nullptr, dst},
              ctx.threads());
    if (blk_) {
      dst_user_.set_data_handle(y.raw());
      dst_reorder_prim_.execute(dnnl_stream(), dst_blk_, dst_user_);
      dnnl_stream().wait();
    }
  }

 private:
  void build(const Tensor& x, const Tensor& w, const Tensor* bias, int threads) {
    const bool has_bias = bias != nullptr;
    has_bias_ = has_bias;
    parts_.clear();
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
    // Blocked or channels-last activations where oneDNN prefers them (probed with
    // format `any`): its direct/brgemm convolutions beat its GEMM one by far more
    // than the two reorders per run cost. Parts split whole channel blocks; a
    // channels-last output is not split (its channel slices are not dense).
    // FX_NO_BLOCKED=1 keeps plain layouts (for comparisons).
    blk_ = 0;
    dnnl::memory::format_tag blk_tag = dnnl::memory::format_tag::undef;
    if (splittable && sp == 2 && !getenv("FX_NO_BLOCKED")) {
      const auto any = dnnl::memory::format_tag::any;
      dnnl::convolution_forward::desc probe(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
          dnnl::memory::desc(to_dnnl(x.dims()), dt::f32, any),
          dnnl::memory::desc(to_dnnl(wd), dt::f32, any),
          dnnl::memory::desc(to_dnnl(out), dt::f32, any), strides, dil, pl, pr);
      dnnl::convolution_forward::primitive_desc ppd(probe, dnnl_engine());
      const std::string impl = ppd.impl_info_str();
      if (impl.find("gemm") == std::string::npos && ppd.dst_desc() != plain_f32_desc(out)) {
        blk_ = 1;
        for (auto [b, tag] : {std::pair{16, dnnl::memory::format_tag::nChw16c},
                              std::pair{8, dnnl::memory::format_tag::nChw8c}}) {
          if (oc % b == 0 && ppd.dst_desc() == dnnl::memory::desc(to_dnnl(out), dt::f32, tag)) {
            blk_ = b;
            blk_tag = tag;
          }
        }
      }
      if (blk_) {
        src_md = ppd.src_desc();
        src_reorder_ = src_md != plain_f32_desc(x.dims());
        if (src_reorder_) {
          src_user_ = dnnl::memory(plain_f32_desc(x.dims()), dnnl_engine(), DNNL_MEMORY_NONE);
          src_blk_ = dnnl::memory(src_md, dnnl_engine());
          src_reorder_prim_ = dnnl::reorder(src_user_, src_blk_);
        }
        dst_blk_ = dnnl::memory(ppd.dst_desc(), dnnl_engine());
        dst_user_ = dnnl::memory(plain_f32_desc(out), dnnl_engine(), DNNL_MEMORY_NONE);
        dst_reorder_prim_ = dnnl::reorder(dst_blk_, dst_user_);
        ranges.clear();
        if (blk_ == 1) {  // e.g. nhwc: channel slices are not dense; one part
          ranges.emplace_back(0, oc);
        } else {
          for (auto [b0, b1] : split_range(oc / blk_, threads, (min_oc + blk_ - 1) / blk_)) {
            ranges.emplace_back(b0 * blk_, b1 * blk_);
          }
        }
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
      auto dst_md = blk_ == 1 ? dst_blk_.get_desc()
                    : blk_    ? dnnl::memory::desc(to_dnnl(part_out), dt::f32, blk_tag)
                              : plain_f32_desc(part_out);
      auto user_w = plain_f32_desc(part_wd);
      dnnl::memory::desc w_md =
          weights_constant_
              ? dnnl::memory::desc(to_dnnl(part_wd), dt::f32, dnnl::memory::format_tag::any)
              : user_w;
      dnnl::memory::desc b_md({n_oc}, dt::f32, dnnl::memory::format_tag::a);
      auto desc = has_bias
                      ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::convolution_direct, src_md,
                                                        w_md, b_md, dst_md, strides, dil, pl, pr)
                      : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::convolution_direct, src_md,
                                                        w_md, dst_md, strides, dil, pl, pr);
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

  int64_t group_ = 1;
  std::vector<int64_t> strides_, dilations_, pads_, kernel_shape_;
  std::string auto_pad_;
  bool weights_constant_ = false, bias_constant_ = false, depthwise_ = false;
  DepthwiseShape dw_{};
  std::vector<int64_t> src_dims_, w_dims_, dst_dims_;
  bool has_bias_ = false;
  std::vector<DnnlPart> parts_;
  int blk_ = 0;  // channel block of the activations oneDNN works on; 0: plain
  bool src_reorder_ = false;
  dnnl::memory src_user_, src_blk_, dst_blk_, dst_user_;
  dnnl::reorder src_reorder_prim_, dst_reorder_prim_;
};

}  // namespace

void register_dnnl_kernels(KernelTable& t) {
  t["Conv"] = [](const Graph& g, const Node& n) { return std::make_shared<ConvKernel>(g, n); };
  register_matmul_kernels(t);
}

}  // namespace fx
