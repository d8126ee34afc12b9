// SPDX-License-Identifier: Apache-2.0
#include "runtime/winograd_conv.h"

#include <spdlog/spdlog.h>

#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "runtime/dnnl_util.h"
#include "runtime/thread_pool.h"

namespace fx {

namespace {

using dt = dnnl::memory::data_type;

dnnl::memory::desc blocked(int64_t c, int64_t h, int64_t w) {
  return dnnl::memory::desc(to_dnnl({1, c, h, w}), dt::f32, dnnl::memory::format_tag::nChw16c);
}

// Rows [r0, r0 + rows) of a [1, c, h, w] image, all channels.
dnnl::memory::desc row_slice(int64_t c, int64_t h, int64_t w, int64_t rows, bool nhwc) {
  if (nhwc)
    return dnnl::memory::desc(to_dnnl({1, c, rows, w}), dt::f32,
                              to_dnnl({c * rows * w, 1, w * c, c}));
  return dnnl::memory::desc(to_dnnl({1, c, rows, w}), dt::f32, to_dnnl({c * h * w, h * w, w, 1}));
}

// Channels [c0, c0 + cw) of a [1, c, h, w] image, all pixels.
dnnl::memory::desc channel_slice(int64_t c, int64_t h, int64_t w, int64_t cw, bool nhwc) {
  if (nhwc)
    return dnnl::memory::desc(to_dnnl({1, cw, h, w}), dt::f32, to_dnnl({c * h * w, 1, w * c, c}));
  return dnnl::memory::desc(to_dnnl({1, cw, h, w}), dt::f32, to_dnnl({c * h * w, h * w, w, 1}));
}

// Reorder steps of a part: from run tensor `tensor` (at a byte offset) into a part's
// buffer, and from a buffer into a run tensor.
DnnlPart reorder_in(const dnnl::memory::desc& user, int tensor, int64_t byte_offset,
                    const dnnl::memory& to) {
  dnnl::reorder::primitive_desc pd(dnnl_engine(), user, dnnl_engine(), to.get_desc(), part_attr());
  DnnlPart p = make_part(pd, {{DNNL_ARG_FROM, user}}, {{DNNL_ARG_FROM, tensor, byte_offset}});
  p.args[DNNL_ARG_TO] = to;
  return p;
}

DnnlPart reorder_out(const dnnl::memory& from, const dnnl::memory::desc& user, int tensor,
                     int64_t byte_offset) {
  dnnl::reorder::primitive_desc pd(dnnl_engine(), from.get_desc(), dnnl_engine(), user,
                                   part_attr());
  DnnlPart p = make_part(pd, {{DNNL_ARG_TO, user}}, {{DNNL_ARG_TO, tensor, byte_offset}});
  p.args[DNNL_ARG_FROM] = from;
  return p;
}

dnnl::convolution_forward::desc winograd_desc(
    const dnnl::memory::desc& src, const dnnl::memory::desc& w, const dnnl::memory::desc* bias,
    const dnnl::memory::desc& dst, const dnnl::memory::dims& pl, const dnnl::memory::dims& pr) {
  constexpr auto prop = dnnl::prop_kind::forward_inference;
  constexpr auto alg = dnnl::algorithm::convolution_winograd;
  if (bias) return {prop, alg, src, w, *bias, dst, {1, 1}, {0, 0}, pl, pr};
  return {prop, alg, src, w, dst, {1, 1}, {0, 0}, pl, pr};
}

}  // namespace

bool winograd_enabled() {
  const char* v = std::getenv("FX_WINOGRAD");
  return !v || std::strcmp(v, "0") != 0;
}

int64_t winograd_weight_budget() {
  const char* v = std::getenv("FX_WINOGRAD");
  if (v && std::strcmp(v, "all") == 0) return INT64_MAX;
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? l2 : int64_t{1} << 20;
}

bool winograd_shape(int64_t n, int64_t ic, int64_t oc, int64_t group, int64_t oh, int64_t ow,
                    const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& dilations) {
  auto all = [](const std::vector<int64_t>& v, int64_t x) {
    for (int64_t e : v)
      if (e != x) return false;
    return true;
  };
  return n == 1 && group == 1 && kernel.size() == 2 && kernel[0] == 3 && kernel[1] == 3 &&
         all(strides, 1) && all(dilations, 1) && ic >= 64 && oc >= 64 && ic % 16 == 0 &&
         oc % 16 == 0 && oh >= 7 && ow >= 7;
}

std::unique_ptr<WinogradConv> WinogradConv::make(const WinogradConvSpec& s, int threads) {
  return make_parts(s, threads, false);
}

bool winograd_runs(const WinogradConvSpec& s, int threads) {
  return WinogradConv::make_parts(s, threads, true) != nullptr;
}

std::unique_ptr<WinogradConv> WinogradConv::make_parts(const WinogradConvSpec& s, int threads,
                                                       bool probe) {
  if (!winograd_enabled()) return nullptr;
  auto conv = std::unique_ptr<WinogradConv>(new WinogradConv());
  dnnl::primitive_attr attr = part_attr();
  attr.set_post_ops(s.post_ops);
  // Rows where each part keeps many (56x56, 28x28: 2.0-2.1x the direct convolution in
  // one thread, reorders included); channels where the map is small and the weights
  // dominate (14x14: 1.2-1.8x, 7x7: 1.1x; split over rows the parts each read the whole
  // Winograd-domain weights, 1.8x-4x the direct ones, and lost).
  const bool by_rows = threads <= 1 || s.oh >= 28 || s.oc < 32 * threads;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  if (by_rows) {
    ranges = split_range(s.oh, threads, std::max<int64_t>(1, 8));
  } else {
    for (int k = 0; k < threads; ++k) {  // boundaries at multiples of 16 channels
      const int64_t c0 = s.oc * k / threads / 16 * 16;
      const int64_t c1 = k + 1 == threads ? s.oc : s.oc * (k + 1) / threads / 16 * 16;
      if (c1 > c0) ranges.emplace_back(c0, c1);
    }
  }
  dnnl::memory shared_w;
  std::string impl;
  try {
    for (auto [a, b] : ranges) {
      Part part;
      // This part's input rows [lo, hi), output rows [o0, o1), channels [c0, c1).
      int64_t o0 = 0, o1 = s.oh, c0 = 0, c1 = s.oc, lo = 0, hi = s.ih;
      dnnl::memory::dims ppl{s.pad_top, s.pad_left}, ppr{s.pad_bottom, s.pad_right};
      dnnl::memory::desc x_md, y_md, r_md;
      int64_t x_off = 0, y_off = 0;
      if (by_rows) {
        o0 = a, o1 = b;
        const int64_t first = o0 - s.pad_top, last = o1 - 1 - s.pad_top + 3;
        lo = std::max<int64_t>(0, first), hi = std::min(s.ih, last);
        ppl[0] = lo - first, ppr[0] = last - hi;
        x_md = row_slice(s.ic, s.ih, s.iw, hi - lo, s.x_nhwc);
        x_off = (s.x_nhwc ? lo * s.iw * s.ic : lo * s.iw) * 4;
        y_md = row_slice(s.oc, s.oh, s.ow, o1 - o0, s.y_nhwc);
        r_md = row_slice(s.oc, s.oh, s.ow, o1 - o0, s.residual_nhwc);
        y_off = (s.y_nhwc ? o0 * s.ow * s.oc : o0 * s.ow) * 4;
      } else {
        c0 = a, c1 = b;
        x_md = row_slice(s.ic, s.ih, s.iw, s.ih, s.x_nhwc);
        y_md = channel_slice(s.oc, s.oh, s.ow, c1 - c0, s.y_nhwc);
        r_md = channel_slice(s.oc, s.oh, s.ow, c1 - c0, s.residual_nhwc);
        y_off = (s.y_nhwc ? c0 : c0 * s.oh * s.ow) * 4;
      }
      const int64_t cw = c1 - c0;
      const int64_t r_off = by_rows ? (s.residual_nhwc ? o0 * s.ow * s.oc : o0 * s.ow) * 4
                                    : (s.residual_nhwc ? c0 : c0 * s.oh * s.ow) * 4;
      part.src = dnnl::memory(blocked(s.ic, hi - lo, s.iw), dnnl_engine());
      part.dst = dnnl::memory(blocked(cw, o1 - o0, s.ow), dnnl_engine());
      dnnl::memory::desc w_any(to_dnnl({cw, s.ic, 3, 3}), dt::f32, dnnl::memory::format_tag::any);
      dnnl::memory::desc b_md({cw}, dt::f32, dnnl::memory::format_tag::a);
      auto wdesc = winograd_desc(part.src.get_desc(), w_any, s.bias ? &b_md : nullptr,
                                 part.dst.get_desc(), ppl, ppr);
      dnnl::convolution_forward::primitive_desc pd(wdesc, attr, dnnl_engine());
      impl = pd.impl_info_str();
      if (impl.find("wino") == std::string::npos) return nullptr;
      if (static_cast<int64_t>(pd.weights_desc().get_size()) > winograd_weight_budget()) {
        spdlog::debug("Conv '{}': Winograd weights of {} KiB per part exceed the budget; direct",
                      s.name, pd.weights_desc().get_size() >> 10);
        return nullptr;
      }
      if (probe) {  // the choice only: no weights, no steps
        conv->parts_.push_back(std::move(part));
        continue;
      }
      part.steps.push_back(reorder_in(x_md, 0, x_off, part.src));
      if (s.has_sum) part.steps.push_back(reorder_in(r_md, 1, r_off, part.dst));
      DnnlPart c = make_part(pd, {}, {});
      dnnl::memory w;
      if (by_rows && shared_w && shared_w.get_desc() == pd.weights_desc()) {
        w = shared_w;
      } else {
        w = reorder_weights(plain_f32_desc({cw, s.ic, 3, 3}), s.weights + c0 * s.ic * 9,
                            pd.weights_desc());
        if (by_rows) shared_w = w;
      }
      c.args[DNNL_ARG_SRC] = part.src;
      c.args[DNNL_ARG_WEIGHTS] = w;
      c.args[DNNL_ARG_DST] = part.dst;
      if (s.bias)
        c.args[DNNL_ARG_BIAS] = dnnl::memory(b_md, dnnl_engine(), const_cast<float*>(s.bias + c0));
      part.steps.push_back(std::move(c));
      part.steps.push_back(reorder_out(part.dst, y_md, 2, y_off));
      conv->parts_.push_back(std::move(part));
    }
  } catch (const dnnl::error& e) {
    spdlog::debug("Conv '{}': no Winograd convolution ({}); direct", s.name, e.what());
    return nullptr;
  }
  conv->description_ = impl + ", " + std::to_string(conv->parts_.size()) +
                       (by_rows ? " row parts" : " channel parts");
  spdlog::debug("Conv '{}': Winograd ({})", s.name, conv->description_);
  return conv;
}

void WinogradConv::run(const void* x, const void* residual, void* y, int threads) {
  std::vector<void*> tensors{const_cast<void*>(x), const_cast<void*>(residual), y};
  OneOmpThread one;
  auto run_one = [&](int64_t i) {
    for (DnnlPart& step : parts_[static_cast<std::size_t>(i)].steps) run_part(step, tensors);
  };
  if (parts_.size() == 1)
    run_one(0);
  else
    pool_run(static_cast<int64_t>(parts_.size()), threads, run_one);
}

}  // namespace fx
