// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/conv_path.h"

#include <algorithm>

#include "runtime/dnnl_util.h"
#include "runtime/thread_pool.h"
#include "util/error.h"

namespace fx {

using dt = dnnl::memory::data_type;

namespace {

// Reorders of a [n, c, h, w] tensor between NCHW and NHWC (tensor 0 -> tensor 3), as
// parts: a single image's rows split over threads, a batch as one part.
std::vector<DnnlPart> layout_reorders(const std::vector<int64_t>& d, bool to_nhwc, int threads) {
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  std::vector<std::pair<int64_t, int64_t>> ranges{{0, h}};
  if (n == 1)
    ranges = split_range(h, threads, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, c * w)));
  std::vector<DnnlPart> parts;
  for (auto [h0, h1] : ranges) {
    const int64_t hp = h1 - h0;
    dnnl::memory::desc nchw(to_dnnl({n, c, hp, w}), dt::f32, to_dnnl({c * h * w, h * w, w, 1}));
    dnnl::memory::desc nhwc(to_dnnl({n, c, hp, w}), dt::f32, to_dnnl({c * hp * w, 1, w * c, c}));
    const auto& from = to_nhwc ? nchw : nhwc;
    const auto& to = to_nhwc ? nhwc : nchw;
    dnnl::reorder::primitive_desc pd(dnnl_engine(), from, dnnl_engine(), to, part_attr());
    const int64_t off_from = to_nhwc ? h0 * w : h0 * w * c, off_to = to_nhwc ? h0 * w * c : h0 * w;
    parts.push_back(make_part(pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}},
                              {{DNNL_ARG_FROM, 0, off_from * 4}, {DNNL_ARG_TO, 3, off_to * 4}}));
  }
  return parts;
}

}  // namespace

ConvGeometry conv_geometry(const ConvPrep& p, const std::vector<int64_t>& x) {
  const std::size_t sp = x.size() - 2;
  auto at = [](const std::vector<int64_t>& v, std::size_t i, int64_t def) {
    return i < v.size() ? v[i] : def;
  };
  if (x[1] != p.w_dims[1] * p.group)
    throw Error("fused Conv '" + p.name + "': input channels do not match the weights");
  ConvGeometry g{{x[0], p.w_dims[0]},
                 dnnl::memory::dims(sp),
                 dnnl::memory::dims(sp),
                 dnnl::memory::dims(sp),
                 dnnl::memory::dims(sp)};
  for (std::size_t i = 0; i < sp; ++i) {
    int64_t in = x[2 + i], s = at(p.strides, i, 1), d = at(p.dilations, i, 1);
    int64_t ek = (p.w_dims[2 + i] - 1) * d + 1;
    int64_t p0 = at(p.pads, i, 0), p1 = at(p.pads, sp + i, 0);
    if (p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER") {
      int64_t o = (in + s - 1) / s, total = std::max<int64_t>(0, (o - 1) * s + ek - in);
      p0 = p.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      p1 = total - p0;
    } else if (p.auto_pad == "VALID") {
      p0 = p1 = 0;
    }
    int64_t o = (in + p0 + p1 - ek) / s + 1;
    if (o <= 0) throw Error("fused Conv '" + p.name + "': empty output");
    g.out.push_back(o);
    g.st[i] = s;
    g.dil[i] = d - 1;
    g.pl[i] = p0;
    g.pr[i] = p1;
  }
  return g;
}

float* scratch(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<std::size_t>(n));
  return v.data();
}

void LayoutConversion::build(const std::vector<int64_t>& dims, bool to_nhwc, int threads) {
  parts = layout_reorders(dims, to_nhwc, threads);
}

void LayoutConversion::run(const void* from, void* to, int threads) {
  run_parts(parts, {const_cast<void*>(from), nullptr, nullptr, to}, threads);
}

const void* LayoutConversion::into_buffer(const Tensor& t, int threads) {
  void* to = scratch(buffer, t.numel());
  run(t.raw(), to, threads);
  return to;
}

dnnl::algorithm conv_post_op_algorithm(const std::string& a) {
  using A = dnnl::algorithm;
  if (a == "relu") return A::eltwise_relu;
  if (a == "clip") return A::eltwise_clip;
  if (a == "logistic") return A::eltwise_logistic;
  if (a == "swish") return A::eltwise_swish;
  if (a == "tanh") return A::eltwise_tanh;
  if (a == "hardswish") return A::eltwise_hardswish;
  if (a == "elu") return A::eltwise_elu;
  if (a == "gelu_erf") return A::eltwise_gelu_erf;
  if (a == "add") return A::binary_add;
  if (a == "sub") return A::binary_sub;
  if (a == "mul") return A::binary_mul;
  return A::binary_div;
}

dnnl::memory::desc nhwc_md(const std::vector<int64_t>& d) {
  return dnnl::memory::desc(to_dnnl(d), dt::f32, dnnl::memory::format_tag::acdb);
}

dnnl::post_ops nhwc_post_ops(const ConvPrep& p, const OperandDims& operands,
                             std::vector<dnnl::memory::desc>& binary_mds) {
  dnnl::post_ops po;
  for (std::size_t k = 0, b = 0; k < p.plan.post_ops.size(); ++k) {
    const ConvPostOp& q = p.plan.post_ops[k];
    switch (q.kind) {
      case ConvPostOp::Kind::Fold: break;
      case ConvPostOp::Kind::Eltwise:
        po.append_eltwise(1.f, conv_post_op_algorithm(q.alg), q.alpha, q.beta);
        break;
      case ConvPostOp::Kind::Sum:
        ++b;
        po.append_sum(1.f);
        break;
      case ConvPostOp::Kind::Binary: {
        std::vector<int64_t> od = operands.at(b++);
        od.insert(od.begin(), 4 - od.size(), 1);  // right-aligned broadcast
        binary_mds.push_back(plain_f32_desc(od));
        po.append_binary(conv_post_op_algorithm(q.alg), binary_mds.back());
        break;
      }
    }
  }
  return po;
}

int binary_post_op_index(const ConvPrep& p, std::size_t b) {
  int index = 0;
  std::size_t seen = 0;
  for (const ConvPostOp& q : p.plan.post_ops) {
    if (q.kind == ConvPostOp::Kind::Fold) continue;
    if (q.kind == ConvPostOp::Kind::Binary && seen++ == b) return index;
    ++index;
  }
  return -1;
}

void apply_conv_epilogue(const ConvPrep& p, const std::vector<int64_t>& d, float* y,
                         const float* bias, const std::vector<const float*>& res) {
  int64_t spatial = 1;
  for (std::size_t i = 2; i < d.size(); ++i) spatial *= d[i];
  p.epilogue->apply(y, d[0], d[1], spatial, bias, res, current_threads());
}

}  // namespace fx
