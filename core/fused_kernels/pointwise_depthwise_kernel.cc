// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/pointwise_depthwise_kernel.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "fused_kernels/conv_epilogue.h"
#include "fused_kernels/depthwise_nhwc.h"
#include "ir/graph_queries.h"
#include "runtime/dnnl_parts.h"
#include "runtime/dnnl_util.h"
#include "runtime/parallel.h"
#include "util/error.h"

namespace fx {
namespace {

using dt = dnnl::memory::data_type;

// Bytes of expanded rows a chunk aims at: well inside a core's L2 (1-2 MiB on the
// bench machines) with the depthwise output rows and the weights beside them.
constexpr int64_t kChunkBytes = 384 * 1024;
// A band whose expanded rows take at most this many bytes is expanded whole.
constexpr int64_t kWholeBandBytes = 768 * 1024;

std::vector<float> floats_of(const Graph& g, ValueId v, int64_t fill_n) {
  if (v == kNoValue) return std::vector<float>(static_cast<std::size_t>(fill_n), 0.f);
  auto d = constant_data(g, v);
  if (!d || d->dtype() != DType::Float32) throw Error("pointwise_depthwise: weights not constant");
  return d->to_floats();
}

// One chunk of a band: output rows [o0, o1) of the depthwise, which read expanded rows
// [e0, e1). The buffer then holds rows [e0, e1): the first `keep` of them are the
// previous chunk's last rows (moved from buffer row `keep_from`), the rest come from
// the pointwise part (none when every row is kept).
struct Chunk {
  int64_t o0, o1, e0, e1, keep_from, keep;
  bool has_part;
  DnnlPart part;
};

struct Band {
  std::vector<Chunk> chunks;
  std::vector<float> buf;
};

class PointwiseDepthwiseKernel final : public Kernel {
 public:
  PointwiseDepthwiseKernel(std::shared_ptr<const PointwiseDepthwisePrep> p, bool xn, bool on)
      : p_(std::move(p)), x_nhwc_(xn), out_nhwc_(on) {}

  const PointwiseDepthwisePrep& prep() const { return *p_; }
  std::shared_ptr<const PointwiseDepthwisePrep> shared() const { return p_; }
  bool x_nhwc() const { return x_nhwc_; }
  bool out_nhwc() const { return out_nhwc_; }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::Float32 || x.rank() != 4 || x.dims()[1] != p_->ci)
      throw Error("pointwise_depthwise step " + ctx.step_name() + ": unsupported input " + x.str());
    const int threads = std::max(1, ctx.threads());
    if (x.dims() != x_dims_ || threads != threads_) build(x.dims(), threads);
    Tensor& y = ctx.output(0, DType::Float32, out_dims_);
    if (y.numel() == 0) return;
    const int64_t n = x_dims_[0], h = x_dims_[2], w = x_dims_[3];
    const int64_t oh = out_dims_[2], ow = out_dims_[3], ce = p_->ce, ci = p_->ci;
    const float* xin = x.data<float>();
    if (!x_nhwc_) {
      xbuf_.resize(static_cast<std::size_t>(x.numel()));
      transpose(xin, xbuf_.data(), n, ci, h * w);
      xin = xbuf_.data();
    }
    float* out = y.data<float>();
    if (!out_nhwc_) {
      ybuf_.resize(static_cast<std::size_t>(y.numel()));
      out = ybuf_.data();
    }
    // oneDNN on one OpenMP thread: the bands are the parallelism (runtime/dnnl_parts.h).
    OneOmpThread one;
    for (int64_t i = 0; i < n; ++i) {
      const float* xi = xin + i * h * w * ci;
      float* yi = out + i * oh * ow * ce;
      auto band = [&](int64_t b) { run_band(bands_[static_cast<std::size_t>(b)], xi, yi); };
      if (bands_.size() == 1)
        band(0);
      else
        pool_run(static_cast<int64_t>(bands_.size()), threads, band);
    }
    if (!out_nhwc_) transpose_back(out, y.data<float>(), n, ce, oh * ow);
  }

 private:
  void run_band(Band& b, const float* x, float* y) const {
    const int64_t row = x_dims_[3] * p_->ce;
    float* buf = b.buf.data();
    for (Chunk& c : b.chunks) {
      if (c.keep > 0 && c.keep_from > 0)
        std::memmove(buf, buf + c.keep_from * row, static_cast<std::size_t>(c.keep * row) * 4);
      if (c.has_part) run_part(c.part, {const_cast<float*>(x), nullptr, nullptr, buf});
      dw_->run_rows(buf, c.e0, y, dw_ep_ ? &*dw_ep_ : nullptr, c.o0, c.o1);
    }
  }

