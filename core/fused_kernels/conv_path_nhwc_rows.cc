// SPDX-License-Identifier: Apache-2.0
// The channels-last path cut over output rows (conv_path_nhwc.h): a single image's
// output rows split into parts that run side by side, each reading the input rows its
// outputs need; a 1x1 convolution with stride 1 and no padding is cut into runs of
// pixels instead.

#include <spdlog/spdlog.h>

#include <algorithm>

#include "fused_kernels/conv_path_nhwc.h"
#include "runtime/conv_parts.h"
#include "runtime/dnnl_util.h"

namespace fx {

using dt = dnnl::memory::data_type;

std::unique_ptr<ConvPath> make_nhwc_rows_path(const ConvPrep& p, const std::vector<int64_t>& x,
                                              const ConvGeometry& geo, int threads,
                                              const dnnl::primitive_attr& attr,
                                              const std::vector<dnnl::memory::desc>& binary_mds,
                                              int64_t min_part_macs) {
  const int64_t n = x[0], ic = x[1], ih = x[2], iw = x[3];
  const int64_t oc = geo.out[1], oh = geo.out[2], ow = geo.out[3];
  const int64_t s = geo.st[0], ek = (p.w_dims[2] - 1) * (geo.dil[0] + 1) + 1;
  // oneDNN's weight dims: [G, O/G, I/G, kh, kw] when grouped (the same memory).
  const std::vector<int64_t> wd = dnnl_conv_weight_dims(p.w_dims, p.group);
  auto user_w = plain_f32_desc(wd);
  dnnl::memory::desc w_any(to_dnnl(wd), dt::f32, dnnl::memory::format_tag::any);
  dnnl::memory::desc b_md({oc}, dt::f32, dnnl::memory::format_tag::a);
  dnnl::memory b_mem(b_md, dnnl_engine(), const_cast<float*>(p.bias.data()));
  const int64_t row_macs = ow * dims_numel(p.w_dims);
  std::vector<std::pair<int64_t, int64_t>> ranges{{0, oh}};
  if (n == 1) ranges = split_range(oh, threads, std::max<int64_t>(1, min_part_macs / row_macs));
  std::vector<DnnlPart> parts;
  std::vector<std::pair<int64_t, int64_t>> spans;
  dnnl::memory shared_w;
  // One part: source and destination slices (byte offsets into tensors 0 and 3), the
  // padding the slice needs, and the span of the output it writes (floats).
  auto add_part = [&](const dnnl::memory::desc& src, int64_t src_off, const dnnl::memory::desc& dst,
                      int64_t dst_off, const dnnl::memory::dims& ppl, const dnnl::memory::dims& ppr,
                      std::pair<int64_t, int64_t> span) {
    auto desc = conv_forward_desc(src, w_any, &b_md, dst, geo.st, geo.dil, ppl, ppr);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, dnnl_engine());
    // oneDNN's reference loops are many times slower than the plain path's
    // convolution and separate epilogue (e.g. channels-last with swish and sum post-ops
    // on an AVX2-only CPU): refuse, so the kernel takes the plain path.
    if (is_reference_impl(pd))
      throw dnnl::error(dnnl_unimplemented, "only a reference implementation");
    std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, src_off}, {DNNL_ARG_DST, 3, dst_off}};
    for (std::size_t b = 0; b < binary_mds.size(); ++b) {
      const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(binary_post_op_index(p, b)) | DNNL_ARG_SRC_1;
      descs.push_back({arg, binary_mds[b]});
      binds.push_back({arg, static_cast<int>(4 + b), 0});
    }
    DnnlPart part = make_part(pd, descs, std::move(binds));
    if (!shared_w || shared_w.get_desc() != pd.weights_desc())
      shared_w = reorder_weights(user_w, p.weights.data(), pd.weights_desc());
    part.args[DNNL_ARG_WEIGHTS] = shared_w;
    part.args[DNNL_ARG_BIAS] = b_mem;
    parts.push_back(std::move(part));
    spans.push_back(span);
  };
  // A 1x1 convolution with stride 1 and no padding is a GEMM over pixels: a single
  // image's map is cut into runs of pixels instead of rows, so that the parts are even
  // where the rows are few (7x7: 25 and 24 pixels, not 4 and 3 rows, which left one
  // thread a third more work).
  const bool pointwise = n == 1 && p.w_dims.size() == 4 && p.w_dims[2] == 1 && p.w_dims[3] == 1 &&
                         geo.st[0] == 1 && geo.st[1] == 1 && geo.pl[0] == 0 && geo.pl[1] == 0 &&
                         geo.pr[0] == 0 && geo.pr[1] == 0;
  try {
    if (pointwise) {
      const int64_t pixels = oh * ow;
      const int64_t min_px = std::max<int64_t>(1, min_part_macs / dims_numel(p.w_dims));
      for (auto [q0, q1] : split_range(pixels, threads, min_px)) {
        const int64_t pp = q1 - q0;
        dnnl::memory::desc src(to_dnnl({1, ic, 1, pp}), dt::f32,
                               to_dnnl({ic * pp, 1, pp * ic, ic}));
        dnnl::memory::desc dst(to_dnnl({1, oc, 1, pp}), dt::f32,
                               to_dnnl({oc * pp, 1, pp * oc, oc}));
        add_part(src, q0 * ic * 4, dst, q0 * oc * 4, {0, 0}, {0, 0}, {q0 * oc, pp * oc});
      }
    }
    for (auto [o0, o1] : pointwise ? decltype(ranges){} : ranges) {
      const int64_t first = o0 * s - geo.pl[0], last = (o1 - 1) * s - geo.pl[0] + ek;
      const int64_t lo = std::max<int64_t>(0, first), hi = std::min(ih, last);
      dnnl::memory::dims ppl{lo - first, geo.pl[1]}, ppr{last - hi, geo.pr[1]};
      // The N stride of a single image's slice says dense: oneDNN's fast kernels
      // want dense memory (with n > 1 there is one part, all rows of the output; it
      // may still skip input rows that no output reads).
      const int64_t n_stride = n == 1 ? ic * (hi - lo) * iw : ic * ih * iw;
      dnnl::memory::desc src(to_dnnl({n, ic, hi - lo, iw}), dt::f32,
                             to_dnnl({n_stride, 1, iw * ic, ic}));
      dnnl::memory::desc dst(to_dnnl({n, oc, o1 - o0, ow}), dt::f32,
                             to_dnnl({oc * (o1 - o0) * ow, 1, ow * oc, oc}));
      add_part(src, lo * iw * ic * 4, dst, o0 * ow * oc * 4, ppl, ppr,
               {o0 * ow * oc, n * (o1 - o0) * ow * oc});  // several images: one part
    }
  } catch (const dnnl::error& e) {
    spdlog::debug("fused Conv '{}': no channels-last primitive ({}); plain path", p.name, e.what());
    return nullptr;
  }
  return std::make_unique<NhwcPartsPath>(std::move(parts), std::move(spans), p.sum_input);
}

}  // namespace fx
