// SPDX-License-Identifier: Apache-2.0
#include "runtime/recurrent_dnnl.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "runtime/dnnl_util.h"

namespace fx {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// oneDNN's LSTM gates are (i, f, c, o), ONNX's (i, o, f, c); GRU's (u, r, o) are
// ONNX's (z, r, h). kOnnxGate[g] is the ONNX gate of oneDNN gate g.
namespace {
constexpr int kLstmGate[4] = {0, 2, 3, 1};
constexpr int kGruGate[3] = {0, 1, 2};
// Peepholes: oneDNN (i, f, o), ONNX (i, o, f).
constexpr int kPeepGate[3] = {0, 2, 1};
}  // namespace

struct DnnlRnn::Prepared {
  dnnl::primitive prim;
  memory weights_layer, weights_iter, bias, peephole, scratch;
  memory::desc src_layer, iter, dst_layer;
  std::vector<float> zeros, y_tmp, h_tmp, c_tmp;
};

DnnlRnn::DnnlRnn(const DnnlRnnConfig& cfg, const float* w, const float* r, const float* b,
                 const float* p)
    : cfg_(cfg) {
  const int64_t d = cfg.dirs, h = cfg.hidden, in = cfg.input, g = cfg.gru ? 3 : 4;
  const int* gate = cfg.gru ? kGruGate : kLstmGate;
  // ldigo: [1, D, I, G, H] from ONNX [D, G*H, I] (and likewise for R with I = H).
  auto to_ldigo = [&](const float* src, int64_t k, std::vector<float>& dst) {
    dst.resize(static_cast<std::size_t>(d * k * g * h));
    for (int64_t di = 0; di < d; ++di)
      for (int64_t gi = 0; gi < g; ++gi)
        for (int64_t hi = 0; hi < h; ++hi) {
          const float* row = src + (di * g * h + gate[gi] * h + hi) * k;
          for (int64_t ki = 0; ki < k; ++ki) dst[((di * k + ki) * g + gi) * h + hi] = row[ki];
        }
  };
  to_ldigo(w, in, w_);
  to_ldigo(r, h, r_);
  // ldgo bias: Wb + Rb per gate; linear-before-reset GRU keeps Rb of the candidate
  // apart as a fourth gate (it goes inside r * (...)).
  const int64_t bg = cfg.gru && cfg.linear_before_reset ? 4 : g;
  b_.assign(static_cast<std::size_t>(d * bg * h), 0.0f);
  if (b) {
    for (int64_t di = 0; di < d; ++di) {
      const float* wb = b + di * 2 * g * h;
      const float* rb = wb + g * h;
      for (int64_t gi = 0; gi < g; ++gi)
        for (int64_t hi = 0; hi < h; ++hi) {
          const int64_t o = gate[gi] * h + hi;
          const bool rb_apart = cfg.gru && cfg.linear_before_reset && gi == 2;
          b_[(di * bg + gi) * h + hi] = wb[o] + (rb_apart ? 0.0f : rb[o]);
          if (rb_apart) b_[(di * bg + 3) * h + hi] = rb[o];
        }
    }
  }
  if (p) {
    p_.resize(static_cast<std::size_t>(d * 3 * h));
    for (int64_t di = 0; di < d; ++di)
      for (int64_t gi = 0; gi < 3; ++gi)
        std::memcpy(&p_[(di * 3 + gi) * h], p + (di * 3 + kPeepGate[gi]) * h, sizeof(float) * h);
  }
}

DnnlRnn::~DnnlRnn() = default;

DnnlRnn::Prepared& DnnlRnn::prepared(int64_t steps, int64_t batch) {
  auto& slot = cache_[{steps, batch}];
  if (slot) return *slot;
  auto pr = std::make_unique<Prepared>();
  const int64_t d = cfg_.dirs, h = cfg_.hidden, in = cfg_.input, g = cfg_.gru ? 3 : 4;
  const int64_t bg = cfg_.gru && cfg_.linear_before_reset ? 4 : g;
  const auto dir = d == 2         ? dnnl::rnn_direction::bidirectional_concat
                   : cfg_.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                  : dnnl::rnn_direction::unidirectional_left2right;
  pr->src_layer = memory::desc({steps, batch, in}, dt::f32, tag::tnc);
  pr->iter = memory::desc({1, d, batch, h}, dt::f32, tag::ldnc);
  pr->dst_layer = memory::desc({steps, batch, d * h}, dt::f32, tag::tnc);
  const memory::desc wl_any({1, d, in, g, h}, dt::f32, tag::any);
  const memory::desc wi_any({1, d, h, g, h}, dt::f32, tag::any);
  const memory::desc bias_md({1, d, bg, h}, dt::f32, tag::ldgo);
  const auto prop = dnnl::prop_kind::forward_inference;
  dnnl::engine& eng = dnnl_engine();
  memory::desc wl_md, wi_md, scratch_md;
  if (!cfg_.gru) {
    using lstm = dnnl::lstm_forward;
    const memory::desc peep_md({1, d, 3, h}, dt::f32, tag::ldgo);
    const lstm::primitive_desc pd =
        p_.empty()
            ? lstm::primitive_desc(lstm::desc(prop, dir, pr->src_layer, pr->iter, pr->iter, wl_any,
                                              wi_any, bias_md, pr->dst_layer, pr->iter, pr->iter),
                                   eng)
            : lstm::primitive_desc(
                  lstm::desc(prop, dir, pr->src_layer, pr->iter, pr->iter, wl_any, wi_any, peep_md,
                             bias_md, pr->dst_layer, pr->iter, pr->iter),
                  eng);
    if (!p_.empty()) pr->peephole = memory(peep_md, eng, p_.data());
    wl_md = pd.weights_layer_desc(), wi_md = pd.weights_iter_desc();
    scratch_md = pd.scratchpad_desc();
    pr->prim = dnnl::lstm_forward(pd);
  } else if (cfg_.linear_before_reset) {
    dnnl::lbr_gru_forward::primitive_desc pd(
        {prop, dir, pr->src_layer, pr->iter, wl_any, wi_any, bias_md, pr->dst_layer, pr->iter},
        eng);
    wl_md = pd.weights_layer_desc(), wi_md = pd.weights_iter_desc();
    scratch_md = pd.scratchpad_desc();
    pr->prim = dnnl::lbr_gru_forward(pd);
  } else {
    dnnl::gru_forward::primitive_desc pd(
        {prop, dir, pr->src_layer, pr->iter, wl_any, wi_any, bias_md, pr->dst_layer, pr->iter},
        eng);
    wl_md = pd.weights_layer_desc(), wi_md = pd.weights_iter_desc();
    scratch_md = pd.scratchpad_desc();
    pr->prim = dnnl::gru_forward(pd);
  }
  dnnl::stream& s = dnnl_stream();
  auto reordered = [&](std::vector<float>& plain, int64_t k, const memory::desc& want) {
    memory user(memory::desc({1, d, k, g, h}, dt::f32, tag::ldigo), eng, plain.data());
    memory m(want, eng);
    dnnl::reorder(user, m).execute(s, user, m);
    return m;
  };
  pr->weights_layer = reordered(w_, in, wl_md);
  pr->weights_iter = reordered(r_, h, wi_md);
  s.wait();
  pr->bias = memory(bias_md, eng, b_.data());
  pr->scratch = memory(scratch_md, eng);
  pr->zeros.assign(static_cast<std::size_t>(d * batch * h), 0.0f);
  slot = std::move(pr);
  return *slot;
}

void DnnlRnn::run(int64_t steps, int64_t batch, const float* x, const float* h0, const float* c0,
                  float* y, float* yh, float* yc) {
  Prepared& pr = prepared(steps, batch);
  const int64_t d = cfg_.dirs, h = cfg_.hidden;
  // oneDNN writes [T, N, D*H]; ONNX's Y is [T, D, N, H]: the same when D or N is 1.
  const bool y_direct = y && (d == 1 || batch == 1);
  float* dst = y_direct ? y : nullptr;
  if (!dst) {
    pr.y_tmp.resize(static_cast<std::size_t>(steps * batch * d * h));
    dst = pr.y_tmp.data();
  }
  auto state_out = [&](float* p, std::vector<float>& tmp) {
    if (p) return p;
    tmp.resize(static_cast<std::size_t>(d * batch * h));
    return tmp.data();
  };
  dnnl::engine& eng = dnnl_engine();
  auto in_mem = [&](const memory::desc& md, const float* p) {
    return memory(md, eng, const_cast<float*>(p ? p : pr.zeros.data()));
  };
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC_LAYER, in_mem(pr.src_layer, x)},
      {DNNL_ARG_SRC_ITER, in_mem(pr.iter, h0)},
      {DNNL_ARG_WEIGHTS_LAYER, pr.weights_layer},
      {DNNL_ARG_WEIGHTS_ITER, pr.weights_iter},
      {DNNL_ARG_BIAS, pr.bias},
      {DNNL_ARG_DST_LAYER, memory(pr.dst_layer, eng, dst)},
      {DNNL_ARG_DST_ITER, memory(pr.iter, eng, state_out(yh, pr.h_tmp))},
      {DNNL_ARG_SCRATCHPAD, pr.scratch}};
  if (!cfg_.gru) {
    args[DNNL_ARG_SRC_ITER_C] = in_mem(pr.iter, c0);
    args[DNNL_ARG_DST_ITER_C] = memory(pr.iter, eng, state_out(yc, pr.c_tmp));
    if (!p_.empty()) args[DNNL_ARG_WEIGHTS_PEEPHOLE] = pr.peephole;
  }
  dnnl::stream& s = dnnl_stream();
  pr.prim.execute(s, args);
  s.wait();
  if (y && !y_direct) {
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t di = 0; di < d; ++di)
          std::memcpy(y + ((t * d + di) * batch + n) * h, dst + ((t * batch + n) * d + di) * h,
                      sizeof(float) * h);
  }
}

}  // namespace fx
