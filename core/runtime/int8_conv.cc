// SPDX-License-Identifier: Apache-2.0
#include "runtime/int8_conv.h"

#include <algorithm>
#include <cstring>

#include "runtime/dnnl_util.h"
#include "runtime/int8_exact.h"
#include "runtime/kernel_util.h"
#include "runtime/quant_math.h"
#include "util/error.h"

namespace fx {

namespace {

using dt = dnnl::memory::data_type;

int64_t at(const std::vector<int64_t>& v, std::size_t i, int64_t def) {
  return i < v.size() ? v[i] : def;
}

// Reorders an image [1, c, h, w] of `type` between NCHW and NHWC, as parts over
// rows (tensor 0 -> tensor 3).
std::vector<DnnlPart> row_reorders(const std::vector<int64_t>& d, dt type, bool to_nhwc,
                                   int threads) {
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  const int64_t es = static_cast<int64_t>(dnnl::memory::data_type_size(type));
  std::vector<DnnlPart> parts;
  // Several images: one reorder of the whole batch.
  auto ranges = n == 1 ? split_range(h, threads, std::max<int64_t>(1, 262144 / (c * w)))
                       : std::vector<std::pair<int64_t, int64_t>>{{0, h}};
  for (auto [h0, h1] : ranges) {
    const int64_t hp = h1 - h0;
    dnnl::memory::desc nchw(to_dnnl({n, c, hp, w}), type, to_dnnl({c * h * w, h * w, w, 1}));
    dnnl::memory::desc nhwc(to_dnnl({n, c, hp, w}), type, to_dnnl({c * h * w, 1, w * c, c}));
    const auto& from = to_nhwc ? nchw : nhwc;
    const auto& to = to_nhwc ? nhwc : nchw;
    dnnl::reorder::primitive_desc pd(dnnl_engine(), from, dnnl_engine(), to, part_attr());
    const int64_t off_from = to_nhwc ? h0 * w : h0 * w * c, off_to = to_nhwc ? h0 * w * c : h0 * w;
    parts.push_back(make_part(pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}},
                              {{DNNL_ARG_FROM, 0, off_from * es}, {DNNL_ARG_TO, 3, off_to * es}}));
  }
  return parts;
}

// Element-size-generic conversion of a [N, C, H, W] image between memory orders (the
// exact loop's fallback when a layout plan hands it NHWC tensors): each image is a
// rows x cols matrix of `es`-byte elements, written transposed ([C, HW] <-> [HW, C]).
void transpose_images_bytes(const void* from, void* to, const std::vector<int64_t>& d, int64_t es,
                            bool to_nhwc) {
  const int64_t c = d[1], hw = d[2] * d[3];
  const int64_t rows = to_nhwc ? c : hw, cols = to_nhwc ? hw : c;
  const auto* f = static_cast<const std::byte*>(from);
  auto* t = static_cast<std::byte*>(to);
  for (int64_t b = 0; b < d[0]; ++b, f += rows * cols * es, t += rows * cols * es)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        std::memcpy(t + (k * rows + r) * es, f + (r * cols + k) * es, static_cast<std::size_t>(es));
}

}  // namespace

