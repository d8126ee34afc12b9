// SPDX-License-Identifier: Apache-2.0
// The channels-last path cut over output channels (conv_path_nhwc.h), for a single
// image with few output rows: part k computes output channels [c0, c1) of every pixel
// into its own dense NHWC buffer (oneDNN's brgemm kernels take only dense memory, a
// channel slice of NHWC is not), which it then copies into the output; the residual of
// a sum post-op is gathered into it first.

#include <spdlog/spdlog.h>

#include <cstring>

#include "fused_kernels/conv_path_nhwc.h"
#include "runtime/dnnl_util.h"

namespace fx {

namespace {

using dt = dnnl::memory::data_type;

class NhwcChannelsPath final : public NhwcPartsPath {
 public:
  NhwcChannelsPath(std::vector<DnnlPart> parts, std::vector<std::vector<float>> bufs,
                   std::vector<std::pair<int64_t, int64_t>> ranges, const ConvGeometry& geo,
                   int sum_input)
      : NhwcPartsPath(std::move(parts), {}, sum_input),
        bufs_(std::move(bufs)),
        ranges_(std::move(ranges)),
        oc_(geo.out[1]),
        pixels_(geo.out[2] * geo.out[3]) {}

 private:
  void run_one(std::size_t u, const ConvRunArgs& a, const std::vector<void*>& tensors,
               bool) override {
    const Tensor* r = a.residual;
    // An NCHW residual was reordered into the output first.
    run_channel_part(
        u, r ? (a.layouts.sum ? r->data<float>() : static_cast<const float*>(a.out)) : nullptr,
        tensors, static_cast<float*>(a.out));
  }

  void run_channel_part(std::size_t u, const float* residual, const std::vector<void*>& tensors,
                        float* out) {
    const int64_t oc = oc_, pixels = pixels_;
    const auto [c0, c1] = ranges_[u];
    const int64_t cw = c1 - c0;
    float* buf = bufs_[u].data();
    const auto bytes = static_cast<std::size_t>(cw) * 4;
    if (residual)
      for (int64_t q = 0; q < pixels; ++q) std::memcpy(buf + q * cw, residual + q * oc + c0, bytes);
    run_part(parts_[u], tensors);
    for (int64_t q = 0; q < pixels; ++q) std::memcpy(out + q * oc + c0, buf + q * cw, bytes);
  }

  std::vector<std::vector<float>> bufs_;             // per part: its output channels
  std::vector<std::pair<int64_t, int64_t>> ranges_;  // per part: [c0, c1)
  int64_t oc_, pixels_;
};

}  // namespace

std::unique_ptr<ConvPath> make_nhwc_channels_path(
    const ConvPrep& p, const std::vector<int64_t>& x, const ConvGeometry& geo, int threads,
    const dnnl::primitive_attr& attr, const std::vector<dnnl::memory::desc>& binary_mds) {
  const int64_t oc = geo.out[1], oh = geo.out[2], ow = geo.out[3];
  const int64_t per_oc = dims_numel(p.w_dims) / oc;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int k = 0; k < threads; ++k) {  // boundaries at multiples of 16 channels
    const int64_t c0 = oc * k / threads / 16 * 16;
    const int64_t c1 = k + 1 == threads ? oc : oc * (k + 1) / threads / 16 * 16;
    if (c1 > c0) ranges.emplace_back(c0, c1);
  }
  auto src = nhwc_md(x);
  std::vector<DnnlPart> parts;
  std::vector<std::vector<float>> bufs;
  try {
    for (auto [c0, c1] : ranges) {
      const int64_t cw = c1 - c0;
      std::vector<int64_t> wd = p.w_dims;
      wd[0] = cw;
      dnnl::memory::desc w_any(to_dnnl(wd), dt::f32, dnnl::memory::format_tag::any);
      dnnl::memory::desc b_md({cw}, dt::f32, dnnl::memory::format_tag::a);
      auto dst = nhwc_md({1, cw, oh, ow});
      // Per-channel binary operands: this part's slice.
      dnnl::post_ops po;
      std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src},
                                                            {DNNL_ARG_DST, dst}};
      std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, 0}};
      for (std::size_t k = 0, b = 0; k < p.plan.post_ops.size(); ++k) {
        const ConvPostOp& q = p.plan.post_ops[k];
        if (q.kind == ConvPostOp::Kind::Eltwise)
          po.append_eltwise(1.f, conv_post_op_algorithm(q.alg), q.alpha, q.beta);
        if (q.kind == ConvPostOp::Kind::Sum) po.append_sum(1.f);
        if (q.kind != ConvPostOp::Kind::Binary) continue;
        auto od = binary_mds[b].dims();
        const bool per_channel = od[1] != 1;
        if (per_channel) od[1] = cw;
        dnnl::memory::desc md(od, dt::f32, dnnl::memory::format_tag::abcd);
        po.append_binary(conv_post_op_algorithm(q.alg), md);
        const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(binary_post_op_index(p, b)) | DNNL_ARG_SRC_1;
        descs.push_back({arg, md});
        binds.push_back({arg, static_cast<int>(4 + b), per_channel ? c0 * 4 : 0});
        ++b;
      }
      dnnl::primitive_attr part = attr;
      part.set_post_ops(po);
      auto desc = conv_forward_desc(src, w_any, &b_md, dst, geo.st, geo.dil, geo.pl, geo.pr);
      dnnl::convolution_forward::primitive_desc pd(desc, part, dnnl_engine());
      if (is_reference_impl(pd))  // the plain path is far faster than oneDNN's ref loops
        throw dnnl::error(dnnl_unimplemented, "only a reference implementation");
      DnnlPart dp = make_part(pd, descs, std::move(binds));
      dp.args[DNNL_ARG_WEIGHTS] =
          reorder_weights(plain_f32_desc(wd), p.weights.data() + c0 * per_oc, pd.weights_desc());
      dp.args[DNNL_ARG_BIAS] =
          dnnl::memory(b_md, dnnl_engine(), const_cast<float*>(p.bias.data() + c0));
      bufs.emplace_back(static_cast<std::size_t>(cw * oh * ow));
      dp.args[DNNL_ARG_DST].set_data_handle(bufs.back().data());
      parts.push_back(std::move(dp));
    }
  } catch (const dnnl::error& e) {
    spdlog::debug("fused Conv '{}': no channels-last primitive ({}); plain path", p.name, e.what());
    return nullptr;
  }
  return std::make_unique<NhwcChannelsPath>(std::move(parts), std::move(bufs), std::move(ranges),
                                            geo, p.sum_input);
}

}  // namespace fx
