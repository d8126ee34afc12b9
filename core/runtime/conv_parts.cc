// SPDX-License-Identifier: Apache-2.0
#include "runtime/conv_parts.h"

#include <algorithm>
#include <cstdlib>

#include "runtime/dnnl_util.h"
#include "runtime/kernel_util.h"

namespace fx {

namespace {

using dt = dnnl::memory::data_type;

// Dense channels-last strides of dims [n, c, s1, ..., sk].
dnnl::memory::dims channels_last_strides(const std::vector<int64_t>& d) {
  dnnl::memory::dims st(d.size());
  int64_t acc = d[1];
  st[1] = 1;
  for (std::size_t i = d.size(); i-- > 2;) {
    st[i] = acc;
    acc *= d[i];
  }
  st[0] = acc;
  return st;
}

dnnl::memory::desc channels_last_desc(const std::vector<int64_t>& d) {
  return dnnl::memory::desc(to_dnnl(d), dt::f32, channels_last_strides(d));
}

// Product of the spatial dims after the first.
int64_t inner_size(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (std::size_t i = 3; i < d.size(); ++i) n *= d[i];
  return n;
}

// Reorders of one image [1, c, h, rest...] between NC[D]HW and channels-last, rows
// [h0, h1) of the first spatial dim per part (tensor 0 -> tensor 3).
std::vector<DnnlPart> row_reorders(const std::vector<int64_t>& d, bool to_cl, int threads) {
  const int64_t c = d[1], h = d[2], inner = inner_size(d);
  const auto plain_strides = contiguous_strides(d);
  std::vector<DnnlPart> parts;
  for (auto [h0, h1] : split_range(h, threads, std::max<int64_t>(1, 65536 / (c * inner)))) {
    std::vector<int64_t> slice = d;
    slice[2] = h1 - h0;
    dnnl::memory::desc plain(to_dnnl(slice), dt::f32, to_dnnl(plain_strides));
    auto cl = channels_last_desc(slice);
    const auto& from = to_cl ? plain : cl;
    const auto& to = to_cl ? cl : plain;
    dnnl::reorder::primitive_desc pd(dnnl_engine(), from, dnnl_engine(), to, part_attr());
    const int64_t plain_off = h0 * inner, cl_off = h0 * inner * c;
    const int64_t off_from = to_cl ? plain_off : cl_off, off_to = to_cl ? cl_off : plain_off;
    parts.push_back(make_part(pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}},
                              {{DNNL_ARG_FROM, 0, off_from * 4}, {DNNL_ARG_TO, 3, off_to * 4}}));
  }
  return parts;
}

// The channel block of a layout oneDNN chose that blocks channels only (nChw8c,
// nCdhw16c, ...), or 0.
int64_t channel_block(const dnnl::memory::desc& md) {
  const auto& b = md.data.format_desc.blocking;
  if (md.data.format_kind != dnnl_blocked || b.inner_nblks != 1 || b.inner_idxs[0] != 1) return 0;
  return b.inner_blks[0];
}

// Dims `d` blocked by `block` channels, as channel_block found them.
dnnl::memory::desc blocked_desc(const std::vector<int64_t>& d, int64_t block) {
  using tag = dnnl::memory::format_tag;
  tag t = tag::undef;
  if (d.size() == 4) t = block == 4 ? tag::aBcd4b : block == 8 ? tag::aBcd8b : tag::aBcd16b;
  if (d.size() == 5) t = block == 4 ? tag::aBcde4b : block == 8 ? tag::aBcde8b : tag::aBcde16b;
  return dnnl::memory::desc(to_dnnl(d), dt::f32, t);
}

// Reorders of one image [1, c, ...] between NC[D]HW and `block`-blocked channels (c a
// multiple of it), whole blocks per part: channel c0 starts at c0 * plane floats in both.
std::vector<DnnlPart> block_reorders(const std::vector<int64_t>& d, int64_t block, bool to_blocked,
                                     int threads) {
  const int64_t plane = dims_numel(d) / d[1];
  std::vector<DnnlPart> parts;
  for (auto [b0, b1] :
       split_range(d[1] / block, threads, std::max<int64_t>(1, 65536 / (block * plane)))) {
    std::vector<int64_t> slice = d;
    slice[1] = (b1 - b0) * block;
    auto plain = plain_f32_desc(slice), blocked = blocked_desc(slice, block);
    const auto& from = to_blocked ? plain : blocked;
    const auto& to = to_blocked ? blocked : plain;
    dnnl::reorder::primitive_desc pd(dnnl_engine(), from, dnnl_engine(), to, part_attr());
    const int64_t off = b0 * block * plane * 4;
    parts.push_back(make_part(pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}},
                              {{DNNL_ARG_FROM, 0, off}, {DNNL_ARG_TO, 3, off}}));
  }
  return parts;
}

}  // namespace

