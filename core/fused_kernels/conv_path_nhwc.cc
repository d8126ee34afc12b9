// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/conv_path_nhwc.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <typeinfo>

#include "runtime/conv_parts.h"
#include "runtime/dnnl_util.h"
#include "runtime/thread_pool.h"
#include "util/error.h"

namespace fx {

namespace {

using dt = dnnl::memory::data_type;

// Binary operands that broadcast per output channel or are scalars (oneDNN's
// channels-last kernels take them in registers).
bool per_channel_operands(const ConvPrep& p, const OperandDims& operands) {
  for (std::size_t k = 0, b = 0; k < p.plan.post_ops.size(); ++k) {
    const auto kind = p.plan.post_ops[k].kind;
    if (kind == ConvPostOp::Kind::Sum) ++b;
    if (kind != ConvPostOp::Kind::Binary) continue;
    const auto& od = operands.at(b++);
    for (std::size_t a = 0; a < od.size(); ++a)
      if (od[a] != 1 && !(od.size() >= 3 && a == od.size() - 3)) return false;
  }
  return true;
}

// For NCHW in and out: whether oneDNN prefers channels-last for this convolution
// (its brgemm kernels; far faster than its gemm one on NCHW even with the two
// reorders). 1x1 convolutions stay plain: on NCHW they are one gemm already.
bool prefers_nhwc(const ConvPrep& p, const std::vector<int64_t>& x, const ConvGeometry& geo) {
  if (p.w_dims[2] * p.w_dims[3] == 1) return false;
  const auto any = dnnl::memory::format_tag::any;
  dnnl::convolution_forward::desc probe(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      dnnl::memory::desc(to_dnnl(x), dt::f32, any),
      dnnl::memory::desc(to_dnnl(p.w_dims), dt::f32, any),
      dnnl::memory::desc(to_dnnl(geo.out), dt::f32, any), geo.st, geo.dil, geo.pl, geo.pr);
  try {
    dnnl::convolution_forward::primitive_desc pd(probe, dnnl_engine());
    return std::string(pd.impl_info_str()).find("gemm") == std::string::npos &&
           pd.src_desc() == nhwc_md(x) && pd.dst_desc() == nhwc_md(geo.out);
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

bool grouped_nhwc_native(const ConvPrep& p, const std::vector<int64_t>& x) {
  if (p.group <= 1 || p.w_dims.size() != 4 || x.size() != 4 || p.w_dims[1] == 1 ||
      std::getenv("FX_CONV_PLAIN"))
    return false;
  try {
    const ConvGeometry geo = conv_geometry(p, x);
    dnnl::convolution_forward::desc probe(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, nhwc_md(x),
        dnnl::memory::desc(to_dnnl(dnnl_conv_weight_dims(p.w_dims, p.group)), dt::f32,
                           dnnl::memory::format_tag::any),
        nhwc_md(geo.out), geo.st, geo.dil, geo.pl, geo.pr);
    dnnl::convolution_forward::primitive_desc pd(probe, dnnl_engine());
    const std::string impl = pd.impl_info_str();
    return impl.find("ref") == std::string::npos && impl.find("gemm") == std::string::npos;
  } catch (const Error&) {
    return false;
  } catch (const dnnl::error&) {
    return false;
  }
}

void NhwcPartsPath::run(const ConvRunArgs& a) {
  const Tensor* r = a.residual;
  bool copy_in_parts = false;
  if (r) {
    if (!a.layouts.sum)
      a.residual_convert.run(r->raw(), a.out, a.threads);
    else
      copy_in_parts = r->raw() != a.out;
  }
  std::vector<void*> tensors{const_cast<void*>(a.x), nullptr, nullptr, a.out};
  for (int i = 1; i < a.ctx.num_inputs(); ++i) {
    if (i == sum_input_) continue;
    tensors.push_back(const_cast<void*>(a.ctx.in(i).raw()));
  }
  auto one = [&](int64_t i) { run_one(static_cast<std::size_t>(i), a, tensors, copy_in_parts); };
  OneOmpThread one_thread;
  if (parts_.size() == 1)
    one(0);
  else
    pool_run(static_cast<int64_t>(parts_.size()), a.threads, one);
}

void NhwcPartsPath::run_one(std::size_t u, const ConvRunArgs& a, const std::vector<void*>& tensors,
                            bool copy_residual) {
  if (copy_residual) {
    auto [off, len] = spans_[u];
    std::memcpy(static_cast<float*>(a.out) + off, a.residual->data<float>() + off,
                static_cast<std::size_t>(len) * 4);
  }
  run_part(parts_[u], tensors);
}

std::unique_ptr<ConvPath> make_nhwc_conv_path(const ConvPrep& p, const ConvLayouts& lay,
                                              const std::vector<int64_t>& x,
                                              const ConvGeometry& geo, const OperandDims& operands,
                                              int threads) {
  const bool any_cl = lay.x || lay.out || lay.sum;
  // A grouped convolution only where the layout plan keeps a tensor of it NHWC (on
  // NCHW the plain path's parts pick oneDNN's preferred layout themselves), as rows.
  const bool grouped = p.group != 1;
  if (x.size() != 4 || (grouped && !(any_cl && grouped_nhwc_native(p, x))) ||
      std::getenv("FX_CONV_PLAIN") || !per_channel_operands(p, operands) ||
      !(any_cl || prefers_nhwc(p, x, geo)))
    return nullptr;
  const int64_t n = x[0];
  const int64_t oc = geo.out[1], oh = geo.out[2], ow = geo.out[3];
  std::vector<dnnl::memory::desc> binary_mds;
  dnnl::post_ops po = nhwc_post_ops(p, operands, binary_mds);
  dnnl::primitive_attr attr = part_attr();
  attr.set_post_ops(po);
  // Few rows per part (a 7x7 map: 3 and 4 rows) make oneDNN's tiles small and
  // unbalanced, and each part reads all weights: split output channels instead, where
  // the weights are what costs: a spatial kernel (ResNet's 3x3 at 7x7) or a 1x1 over
  // 2 MiB of weights (ResNet-50's 2048 <-> 512). MobileNetV2's 1x1 at 7x7 (0.6-1.6 MiB
  // of weights) ran 15-20% faster on rows: the channel parts' copy into the output
  // and their narrower GEMMs cost more than reading the weights twice.
  const int64_t w_numel = dims_numel(p.w_dims);
  const bool weights_dominate =
      w_numel / (p.w_dims[0] * p.w_dims[1]) > 1 || w_numel * 4 > (int64_t{2} << 20);
  if (grouped) return make_nhwc_rows_path(p, x, geo, threads, attr, binary_mds);
  if (n == 1 && threads > 1 && oh < 4 * threads && oc >= 32 * threads &&
      oh * ow * oc * 4 <= (int64_t{1} << 20) && weights_dominate)
    return make_nhwc_channels_path(p, x, geo, threads, attr, binary_mds);
  if (auto columns = make_pointwise_columns_path(p, x, geo, binary_mds, threads, po))
    return columns;
  return make_nhwc_rows_path(p, x, geo, threads, attr, binary_mds);
}

std::unique_ptr<ConvPath> make_split_candidate(const ConvPrep& p, const std::vector<int64_t>& x,
                                               const ConvGeometry& geo, const OperandDims& operands,
                                               int threads, const ConvPath& chosen) {
  const auto* rows = dynamic_cast<const NhwcPartsPath*>(&chosen);
  if (!rows || typeid(chosen) != typeid(NhwcPartsPath) || rows->parts() != 1 || threads < 2 ||
      x.size() != 4 || x[0] != 1 || p.group != 1 || geo.out[2] * geo.out[3] < 2 * threads)
    return nullptr;
  std::vector<dnnl::memory::desc> binary_mds;
  dnnl::primitive_attr attr = part_attr();
  attr.set_post_ops(nhwc_post_ops(p, operands, binary_mds));
  auto split = make_nhwc_rows_path(p, x, geo, threads, attr, binary_mds, 1);
  const auto* cut = dynamic_cast<const NhwcPartsPath*>(split.get());
  return cut && cut->parts() > 1 ? std::move(split) : nullptr;
}

}  // namespace fx