void set_conv_geometry(Int8ConvSpec& s, const Attributes& attrs) {
  if (s.x_dims.size() < 3 || s.w_dims.size() != s.x_dims.size()) {
    throw Error("convolution: unsupported shapes " + dims_str(s.x_dims) + " * " +
                dims_str(s.w_dims));
  }
  const std::size_t sp = s.x_dims.size() - 2;
  s.group = attrs.get_int("group", 1);
  auto strides = attrs.get_ints("strides"), dil = attrs.get_ints("dilations");
  auto pads = attrs.get_ints("pads");
  const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  s.strides.assign(sp, 1);
  s.dilations.assign(sp, 1);
  s.pads_begin.assign(sp, 0);
  s.pads_end.assign(sp, 0);
  for (std::size_t i = 0; i < sp; ++i) {
    s.strides[i] = at(strides, i, 1);
    s.dilations[i] = at(dil, i, 1);
    if (s.strides[i] < 1 || s.dilations[i] < 1)
      throw Error("convolution: bad strides or dilations");
    const int64_t in = s.x_dims[2 + i], ek = (s.w_dims[2 + i] - 1) * s.dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t o = (in + s.strides[i] - 1) / s.strides[i];
      const int64_t total = std::max<int64_t>(0, (o - 1) * s.strides[i] + ek - in);
      s.pads_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      s.pads_end[i] = total - s.pads_begin[i];
    } else if (auto_pad != "VALID") {
      s.pads_begin[i] = at(pads, i, 0);
      s.pads_end[i] = at(pads, sp + i, 0);
    }
  }
}

std::vector<int64_t> conv_output_dims(const Int8ConvSpec& s) {
  const std::size_t sp = s.x_dims.size() - 2;
  std::vector<int64_t> out{s.x_dims[0], s.w_dims[0]};
  for (std::size_t i = 0; i < sp; ++i) {
    const int64_t ek = (s.w_dims[2 + i] - 1) * at(s.dilations, i, 1) + 1;
    const int64_t o = (s.x_dims[2 + i] + at(s.pads_begin, i, 0) + at(s.pads_end, i, 0) - ek) /
                          at(s.strides, i, 1) +
                      1;
    if (o <= 0) throw Error("convolution output would be empty for input " + dims_str(s.x_dims));
    out.push_back(o);
  }
  return out;
}

Int8Conv::Int8Conv(Int8ConvSpec spec, int threads) : s_(std::move(spec)) {
  const auto& x = s_.x_dims;
  const auto& w = s_.w_dims;
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) {
    throw Error("int8 convolution: unsupported shapes " + dims_str(x) + " * " + dims_str(w));
  }
  if (s_.group < 1 || x[1] != w[1] * s_.group || w[0] % s_.group != 0) {
    throw Error("int8 convolution: input channels of " + dims_str(x) + " do not match weights " +
                dims_str(w) + " with group " + std::to_string(s_.group));
  }
  if (static_cast<int64_t>(s_.weights.size()) != dims_numel(w)) {
    throw Error("int8 convolution: weight values do not match " + dims_str(w));
  }
  if (!is_int8_type(s_.x_type)) throw Error("int8 convolution: input must be uint8 or int8");
  if (!s_.bias.empty() && static_cast<int64_t>(s_.bias.size()) != w[0]) {
    throw Error("int8 convolution: bias of " + std::to_string(s_.bias.size()) + " values for " +
                std::to_string(w[0]) + " output channels");
  }
  if (s_.y_type != DType::Int32 && s_.scales.size() != 1 &&
      static_cast<int64_t>(s_.scales.size()) != w[0]) {
    throw Error("int8 convolution: " + std::to_string(s_.scales.size()) + " scales for " +
                std::to_string(w[0]) + " output channels");
  }
  integer_kernel_type(s_.y_type, "int8 convolution");  // validates
  y_dims_ = conv_output_dims(s_);
  const bool fits = std::all_of(s_.weights.begin(), s_.weights.end(),
                                [](int32_t v) { return v >= -128 && v <= 127; });
  if (x.size() == 4 && fits && dims_numel(y_dims_) > 0) build_onednn(threads);
}

