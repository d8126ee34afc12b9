// SPDX-License-Identifier: Apache-2.0
// ConvTranspose through oneDNN's deconvolution primitive (1-D to 3-D, groups,
// dilations, pads, output_padding, output_shape, auto_pad). ONNX's weights
// [C_in, C_out / group, k...] are described to oneDNN by strides, not copied.

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/dnnl_parts.h"
#include "runtime/dnnl_util.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

using dt = dnnl::memory::data_type;

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const Node& n)
      : group_(n.attrs.get_int("group", 1)),
        strides_(n.attrs.get_ints("strides")),
        dilations_(n.attrs.get_ints("dilations")),
        pads_(n.attrs.get_ints("pads")),
        output_padding_(n.attrs.get_ints("output_padding")),
        output_shape_(n.attrs.get_ints("output_shape")),
        auto_pad_(n.attrs.get_string("auto_pad", "NOTSET")) {}

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    const Tensor& w = ctx.in(1);
    const Tensor* b = ctx.input(2);
    if (x.dtype() != DType::Float32 || w.dtype() != DType::Float32 || x.rank() < 3 ||
        x.rank() > 5 || w.rank() != x.rank()) {
      throw Error("ConvTranspose: needs float32 1-D to 3-D input and weights, got " + x.str() +
                  " and " + w.str());
    }
    if (x.dims() != x_dims_ || w.dims() != w_dims_ || (b != nullptr) != has_bias_) build(x, w, b);
    Tensor& y = ctx.output(0, DType::Float32, out_dims_);
    if (y.numel() == 0) return;
    run_parts(parts_,
              {const_cast<void*>(x.raw()), const_cast<void*>(w.raw()),
               b ? const_cast<void*>(b->raw()) : nullptr, y.raw()},
              1);
  }

 private:
  void build(const Tensor& x, const Tensor& w, const Tensor* b) {
    x_dims_ = x.dims();
    w_dims_ = w.dims();
    has_bias_ = b != nullptr;
    parts_.clear();
    const std::size_t sp = x.rank() - 2;
    const int64_t ic = x.dims()[1], g = group_;
    if (g <= 0 || ic % g != 0 || w.dims()[0] != ic) {
      throw Error("ConvTranspose: input " + x.str() + " does not match weights " + w.str() +
                  " with group " + std::to_string(g));
    }
    const int64_t ocg = w.dims()[1], oc = ocg * g, icg = ic / g;
    auto at = [](const std::vector<int64_t>& v, std::size_t i, int64_t def) {
      return i < v.size() ? v[i] : def;
    };
    dnnl::memory::dims strides(sp), dil(sp), pl(sp), pr(sp);
    out_dims_ = {x.dims()[0], oc};
    int64_t ksize = 1;
    for (std::size_t i = 0; i < sp; ++i) {
      const int64_t in = x.dims()[2 + i], k = w.dims()[2 + i], s = at(strides_, i, 1),
                    d = at(dilations_, i, 1), op = at(output_padding_, i, 0);
      const int64_t ek = (k - 1) * d + 1;
      ksize *= k;
      int64_t p0 = at(pads_, i, 0), p1 = at(pads_, sp + i, 0), o;
      // Output dims of output_shape may come with or without the N, C dims.
      const std::size_t os_off = output_shape_.size() == sp + 2 ? 2 : 0;
      if (!output_shape_.empty() || auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        o = output_shape_.empty() ? in * s : output_shape_.at(os_off + i);
        const int64_t total = s * (in - 1) + op + ek - o;
        if (total < 0) {  // a larger output than the input covers: zeros at the end
          p0 = 0;
          p1 = total;
        } else if (auto_pad_ == "SAME_UPPER") {
          p0 = total / 2;
          p1 = total - total / 2;
        } else {
          p0 = total - total / 2;
          p1 = total / 2;
        }
      } else {
        if (auto_pad_ == "VALID") p0 = p1 = 0;
        o = s * (in - 1) + op + ek - p0 - p1;
      }
      if (o <= 0) throw Error("ConvTranspose: output would be empty for " + x.str());
      out_dims_.push_back(o);
      strides[i] = s;
      dil[i] = d - 1;
      pl[i] = p0;
      pr[i] = p1;
    }
    if (dims_numel(out_dims_) == 0) return;
    // oneDNN's weights are [G, OC/G, IC/G, k...]; ONNX stores [G, IC/G, OC/G, k...].
    std::vector<int64_t> wd{g, ocg, icg}, ws{icg * ocg * ksize, ksize, ocg * ksize};
    for (std::size_t i = 0; i < sp; ++i) wd.push_back(w.dims()[2 + i]);
    auto kstr = contiguous_strides(std::vector<int64_t>(w.dims().begin() + 2, w.dims().end()));
    ws.insert(ws.end(), kstr.begin(), kstr.end());
    if (g == 1) {
      wd.erase(wd.begin());
      ws.erase(ws.begin());
    }
    dnnl::memory::desc w_md(to_dnnl(wd), dt::f32, to_dnnl(ws));
    auto src = plain_f32_desc(x.dims()), dst = plain_f32_desc(out_dims_);
    dnnl::memory::desc b_md({oc}, dt::f32, dnnl::memory::format_tag::a);
    auto desc = has_bias_
                    ? dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::deconvolution_direct, src,
                                                        w_md, b_md, dst, strides, dil, pl, pr)
                    : dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::deconvolution_direct, src,
                                                        w_md, dst, strides, dil, pl, pr);
    dnnl::deconvolution_forward::primitive_desc pd(desc, part_attr(), dnnl_engine());
    std::vector<std::pair<int, dnnl::memory::desc>> descs{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w_md}, {DNNL_ARG_DST, dst}};
    std::vector<DnnlPart::Bind> binds{
        {DNNL_ARG_SRC, 0, 0}, {DNNL_ARG_WEIGHTS, 1, 0}, {DNNL_ARG_DST, 3, 0}};
    if (has_bias_) {
      descs.push_back({DNNL_ARG_BIAS, b_md});
      binds.push_back({DNNL_ARG_BIAS, 2, 0});
    }
    parts_.push_back(make_part(pd, descs, std::move(binds)));
  }

  int64_t group_;
  std::vector<int64_t> strides_, dilations_, pads_, output_padding_, output_shape_;
  std::string auto_pad_;
  std::vector<int64_t> x_dims_, w_dims_, out_dims_;
  bool has_bias_ = false;
  std::vector<DnnlPart> parts_;
};

}  // namespace

void register_deconv_kernels(KernelTable& t) {
  t["ConvTranspose"] = [](const Graph&, const Node& n) {
    return std::make_shared<ConvTransposeKernel>(n);
  };
}

}  // namespace fx