std::vector<int64_t> dnnl_conv_weight_dims(const std::vector<int64_t>& w, int64_t group) {
  std::vector<int64_t> wd = w;
  if (group > 1) {
    wd[0] /= group;
    wd.insert(wd.begin(), group);
  }
  return wd;
}

const char* ConvParts::cut_name(Cut c) {
  switch (c) {
    case Cut::ChannelsLast: return "channels-last";
    case Cut::Blocked: return "blocked";
    case Cut::Channels: return "channels";
    case Cut::Single: break;
  }
  return "single";
}

ConvParts::ConvParts(const ConvPartsSpec& s, int threads) {
  const std::vector<int64_t> wd = dnnl_conv_weight_dims(s.w, s.group);
  int64_t taps = 1;
  for (std::size_t i = 2; i < s.w.size(); ++i) taps *= s.w[i];
  const bool one_image = s.x[0] == 1 && s.weights != nullptr;
  if (one_image && taps > 1 && s.x.size() >= 4 && !std::getenv("FX_NO_BLOCKED")) {
    // oneDNN's preferred layouts for this shape, and the kernel it would take.
    const auto any = dnnl::memory::format_tag::any;
    dnnl::convolution_forward::desc probe(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        dnnl::memory::desc(to_dnnl(s.x), dt::f32, any),
        dnnl::memory::desc(to_dnnl(wd), dt::f32, any),
        dnnl::memory::desc(to_dnnl(s.out), dt::f32, any), s.strides, s.dil, s.pl, s.pr);
    dnnl::convolution_forward::primitive_desc ppd(probe, dnnl_engine());
    const std::string impl = ppd.impl_info_str();
    if (impl.find("gemm") == std::string::npos && ppd.src_desc() == channels_last_desc(s.x) &&
        ppd.dst_desc() == channels_last_desc(s.out)) {
      build_channels_last(s, wd, threads);
      return;
    }
    const int64_t xb = channel_block(ppd.src_desc()), yb = channel_block(ppd.dst_desc());
    const int64_t g = s.group, icg = s.w[1], ocg = s.w[0] / g;
    // Blocked channels: parts over whole groups, or over output channel blocks; every
    // part's channels start on a block boundary.
    const bool fits =
        xb > 0 && yb > 0 &&
        (g > 1 ? icg % xb == 0 && ocg % yb == 0 : s.x[1] % xb == 0 && s.w[0] % yb == 0);
    if (fits && impl.find("gemm") == std::string::npos && impl.find("ref") == std::string::npos &&
        build_blocked(s, wd, xb, yb, threads))
      return;
  }
  build_channels(s, wd, one_image ? threads : 1);
}