void Int8Conv::build_onednn(int threads) {
  const auto& x = s_.x_dims;
  const int64_t n = x[0], ic = x[1], ih = x[2], iw = x[3];
  const int64_t oc = y_dims_[1], oh = y_dims_[2], ow = y_dims_[3];
  // Without VNNI: a u8 source, and the weights in 7-bit halves unless they fit already.
  const bool exact_dot = onednn_int8_dot_exact();
  const bool shift_src = !exact_dot && s_.x_type == DType::Int8;
  const bool halves = !exact_dot && !fits_7bit(s_.weights);
  const dt x_t = integer_kernel_type(s_.x_type, "int8 convolution");
  const dt src_t = shift_src ? dt::u8 : x_t;
  const int32_t x_zp = s_.x_zero_point + (shift_src ? 128 : 0);
  const dt dst_t = halves ? dt::s32 : integer_kernel_type(s_.y_type, "int8 convolution");
  const int64_t dst_es = static_cast<int64_t>(dnnl::memory::data_type_size(dst_t));
  dnnl::memory::dims strides{at(s_.strides, 0, 1), at(s_.strides, 1, 1)};
  dnnl::memory::dims dil{at(s_.dilations, 0, 1) - 1, at(s_.dilations, 1, 1) - 1};
  const int64_t pl_w = at(s_.pads_begin, 1, 0), pr_w = at(s_.pads_end, 1, 0);
  const int64_t pt = at(s_.pads_begin, 0, 0);
  const int64_t ek = (s_.w_dims[2] - 1) * (dil[0] + 1) + 1;

  std::vector<int64_t> wd = s_.w_dims;
  if (s_.group > 1) {
    wd[0] /= s_.group;
    wd.insert(wd.begin(), s_.group);
  }
  dnnl::memory::desc user_w(to_dnnl(wd), dt::s8, to_dnnl(contiguous_strides(wd)));
  dnnl::memory::desc w_any(to_dnnl(wd), dt::s8, dnnl::memory::format_tag::any);
  dnnl::memory::desc b_md({oc}, dt::f32, dnnl::memory::format_tag::a);
  // One weight set, or the two halves whose accumulators run_halves adds.
  const std::vector<std::vector<int8_t>> weight_sets = int8_weight_sets(s_.weights, halves);
  // The halves' convolutions produce bare accumulators: bias and requantization follow
  // their sum.
  const bool with_bias = !s_.bias.empty() && !halves;

  dnnl::primitive_attr attr = part_attr();
  if (!halves && s_.y_type != DType::Int32) {
    attr.set_output_scales(s_.scales.size() == 1 ? 0 : 2, s_.scales);
  }
  if (x_zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {x_zp});
  if (!halves && is_int8_type(s_.y_type)) {
    if (s_.relu) {
      dnnl::post_ops po;
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      attr.set_post_ops(po);
    }
    if (s_.y_zero_point != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {s_.y_zero_point});
  }

  // One image: parts over output rows, each reading the input rows it needs.
  const int64_t row_macs = ow * oc * dims_numel(s_.w_dims) / oc;
  auto ranges = n == 1
                    ? split_range(oh, threads, std::max<int64_t>(1, (int64_t{1} << 21) / row_macs))
                    : std::vector<std::pair<int64_t, int64_t>>{{0, oh}};
  std::vector<DnnlPart> parts;
  std::vector<dnnl::memory> shared_w(weight_sets.size());
  std::string impl;
  for (auto [o0, o1] : ranges) {
    const int64_t first = o0 * strides[0] - pt, last = (o1 - 1) * strides[0] - pt + ek;
    const int64_t lo = std::max<int64_t>(0, first), hi = std::min(ih, last);
    dnnl::memory::dims ppl{lo - first, pl_w}, ppr{last - hi, pr_w};
    // Dense strides (the N stride of the slice, not of the image: N is 1 when there are
    // several parts): oneDNN's fast kernels want dense memory, else its reference loop.
    dnnl::memory::desc src(to_dnnl({n, ic, hi - lo, iw}), src_t,
                           to_dnnl({ic * (hi - lo) * iw, 1, iw * ic, ic}));
    dnnl::memory::desc dst(to_dnnl({n, oc, o1 - o0, ow}), dst_t,
                           to_dnnl({oc * (o1 - o0) * ow, 1, ow * oc, oc}));
    auto desc =
        conv_forward_desc(src, w_any, with_bias ? &b_md : nullptr, dst, strides, dil, ppl, ppr);
    dnnl::convolution_forward::primitive_desc pd;
    try {
      pd = dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
    } catch (const dnnl::error&) {
      return;  // no oneDNN kernel for this case: the reference loop runs it
    }
    impl = pd.impl_info_str();
    if (impl.find("ref") != std::string::npos) return;  // the reference loop is exact and no slower
    std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, lo * iw * ic},
                                      {DNNL_ARG_DST, 3, o0 * ow * oc * dst_es}};
    if (with_bias) {
      descs.push_back({DNNL_ARG_BIAS, b_md});
      binds.push_back({DNNL_ARG_BIAS, 2, 0});
    }
    // Each weight set writes its own output: y, or the int32 accumulator of its half.
    append_weight_set_parts(pd, descs, binds, halves ? std::vector<int>{3, 4} : std::vector<int>{3},
                            user_w, weight_sets, shared_w, parts);
  }
  in_parts_ = row_reorders(x, x_t, true, threads);
  src_nhwc_ = dnnl::memory(dnnl::memory::desc(to_dnnl(x), src_t, dnnl::memory::format_tag::nhwc),
                           dnnl_engine());
  if (halves) {
    acc_lo_.assign(static_cast<std::size_t>(dims_numel(y_dims_)), 0);
    acc_hi_.assign(acc_lo_.size(), 0);
  } else {
    out_parts_ = row_reorders(y_dims_, dst_t, false, threads);
    dst_nhwc_ = dnnl::memory(
        dnnl::memory::desc(to_dnnl(y_dims_), dst_t, dnnl::memory::format_tag::nhwc), dnnl_engine());
  }
  parts_ = std::move(parts);
  shift_src_ = shift_src;
  halves_ = halves;
  impl_ = halves ? impl + " (7-bit weight halves)" : impl;
}

