// SPDX-License-Identifier: Apache-2.0
// The channels-last path as matmul column parts (conv_path_nhwc.h).
//
// A 1x1 convolution (stride 1, no padding) of a single small image (at most 64 pixels)
// with wide output (128+ channels per thread) and 512 KiB+ of weights (MobileNetV2's
// features.18: 320 -> 1280 on 7x7, 1.6 MiB): a GEMM [pixels x IC] x [IC x OC] cut over output
// channels, part k a oneDNN matmul writing its columns straight into the NHWC output (strided
// rows, no copy). Each core then streams half of the weights instead of all of them (the pixel
// split reads every weight on both cores; cold, each core pulled all 1.6 MiB through an L2 of 1
// MiB). Eltwise post-ops only. Null when oneDNN offers only its reference matmul or the shape
// does not qualify (the rows path then applies).

#include <spdlog/spdlog.h>

#include <string>

#include "fused_kernels/conv_path_nhwc.h"
#include "runtime/dnnl_util.h"

namespace fx {

using dt = dnnl::memory::data_type;

std::unique_ptr<ConvPath> make_pointwise_columns_path(
    const ConvPrep& p, const std::vector<int64_t>& x, const ConvGeometry& geo,
    const std::vector<dnnl::memory::desc>& binary_mds, int threads, const dnnl::post_ops& po) {
  const bool pointwise = x[0] == 1 && p.w_dims.size() == 4 && p.w_dims[2] == 1 &&
                         p.w_dims[3] == 1 && geo.st[0] == 1 && geo.st[1] == 1 && geo.pl[0] == 0 &&
                         geo.pl[1] == 0 && geo.pr[0] == 0 && geo.pr[1] == 0;
  if (!pointwise || threads < 2 || !binary_mds.empty() || p.sum_input >= 0) return nullptr;
  const int64_t ic = x[1], oc = geo.out[1], pixels = geo.out[2] * geo.out[3];
  // Measured on MobileNetV2's 7x7 maps (2 threads): the 160 -> 960 expansions,
  // 320 -> 1280 and 960 -> 320 (160 columns a part) gain 6-20%; narrow parts
  // (576/960 -> 160, 80 columns each) lose.
  if (pixels > 64 || ic * oc * 4 < (int64_t{512} << 10) || oc < 128 * threads) return nullptr;
  std::vector<DnnlPart> parts;
  std::vector<std::pair<int64_t, int64_t>> spans;
  try {
    for (int k = 0; k < threads; ++k) {  // boundaries at multiples of 16 channels
      const int64_t c0 = oc * k / threads / 16 * 16;
      const int64_t c1 = k + 1 == threads ? oc : oc * (k + 1) / threads / 16 * 16;
      if (c1 <= c0) continue;
      const int64_t cw = c1 - c0;
      dnnl::memory::desc a_md = plain_f32_desc({pixels, ic});
      // OIHW weights of a 1x1 are [OC, IC]: the matmul's [IC, cw] is that slice, transposed.
      dnnl::memory::desc w_user(to_dnnl({ic, cw}), dt::f32, to_dnnl({1, ic}));
      dnnl::memory::desc w_any(to_dnnl({ic, cw}), dt::f32, dnnl::memory::format_tag::any);
      dnnl::memory::desc b_md = plain_f32_desc({1, cw});
      dnnl::memory::desc y_md(to_dnnl({pixels, cw}), dt::f32, to_dnnl({oc, 1}));
      dnnl::primitive_attr attr = part_attr();
      attr.set_post_ops(po);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, w_any, b_md, y_md), attr,
                                      dnnl_engine());
      const std::string impl = pd.impl_info_str();
      if (is_reference_impl(pd)) {
        spdlog::debug("fused Conv '{}': matmul column parts only in {}", p.name, impl);
        return nullptr;
      }
      DnnlPart part = make_part(pd, {{DNNL_ARG_SRC, a_md}, {DNNL_ARG_DST, y_md}},
                                {{DNNL_ARG_SRC, 0, 0}, {DNNL_ARG_DST, 3, c0 * 4}});
      part.args[DNNL_ARG_WEIGHTS] =
          reorder_weights(w_user, p.weights.data() + c0 * ic, pd.weights_desc());
      part.args[DNNL_ARG_BIAS] =
          dnnl::memory(b_md, dnnl_engine(), const_cast<float*>(p.bias.data() + c0));
      parts.push_back(std::move(part));
      spans.push_back({c0, cw});
    }
  } catch (const dnnl::error& e) {
    spdlog::debug("fused Conv '{}': no matmul column parts ({})", p.name, e.what());
    return nullptr;
  }
  if (parts.size() < 2) return nullptr;
  return std::make_unique<NhwcPartsPath>(std::move(parts), std::move(spans), p.sum_input);
}

}  // namespace fx