// Output channels (whole groups when grouped) split into one part per thread when each
// part stays a worthwhile convolution; a single image's channel slice is dense.
void ConvParts::build_channels(const ConvPartsSpec& s, const std::vector<int64_t>& wd,
                               int threads) {
  const int64_t oc = s.w[0], g = s.group, ocg = oc / g, icg = s.w[1];
  const int64_t plane = dims_numel(s.out) / (s.out[0] * oc);
  const int64_t in_plane = dims_numel(s.x) / (s.x[0] * s.x[1]);
  const int64_t w_per_oc = dims_numel(s.w) / oc;
  const int64_t macs_per_unit = plane * w_per_oc * (g > 1 ? ocg : 1);  // per channel or group
  const int64_t min_units = std::max<int64_t>(g > 1 ? 1 : 16, 65536 / macs_per_unit + 1);
  auto ranges = split_range(g > 1 ? g : oc, threads, min_units);
  cut_ = ranges.size() > 1 ? Cut::Channels : Cut::Single;
  for (auto [u0, u1] : ranges) {
    // Channels [o0, o1) of the output, [i0, i0 + n_ic) of the input.
    const int64_t o0 = g > 1 ? u0 * ocg : u0, n_oc = g > 1 ? (u1 - u0) * ocg : u1 - u0;
    const int64_t i0 = g > 1 ? u0 * icg : 0, n_ic = g > 1 ? (u1 - u0) * icg : s.x[1];
    std::vector<int64_t> part_wd = wd, part_x = s.x, part_out = s.out;
    part_wd[0] = g > 1 ? u1 - u0 : n_oc;
    part_x[1] = n_ic;
    part_out[1] = n_oc;
    auto src_md = plain_f32_desc(part_x), dst_md = plain_f32_desc(part_out);
    auto user_w = plain_f32_desc(part_wd);
    const bool constant = s.weights != nullptr;
    dnnl::memory::desc w_md =
        constant ? dnnl::memory::desc(to_dnnl(part_wd), dt::f32, dnnl::memory::format_tag::any)
                 : user_w;
    dnnl::memory::desc b_md({n_oc}, dt::f32, dnnl::memory::format_tag::a);
    auto desc = conv_forward_desc(src_md, w_md, s.bias ? &b_md : nullptr, dst_md, s.strides, s.dil,
                                  s.pl, s.pr);
    dnnl::convolution_forward::primitive_desc pd(desc, part_attr(), dnnl_engine());
    std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src_md},
                                                          {DNNL_ARG_DST, dst_md}};
    std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, i0 * in_plane * 4},
                                      {DNNL_ARG_DST, 3, o0 * plane * 4}};
    if (s.bias) {
      descs.push_back({DNNL_ARG_BIAS, b_md});
      binds.push_back({DNNL_ARG_BIAS, 2, o0 * 4});
    }
    if (!constant) {
      descs.push_back({DNNL_ARG_WEIGHTS, user_w});
      binds.push_back({DNNL_ARG_WEIGHTS, 1, 0});
    }
    DnnlPart part = make_part(pd, descs, std::move(binds));
    if (constant) {
      part.args[DNNL_ARG_WEIGHTS] =
          reorder_weights(user_w, s.weights + o0 * w_per_oc, pd.weights_desc());
    }
    parts_.push_back(std::move(part));
  }
}

// The convolution on channels-last copies, split over output rows of the first spatial
// dim: each part reads the input rows its outputs need, with the padding that falls
// inside its slice.
void ConvParts::build_channels_last(const ConvPartsSpec& s, const std::vector<int64_t>& wd,
                                    int threads) {
  cut_ = Cut::ChannelsLast;
  const int64_t ic = s.x[1], ih = s.x[2], oc = s.out[1], oh = s.out[2];
  const int64_t st = s.strides[0], ek = (s.w[2] - 1) * (s.dil[0] + 1) + 1;
  src_cl_ = dnnl::memory(channels_last_desc(s.x), dnnl_engine());
  dst_cl_ = dnnl::memory(channels_last_desc(s.out), dnnl_engine());
  in_parts_ = row_reorders(s.x, true, threads);
  out_parts_ = row_reorders(s.out, false, threads);
  const int64_t in_inner = inner_size(s.x), out_inner = inner_size(s.out);
  const int64_t row_macs = std::max<int64_t>(1, out_inner * dims_numel(s.w));
  auto user_w = plain_f32_desc(wd);
  dnnl::memory::desc w_any(to_dnnl(wd), dt::f32, dnnl::memory::format_tag::any);
  dnnl::memory::desc b_md({oc}, dt::f32, dnnl::memory::format_tag::a);
  dnnl::memory shared_w;
  for (auto [o0, o1] :
       split_range(oh, threads, std::max<int64_t>(1, (int64_t{1} << 20) / row_macs))) {
    const int64_t first = o0 * st - s.pl[0], last = (o1 - 1) * st - s.pl[0] + ek;  // input rows
    const int64_t lo = std::max<int64_t>(0, first), hi = std::min(ih, last);
    dnnl::memory::dims ppl = s.pl, ppr = s.pr;
    ppl[0] = lo - first;
    ppr[0] = last - hi;
    std::vector<int64_t> src_d = s.x, dst_d = s.out;
    src_d[2] = hi - lo;
    dst_d[2] = o1 - o0;
    auto src = channels_last_desc(src_d), dst = channels_last_desc(dst_d);
    auto desc =
        conv_forward_desc(src, w_any, s.bias ? &b_md : nullptr, dst, s.strides, s.dil, ppl, ppr);
    dnnl::convolution_forward::primitive_desc pd(desc, part_attr(), dnnl_engine());
    std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, lo * in_inner * ic * 4},
                                      {DNNL_ARG_DST, 3, o0 * out_inner * oc * 4}};
    if (s.bias) {
      descs.push_back({DNNL_ARG_BIAS, b_md});
      binds.push_back({DNNL_ARG_BIAS, 2, 0});
    }
    DnnlPart part = make_part(pd, descs, std::move(binds));
    if (!shared_w || shared_w.get_desc() != pd.weights_desc()) {
      shared_w = reorder_weights(user_w, s.weights, pd.weights_desc());
    }
    part.args[DNNL_ARG_WEIGHTS] = shared_w;
    parts_.push_back(std::move(part));
  }
}