void Int8Conv::run(const void* x, void* y, int threads, bool x_nhwc, bool y_nhwc) {
  if (dims_numel(y_dims_) == 0) return;
  x_nhwc = x_nhwc && s_.x_dims.size() == 4;
  y_nhwc = y_nhwc && y_dims_.size() == 4;
  if (parts_.empty()) {
    if (!x_nhwc && !y_nhwc) return run_reference(x, y);
    // The exact loop reads and writes NCHW: convert around it.
    const auto x_es = int64_t{1}, y_es = static_cast<int64_t>(dtype_size(s_.y_type));
    std::vector<std::byte> xc, yc;
    if (x_nhwc) {
      xc.resize(static_cast<std::size_t>(dims_numel(s_.x_dims)));
      transpose_images_bytes(x, xc.data(), s_.x_dims, x_es, false);
    }
    if (y_nhwc) yc.resize(static_cast<std::size_t>(dims_numel(y_dims_) * y_es));
    run_reference(x_nhwc ? xc.data() : x, y_nhwc ? yc.data() : y);
    if (y_nhwc) transpose_images_bytes(yc.data(), y, y_dims_, y_es, true);
    return;
  }
  void* in = x_nhwc && !shift_src_ ? const_cast<void*>(x) : src_nhwc_.get_data_handle();
  if (!x_nhwc) run_parts(in_parts_, {const_cast<void*>(x), nullptr, nullptr, in}, threads);
  if (shift_src_) shift_s8_to_u8(x_nhwc ? x : in, in, dims_numel(s_.x_dims), threads);
  if (halves_) {
    run_parts(parts_, {in, nullptr, nullptr, acc_lo_.data(), acc_hi_.data()}, threads);
    return run_halves(y, threads, y_nhwc);
  }
  void* mid = y_nhwc ? y : dst_nhwc_.get_data_handle();
  void* bias = s_.bias.empty() ? nullptr : s_.bias.data();
  run_parts(parts_, {in, nullptr, bias, mid}, threads);
  if (!y_nhwc) run_parts(out_parts_, {mid, nullptr, nullptr, y}, threads);
}