  void build(const std::vector<int64_t>& xd, int threads) {
    const PointwiseDepthwisePrep& p = *p_;
    const int64_t h = xd[2], w = xd[3], ce = p.ce, ci = p.ci;
    const int64_t kh = p.dw_kernel[0], kw = p.dw_kernel[1];
    const int64_t sh = p.dw_strides[0], sw = p.dw_strides[1];
    const int64_t pt = p.dw_pads[0], pl = p.dw_pads[1], pb = p.dw_pads[2], pr = p.dw_pads[3];
    const int64_t oh = (h + pt + pb - kh) / sh + 1, ow = (w + pl + pr - kw) / sw + 1;
    if (oh <= 0 || ow <= 0) throw Error("pointwise_depthwise '" + p.name + "': empty output");
    DepthwiseShape s{1, ce, h, w, oh, ow, kh, kw, sh, sw, 1, 1, pt, pl};
    dw_ = std::make_unique<DepthwiseNhwc>(s, p.dw_w, p.dw_b);
    dw_ep_.reset();
    if (p.match.dw_act != kNoNode)
      dw_ep_.emplace(std::vector<EpilogueOp>{{EpilogueOp::Clip, p.match.dw_lo, p.match.dw_hi}});
    // Output rows per chunk: as many as keep the expanded rows they read near the
    // chunk size; a band whose expanded rows all fit is one chunk (each chunk is a
    // oneDNN call, a few microseconds, and a small one runs its GEMM less efficiently).
    const int64_t row_bytes = w * ce * 4;
    const int64_t band_rows = (oh + threads - 1) / threads;
    int64_t per_chunk = band_rows;
    if (p.chunk_bytes > 0 || ((band_rows - 1) * sh + kh) * row_bytes > kWholeBandBytes) {
      const int64_t chunk = p.chunk_bytes > 0 ? p.chunk_bytes : kChunkBytes;
      const int64_t in_rows = std::max(kh, chunk / std::max<int64_t>(row_bytes, 1));
      per_chunk = std::max<int64_t>(1, (in_rows - kh) / sh + 1);
    }
    const int64_t buf_rows = (per_chunk - 1) * sh + kh;

    dnnl::primitive_attr attr = part_attr();
    if (p.match.pw_act != kNoNode) {
      dnnl::post_ops po;
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, p.match.pw_lo, p.match.pw_hi);
      attr.set_post_ops(po);
    }
    dnnl::memory::desc w_any(to_dnnl({ce, ci, 1, 1}), dt::f32, dnnl::memory::format_tag::any);
    dnnl::memory::desc b_md({ce}, dt::f32, dnnl::memory::format_tag::a);
    dnnl::memory b_mem(b_md, dnnl_engine(), const_cast<float*>(p.pw_b.data()));
    dnnl::memory shared_w;
    auto part_for = [&](int64_t rows, int64_t c0, int64_t at) {
      dnnl::memory::desc src(to_dnnl({1, ci, rows, w}), dt::f32,
                             to_dnnl({ci * rows * w, 1, w * ci, ci}));
      dnnl::memory::desc dst(to_dnnl({1, ce, rows, w}), dt::f32,
                             to_dnnl({ce * rows * w, 1, w * ce, ce}));
      auto desc = conv_forward_desc(src, w_any, &b_md, dst, {1, 1}, {0, 0}, {0, 0}, {0, 0});
      dnnl::convolution_forward::primitive_desc pd(desc, attr, dnnl_engine());
      DnnlPart part =
          make_part(pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}},
                    {{DNNL_ARG_SRC, 0, c0 * w * ci * 4}, {DNNL_ARG_DST, 3, at * w * ce * 4}});
      if (!shared_w || shared_w.get_desc() != pd.weights_desc())
        shared_w =
            reorder_weights(plain_f32_desc({ce, ci, 1, 1}), p.pw_w.data(), pd.weights_desc());
      part.args[DNNL_ARG_WEIGHTS] = shared_w;
      part.args[DNNL_ARG_BIAS] = b_mem;
      return part;
    };
    bands_.clear();
    for (auto [b0, b1] : split_range(oh, threads, 1)) {
      Band band;
      band.buf.resize(static_cast<std::size_t>(buf_rows * w * ce));
      int64_t prev0 = 0, prev1 = 0;  // rows in the buffer after the previous chunk
      for (int64_t o0 = b0; o0 < b1; o0 += per_chunk) {
        const int64_t o1 = std::min(o0 + per_chunk, b1);
        const int64_t e0 = std::clamp<int64_t>(o0 * sh - pt, 0, h);
        const int64_t e1 = std::clamp<int64_t>((o1 - 1) * sh - pt + kh, e0, h);
        Chunk c{o0, o1, e0, e1, 0, 0, false, {}};
        int64_t c0 = e0;
        if (prev1 > e0 && e0 >= prev0 && prev1 > prev0) {
          c.keep_from = e0 - prev0;
          c.keep = std::min(prev1, e1) - e0;
          c0 = e0 + c.keep;
        }
        if (e1 > c0) {
          c.has_part = true;
          c.part = part_for(e1 - c0, c0, c0 - e0);
        }
        band.chunks.push_back(std::move(c));
        prev0 = e0;
        prev1 = e1;
      }
      bands_.push_back(std::move(band));
    }
    spdlog::debug(
        "pointwise_depthwise '{}': {}x{} -> {} channels, {} band(s) of {} chunk(s), x {} out {}",
        p.name, h, w, ce, bands_.size(), bands_.empty() ? 0 : bands_[0].chunks.size(),
        x_nhwc_ ? "NHWC" : "NCHW", out_nhwc_ ? "NHWC" : "NCHW");
    x_dims_ = xd;
    threads_ = threads;
    out_dims_ = {xd[0], ce, oh, ow};
  }

  // [n][c][hw] -> [n][hw][c] and back.
  static void transpose(const float* in, float* out, int64_t n, int64_t c, int64_t hw) {
    parallel_for(n * hw, c, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t i = q / hw, pix = q % hw;
        for (int64_t k = 0; k < c; ++k) out[q * c + k] = in[(i * c + k) * hw + pix];
      }
    });
  }
  static void transpose_back(const float* in, float* out, int64_t n, int64_t c, int64_t hw) {
    parallel_for(n * c, hw, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t i = r / c, k = r % c;
        for (int64_t pix = 0; pix < hw; ++pix) out[r * hw + pix] = in[(i * hw + pix) * c + k];
      }
    });
  }

  std::shared_ptr<const PointwiseDepthwisePrep> p_;
  bool x_nhwc_, out_nhwc_;
  std::vector<int64_t> x_dims_, out_dims_;
  int threads_ = 0;
  std::vector<Band> bands_;
  std::unique_ptr<DepthwiseNhwc> dw_;
  std::optional<ConvEpilogue> dw_ep_;
  std::vector<float> xbuf_, ybuf_;
};

}  // namespace