// The convolution on channel-blocked copies (oneDNN's jit kernels, grouped ones
// included), split over groups or output channel blocks; false (nothing built) where a
// part would not take a blocked jit kernel.
bool ConvParts::build_blocked(const ConvPartsSpec& s, const std::vector<int64_t>& wd, int64_t xb,
                              int64_t yb, int threads) {
  const int64_t oc = s.w[0], g = s.group, ocg = oc / g, icg = s.w[1];
  const int64_t plane = dims_numel(s.out) / oc, in_plane = dims_numel(s.x) / s.x[1];
  const int64_t w_per_oc = dims_numel(s.w) / oc;
  const int64_t unit_oc = g > 1 ? ocg : yb;  // output channels per unit of the split
  const int64_t min_units = std::max<int64_t>(1, 65536 / (plane * w_per_oc * unit_oc) + 1);
  std::vector<DnnlPart> parts;
  for (auto [u0, u1] : split_range(oc / unit_oc, threads, min_units)) {
    const int64_t o0 = u0 * unit_oc, n_oc = (u1 - u0) * unit_oc;
    const int64_t i0 = g > 1 ? u0 * icg : 0, n_ic = g > 1 ? (u1 - u0) * icg : s.x[1];
    std::vector<int64_t> part_wd = wd, part_x = s.x, part_out = s.out;
    part_wd[0] = g > 1 ? u1 - u0 : n_oc;
    part_x[1] = n_ic;
    part_out[1] = n_oc;
    auto src = blocked_desc(part_x, xb), dst = blocked_desc(part_out, yb);
    dnnl::memory::desc w_any(to_dnnl(part_wd), dt::f32, dnnl::memory::format_tag::any);
    dnnl::memory::desc b_md({n_oc}, dt::f32, dnnl::memory::format_tag::a);
    auto desc =
        conv_forward_desc(src, w_any, s.bias ? &b_md : nullptr, dst, s.strides, s.dil, s.pl, s.pr);
    dnnl::convolution_forward::primitive_desc pd(desc, part_attr(), dnnl_engine());
    const std::string impl = pd.impl_info_str();
    if (impl.find("gemm") != std::string::npos || impl.find("ref") != std::string::npos)
      return false;
    std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
    std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, i0 * in_plane * 4},
                                      {DNNL_ARG_DST, 3, o0 * plane * 4}};
    if (s.bias) {
      descs.push_back({DNNL_ARG_BIAS, b_md});
      binds.push_back({DNNL_ARG_BIAS, 2, o0 * 4});
    }
    DnnlPart part = make_part(pd, descs, std::move(binds));
    part.args[DNNL_ARG_WEIGHTS] =
        reorder_weights(plain_f32_desc(part_wd), s.weights + o0 * w_per_oc, pd.weights_desc());
    parts.push_back(std::move(part));
  }
  cut_ = Cut::Blocked;
  parts_ = std::move(parts);
  src_cl_ = dnnl::memory(blocked_desc(s.x, xb), dnnl_engine());
  dst_cl_ = dnnl::memory(blocked_desc(s.out, yb), dnnl_engine());
  in_parts_ = block_reorders(s.x, xb, true, threads);
  out_parts_ = block_reorders(s.out, yb, false, threads);
  return true;
}

void ConvParts::run(const void* x, const void* w, const void* b, void* y, int threads) {
  void* wp = const_cast<void*>(w);
  void* bp = const_cast<void*>(b);
  if (cut_ != Cut::ChannelsLast && cut_ != Cut::Blocked) {
    run_parts(parts_, {const_cast<void*>(x), wp, bp, y}, threads);
    return;
  }
  // Three stages, each split over threads: reorder in, convolve, reorder out.
  void* in = src_cl_.get_data_handle();
  void* mid = dst_cl_.get_data_handle();
  run_parts(in_parts_, {const_cast<void*>(x), nullptr, nullptr, in}, threads);
  run_parts(parts_, {in, wp, bp, mid}, threads);
  run_parts(out_parts_, {mid, nullptr, nullptr, y}, threads);
}

}  // namespace fx
