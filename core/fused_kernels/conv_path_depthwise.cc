// SPDX-License-Identifier: Apache-2.0
// The depthwise path (conv_path.h): a depthwise Conv with our own epilogue (no Binary
// post-op) runs our direct loops. NHWC (depthwise_nhwc.h, the epilogue on each row
// while in cache) when a tensor of it is NHWC, else the runtime's NCHW loop and our
// epilogue pass.

#include <optional>

#include "fused_kernels/conv_layout_costs.h"
#include "fused_kernels/conv_path.h"
#include "fused_kernels/depthwise_nhwc.h"
#include "runtime/depthwise_conv.h"

namespace fx {

namespace {

class DepthwiseConvPath final : public ConvPath {
 public:
  DepthwiseConvPath(const ConvPrep& p, const DepthwiseShape& s, bool nhwc, bool out_nhwc,
                    std::vector<int64_t> dst_dims)
      : p_(p), shape_(s), nhwc_(nhwc), out_nhwc_(out_nhwc), dst_dims_(std::move(dst_dims)) {
    if (nhwc_) dw_nhwc_.emplace(s, p.weights, p.bias);
  }

  bool reads_nhwc() const override { return nhwc_; }
  bool writes_nhwc() const override { return out_nhwc_; }
  bool can_run_in_place() const override {
    return nhwc_ && out_nhwc_ && dw_nhwc_->can_run_in_place();
  }

  void run(const ConvRunArgs& a) override {
    float* out = static_cast<float*>(a.out);
    if (a.in_place) {
      dw_nhwc_->run_in_place(out, &*p_.epilogue);
      return;
    }
    const Tensor* r = a.residual;
    const void* rin = r ? r->raw() : nullptr;
    if (r && a.layouts.sum != nhwc_) rin = a.residual_convert.into_buffer(*r, a.threads);
    const float* xf = static_cast<const float*>(a.x);
    std::vector<const float*> res;
    if (rin) res.push_back(static_cast<const float*>(rin));
    if (nhwc_) {
      dw_nhwc_->run(xf, out, &*p_.epilogue, res, !out_nhwc_);
      return;
    }
    // The runtime's direct NCHW loop on the folded weights, then our epilogue pass.
    depthwise_conv2d(shape_, xf, p_.weights.data(), p_.bias.data(), out);
    apply_conv_epilogue(p_, dst_dims_, out, nullptr, res);
  }

 private:
  const ConvPrep& p_;
  DepthwiseShape shape_;
  bool nhwc_, out_nhwc_;
  std::vector<int64_t> dst_dims_;
  std::optional<DepthwiseNhwc> dw_nhwc_;
};

}  // namespace

DepthwiseShape depthwise_shape(const ConvPrep& p, const std::vector<int64_t>& x,
                               const ConvGeometry& geo) {
  return DepthwiseShape{x[0],           x[1],           x[2],        x[3],      geo.out[2],
                        geo.out[3],     p.w_dims[2],    p.w_dims[3], geo.st[0], geo.st[1],
                        geo.dil[0] + 1, geo.dil[1] + 1, geo.pl[0],   geo.pl[1]};
}

std::unique_ptr<ConvPath> make_depthwise_conv_path(const ConvPrep& p, const ConvLayouts& lay,
                                                   const std::vector<int64_t>& x,
                                                   const ConvGeometry& geo) {
  if (!runs_depthwise_path(p, x)) return nullptr;
  const bool nhwc = lay.x || lay.out || lay.sum;
  const DepthwiseShape s = depthwise_shape(p, x, geo);
  // The NHWC loop writes an NCHW output itself (each row transposed while in cache)
  // unless a residual is added on its rows: cheaper than reordering the whole output
  // after it (EfficientNet-B0's 144 x 56 x 56 depthwise + SiLU: the reorder alone took
  // 170-200 us, more than the convolution).
  const bool out_nhwc = nhwc && (lay.out || p.sum_input >= 0);
  return std::make_unique<DepthwiseConvPath>(p, s, nhwc, out_nhwc, geo.out);
}

}  // namespace fx