std::optional<PointwiseDepthwise> plan_pointwise_depthwise(const Graph& g,
                                                           const std::vector<NodeId>& nodes,
                                                           std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<PointwiseDepthwise> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (nodes.empty()) return fail("empty group");
  auto m = match_pointwise_depthwise(g, nodes[0]);
  if (!m) return fail("not a pointwise Conv feeding a depthwise Conv");
  if (m->nodes() != nodes) return fail("the group is not exactly the pointwise_depthwise chain");
  return m;
}

std::shared_ptr<const PointwiseDepthwisePrep> prepare_pointwise_depthwise(
    const Graph& g, const PointwiseDepthwise& m) {
  auto p = std::make_shared<PointwiseDepthwisePrep>();
  const Node& pw = g.node(m.pw);
  const Node& dw = g.node(m.dw);
  p->name = pw.name;
  p->match = m;
  auto pwd = constant_data(g, pw.inputs[1])->dims();
  auto dwd = constant_data(g, dw.inputs[1])->dims();
  p->ce = pwd[0];
  p->ci = pwd[1];
  p->pw_w = floats_of(g, pw.inputs[1], 0);
  p->pw_b = floats_of(g, pw.inputs.size() > 2 ? pw.inputs[2] : kNoValue, p->ce);
  p->dw_w = floats_of(g, dw.inputs[1], 0);
  p->dw_b = floats_of(g, dw.inputs.size() > 2 ? dw.inputs[2] : kNoValue, p->ce);
  if (static_cast<int64_t>(p->pw_b.size()) != p->ce ||
      static_cast<int64_t>(p->dw_b.size()) != p->ce)
    throw Error("pointwise_depthwise '" + p->name + "': bias does not match the channels");
  p->dw_kernel = {dwd[2], dwd[3]};
  p->dw_strides = dw.attrs.get_ints("strides");
  if (p->dw_strides.empty()) p->dw_strides = {1, 1};
  p->dw_pads = dw.attrs.get_ints("pads");
  if (p->dw_pads.empty()) p->dw_pads = {0, 0, 0, 0};
  if (p->dw_pads.size() != 4) throw Error("pointwise_depthwise '" + p->name + "': pads");
  return p;
}

std::shared_ptr<Kernel> make_pointwise_depthwise_kernel(
    std::shared_ptr<const PointwiseDepthwisePrep> prep, bool x_nhwc, bool out_nhwc) {
  return std::make_shared<PointwiseDepthwiseKernel>(std::move(prep), x_nhwc, out_nhwc);
}

const PointwiseDepthwisePrep* pointwise_depthwise_prep(const Kernel& k, bool* x_nhwc,
                                                       bool* out_nhwc) {
  auto* pk = dynamic_cast<const PointwiseDepthwiseKernel*>(&k);
  if (!pk) return nullptr;
  if (x_nhwc) *x_nhwc = pk->x_nhwc();
  if (out_nhwc) *out_nhwc = pk->out_nhwc();
  return &pk->prep();
}

std::shared_ptr<const PointwiseDepthwisePrep> shared_pointwise_depthwise_prep(const Kernel& k) {
  auto* pk = dynamic_cast<const PointwiseDepthwiseKernel*>(&k);
  return pk ? pk->shared() : nullptr;
}

}  // namespace fx