void Int8Conv::run_halves(void* y, int threads, bool y_nhwc) {
  const int64_t plane = y_dims_[2] * y_dims_[3];
  store_halves(halves_epilogue(s_, y_dims_[0] * plane, y_dims_[1], y_nhwc ? 0 : plane),
               acc_lo_.data(), acc_hi_.data(), y, threads);
}

void Int8Conv::run_reference(const void* xp, void* y) const {
  // Spatial dims padded to three (depth, height, width) so that one loop serves all.
  auto sp3 = [](const std::vector<int64_t>& d, std::size_t first, int64_t def) {
    std::vector<int64_t> v(3, def);
    const std::size_t k = d.size() - first;
    for (std::size_t i = 0; i < k; ++i) v[3 - k + i] = d[first + i];
    return v;
  };
  const std::size_t sp = s_.x_dims.size() - 2;
  auto pad3 = [&](const std::vector<int64_t>& v, int64_t def) {
    std::vector<int64_t> full(sp, def);
    for (std::size_t i = 0; i < sp && i < v.size(); ++i) full[i] = v[i];
    std::vector<int64_t> o(3, def);
    for (std::size_t i = 0; i < sp; ++i) o[3 - sp + i] = full[i];
    return o;
  };
  const auto in = sp3(s_.x_dims, 2, 1), out = sp3(y_dims_, 2, 1), k = sp3(s_.w_dims, 2, 1);
  const auto st = pad3(s_.strides, 1), dl = pad3(s_.dilations, 1), pb = pad3(s_.pads_begin, 0);
  const int64_t n = s_.x_dims[0], c = s_.x_dims[1], m = s_.w_dims[0];
  const int64_t cg = c / s_.group, mg = m / s_.group;
  const int64_t in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2];
  const int64_t k_size = k[0] * k[1] * k[2];
  auto x_at = [&](int64_t i) -> int32_t {
    return s_.x_type == DType::UInt8 ? int32_t{static_cast<const uint8_t*>(xp)[i]}
                                     : int32_t{static_cast<const int8_t*>(xp)[i]};
  };
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oc = 0; oc < m; ++oc) {
      const int64_t g = oc / mg;
      const float scale = s_.scales.empty() ? 1.f : s_.scales[s_.scales.size() == 1 ? 0 : oc];
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            int64_t acc = 0;
            for (int64_t ci = 0; ci < cg; ++ci) {
              const int64_t xc = (b * c + g * cg + ci) * in_plane;
              const int32_t* wc = s_.weights.data() + (oc * cg + ci) * k_size;
              for (int64_t kd = 0; kd < k[0]; ++kd) {
                const int64_t id = od * st[0] - pb[0] + kd * dl[0];
                if (id < 0 || id >= in[0]) continue;
                for (int64_t kh = 0; kh < k[1]; ++kh) {
                  const int64_t ih = oh * st[1] - pb[1] + kh * dl[1];
                  if (ih < 0 || ih >= in[1]) continue;
                  for (int64_t kw = 0; kw < k[2]; ++kw) {
                    const int64_t iw = ow * st[2] - pb[2] + kw * dl[2];
                    if (iw < 0 || iw >= in[2]) continue;
                    acc += (x_at(xc + (id * in[1] + ih) * in[2] + iw) - s_.x_zero_point) *
                           wc[(kd * k[1] + kh) * k[2] + kw];
                  }
                }
              }
            }
            const int64_t i = (b * m + oc) * out_plane + (od * out[1] + oh) * out[2] + ow;
            const double total = double(acc) + (s_.bias.empty() ? 0.0 : double(s_.bias[oc]));
            store_accumulated(s_.y_type, y, i, total, scale, s_.relu, s_.y_zero_point);
          }
    }
  }
}

}  // namespace fx
