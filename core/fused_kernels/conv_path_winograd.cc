// SPDX-License-Identifier: Apache-2.0
// The Winograd path (conv_path.h): oneDNN's Winograd convolution (runtime/winograd_conv.h)
// for a 3x3 stride-1 convolution whose post-ops are eltwise and sum ones. It reads and
// writes the tensors in their own layouts: the kernel converts nothing around it.

#include <cstdlib>

#include "fused_kernels/conv_path.h"
#include "runtime/winograd_conv.h"

namespace fx {

namespace {

class WinogradConvPath final : public ConvPath {
 public:
  explicit WinogradConvPath(std::unique_ptr<WinogradConv> wino) : wino_(std::move(wino)) {}

  bool reads_nhwc() const override { return false; }
  bool converts_layouts() const override { return true; }

  void run(const ConvRunArgs& a) override {
    wino_->run(a.x, a.residual ? a.residual->raw() : nullptr, a.out, a.threads);
  }

 private:
  std::unique_ptr<WinogradConv> wino_;
};

}  // namespace

std::unique_ptr<ConvPath> make_winograd_conv_path(const ConvPrep& p, const ConvLayouts& lay,
                                                  const std::vector<int64_t>& x,
                                                  const ConvGeometry& geo,
                                                  const OperandDims& operands, int threads) {
  if (x.size() != 4 || std::getenv("FX_CONV_PLAIN") ||
      !winograd_shape(x[0], x[1], geo.out[1], p.group, geo.out[2], geo.out[3],
                      {p.w_dims[2], p.w_dims[3]}, geo.st, p.dilations))
    return nullptr;
  for (const ConvPostOp& q : p.plan.post_ops)
    if (q.kind == ConvPostOp::Kind::Binary) return nullptr;
  WinogradConvSpec ws;
  ws.name = p.name;
  ws.ic = x[1], ws.ih = x[2], ws.iw = x[3];
  ws.oc = geo.out[1], ws.oh = geo.out[2], ws.ow = geo.out[3];
  ws.pad_top = geo.pl[0], ws.pad_left = geo.pl[1];
  ws.pad_bottom = geo.pr[0], ws.pad_right = geo.pr[1];
  ws.x_nhwc = lay.x, ws.y_nhwc = lay.out, ws.residual_nhwc = lay.sum;
  ws.weights = p.weights.data();
  ws.bias = p.bias.data();
  std::vector<dnnl::memory::desc> binary_mds;
  ws.post_ops = nhwc_post_ops(p, operands, binary_mds);
  ws.has_sum = p.sum_input >= 0;
  auto wino = WinogradConv::make(ws, threads);
  if (!wino) return nullptr;
  return std::make_unique<WinogradConvPath>(std::move(wino));
}

}  // namespace fx
