#include "codegen/fused_conv_kernel.h"

#include <spdlog/spdlog.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "codegen/conv_epilogue.h"
#include "codegen/depthwise_nhwc.h"
#include "codegen/kernel_ir.h"
#include "codegen/pointwise_depthwise_kernel.h"
#include "onnx/bn_fold.h"
#include "runtime/depthwise_conv.h"
#include "runtime/dnnl_parts.h"
#include "runtime/dnnl_util.h"
#include "runtime/kernel_registry.h"
#include "runtime/overwrite_input.h"
#include "runtime/parallel.h"
#include "runtime/thread_pool.h"
#include "runtime/winograd_conv.h"
#include "util/error.h"

namespace fx {

namespace {

std::optional<float> scalar_const(const Graph& g, ValueId v) {
  auto d = constant_data(g, v);
  if (!d || d->numel() != 1) return {};
  return d->to_floats().at(0);
}

dnnl::algorithm algorithm_of(const std::string& a) {
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

bool same_shape(const Shape& a, const Shape& b) {
  if (!a.rank_known() || !b.rank_known() || a.rank() != b.rank()) return false;
  for (std::size_t i = 0; i < a.rank(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

// A float32 constant that is a scalar or varies only along the output's channel axis
// (axis 1 of `out`, right-aligned broadcasting), so it can go into weights and bias.
bool per_channel_constant(const Graph& g, ValueId v, const Shape& out) {
  auto data = constant_data(g, v);
  if (!data || data->dtype() != DType::Float32 || !out.rank_known()) return false;
  const auto& d = data->dims();
  if (d.size() > out.rank()) return false;
  for (std::size_t a = 0; a < d.size(); ++a) {
    const std::size_t oa = out.rank() - d.size() + a;
    if (d[a] != 1 && oa != 1) return false;
  }
  return true;
}

// Applies a Fold post-op to [O, ...] weights and [O] bias.
void fold_into(std::vector<float>& w, std::vector<float>& bias, const std::string& alg,
               const std::vector<float>& c) {
  const std::size_t oc = bias.size(), per = w.size() / oc;
  for (std::size_t o = 0; o < oc; ++o) {
    const float k = c.size() == 1 ? c[0] : c.at(o);
    if (alg == "add") bias[o] += k;
    if (alg == "sub") bias[o] -= k;
    if (alg == "mul" || alg == "div") {
      for (std::size_t i = 0; i < per; ++i)
        w[o * per + i] = alg == "mul" ? w[o * per + i] * k : w[o * per + i] / k;
      bias[o] = alg == "mul" ? bias[o] * k : bias[o] / k;
    }
  }
}

}  // namespace

std::optional<ConvPostOpPlan> plan_conv_post_ops(const Graph& g, const std::vector<NodeId>& nodes,
                                                 std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return std::nullopt;
  };
  if (nodes.empty() || g.node(nodes[0]).op_type != "Conv")
    return fail("the group has no leading Conv");
  ConvPostOpPlan p;
  p.conv = nodes[0];
  const Node& conv = g.node(p.conv);
  const int rank = static_cast<int>(g.value(conv.inputs[0]).shape.rank());
  std::set<NodeId> members(nodes.begin(), nodes.end());
  if (group_external_outputs(g, nodes).size() != 1) return fail("the group has several outputs");
  ValueId cur = conv.outputs[0];
  p.step_inputs.push_back(conv.inputs[0]);
  bool has_sum = false;
  std::size_t i = 1;
  if (i < nodes.size() && g.node(nodes[i]).op_type == "BatchNormalization") {
    std::string b = conv_bn_fold_blocker(g, p.conv, nodes[i]);
    if (!b.empty()) return fail("BatchNormalization cannot fold: " + b);
    p.bn = nodes[i];
    cur = g.node(nodes[i]).outputs[0];
    ++i;
  } else if (g.node(p.conv).inputs.size() < 2 || !g.value(conv.inputs[1]).is_constant()) {
    return fail("Conv weights are not constant");
  }
  for (; i < nodes.size(); ++i) {
    const Node& n = g.node(nodes[i]);
    ConvPostOp po;
    po.node = n.name;
    const std::string& op = n.op_type;
    if (n.inputs.empty() || std::find(n.inputs.begin(), n.inputs.end(), cur) == n.inputs.end())
      return fail("node '" + n.name + "' does not continue the Conv's chain");
    if (op == "Relu")
      po.alg = "relu";
    else if (op == "LeakyRelu") {
      po.alg = "relu";
      po.alpha = n.attrs.get_float("alpha", 0.01f);
    } else if (op == "Tanh")
      po.alg = "tanh";
    else if (op == "HardSwish") {
      po.alg = "hardswish";
      po.alpha = 1.f / 6.f;
      po.beta = 0.5f;
    } else if (op == "Elu") {
      po.alg = "elu";
      po.alpha = n.attrs.get_float("alpha", 1.f);
    } else if (op == "Gelu" && n.attrs.get_string("approximate", "none") == "none")
      po.alg = "gelu_erf";
    else if (op == "Clip") {
      po.alg = "clip";
      po.alpha = n.attrs.get_float("min", -FLT_MAX);
      po.beta = n.attrs.get_float("max", FLT_MAX);
      for (std::size_t k = 1; k < n.inputs.size() && k < 3; ++k) {
        if (n.inputs[k] == kNoValue) continue;
        auto c = scalar_const(g, n.inputs[k]);
        if (!c) return fail("Clip '" + n.name + "' has non-constant bounds");
        (k == 1 ? po.alpha : po.beta) = *c;
      }
    } else if (op == "Sigmoid") {
      // x * Sigmoid(x) is swish; a lone Sigmoid is logistic.
      const Value& sv = g.value(n.outputs[0]);
      if (i + 1 < nodes.size() && g.node(nodes[i + 1]).op_type == "Mul" &&
          sv.consumers.size() == 1 && sv.consumers[0] == nodes[i + 1]) {
        const Node& m = g.node(nodes[i + 1]);
        if (m.inputs.size() == 2 && ((m.inputs[0] == cur && m.inputs[1] == n.outputs[0]) ||
                                     (m.inputs[1] == cur && m.inputs[0] == n.outputs[0]))) {
          po.alg = "swish";
          po.alpha = 1.f;
          po.node += "+" + m.name;
          p.post_ops.push_back(po);
          cur = m.outputs[0];
          ++i;
          continue;
        }
      }
      po.alg = "logistic";
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      if (n.inputs.size() != 2) return fail("node '" + n.name + "' is not binary");
      ValueId other = n.inputs[0] == cur ? n.inputs[1] : n.inputs[0];
      if (n.inputs[0] == n.inputs[1]) return fail("node '" + n.name + "' squares the chain");
      if ((op == "Sub" || op == "Div") && n.inputs[0] != cur)
        return fail("node '" + n.name + "' has the Conv result as its second operand");
      if (members.count(g.value(other).producer))
        return fail("node '" + n.name + "' reads another member");
      const Shape& s = g.value(other).shape;
      const Shape& out = g.value(cur).shape;
      if (!s.rank_known() || static_cast<int>(s.rank()) > rank || !out.rank_known())
        return fail("operand of '" + n.name + "' does not broadcast to the Conv output");
      for (std::size_t a = 0; a < s.rank(); ++a) {
        const Dim& d = s[a];
        const Dim& o = out[out.rank() - s.rank() + a];
        if (!(d.is_static() && d.value == 1) && !(d == o))
          return fail("operand of '" + n.name + "' does not broadcast to the Conv output");
      }
      po.alg = op == "Add" ? "add" : op == "Sub" ? "sub" : op == "Mul" ? "mul" : "div";
      po.operand = other;
      const bool linear_so_far =
          std::all_of(p.post_ops.begin(), p.post_ops.end(),
                      [](const ConvPostOp& q) { return q.kind == ConvPostOp::Kind::Fold; });
      if (linear_so_far && per_channel_constant(g, other, out))
        po.kind = ConvPostOp::Kind::Fold;
      else if (op == "Add" && !has_sum && same_shape(s, out)) {
        po.kind = ConvPostOp::Kind::Sum;
        has_sum = true;
      } else {
        po.kind = ConvPostOp::Kind::Binary;
      }
      if (po.kind != ConvPostOp::Kind::Fold) p.step_inputs.push_back(other);
    } else {
      return fail("op " + op + " (node '" + n.name + "') has no oneDNN post-op");
    }
    p.post_ops.push_back(po);
    cur = n.outputs[0];
  }
  p.output = cur;
  return p;
}

namespace {

using dt = dnnl::memory::data_type;

// Clones by instruction set (see codegen/depthwise_nhwc.cc).
#if defined(__x86_64__) && !defined(__clang__)
#define FX_CONV_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FX_CONV_CLONES
#endif

// What every layout variant of one group's kernel shares: attributes, and the weights
// and bias with BatchNormalization and the foldable post-ops folded in (done once).
struct ConvPrep {
  ConvPostOpPlan plan;
  std::string name;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad;
  std::vector<int64_t> w_dims;
  std::vector<float> weights, bias;
  std::optional<ConvEpilogue> epilogue;  // set when there is no Binary post-op
  int sum_input = -1;                    // the step input of the Sum operand, -1 none
  bool channels_last = false;            // may read or write NHWC (plan_conv_layouts)
  int64_t x_bytes = 0;                   // the input's size from its static shape, 0 unknown
};

std::shared_ptr<ConvPrep> prepare(const Graph& g, const ConvPostOpPlan& plan) {
  auto p = std::make_shared<ConvPrep>();
  p->plan = plan;
  const Node& n = g.node(plan.conv);
  p->name = n.name;
  p->group = n.attrs.get_int("group", 1);
  p->strides = n.attrs.get_ints("strides");
  p->dilations = n.attrs.get_ints("dilations");
  p->pads = n.attrs.get_ints("pads");
  p->auto_pad = n.attrs.get_string("auto_pad", "NOTSET");
  const Value& w = g.value(n.inputs[1]);
  if (!w.is_constant() || w.data->dtype() != DType::Float32)
    throw Error("fused Conv '" + n.name + "': weights are not constant float32");
  p->w_dims = w.data->dims();
  if (auto bytes = g.value(n.inputs[0]).byte_size()) p->x_bytes = static_cast<int64_t>(*bytes);
  p->weights = w.data->to_floats();
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    if (!g.value(n.inputs[2]).is_constant())
      throw Error("fused Conv '" + n.name + "': bias is not constant");
    p->bias = g.value(n.inputs[2]).data->to_floats();
  } else {
    p->bias.assign(static_cast<std::size_t>(p->w_dims.at(0)), 0.f);
  }
  if (plan.bn != kNoNode) {
    const Node& bn = g.node(plan.bn);
    auto f = [&](int i) {
      return g.value(bn.inputs[static_cast<std::size_t>(i)]).data->to_floats();
    };
    auto folded = fold_bn_weights(p->weights, p->w_dims[0], p->bias, f(1), f(2), f(3), f(4),
                                  bn.attrs.get_float("epsilon", 1e-5f));
    p->weights = std::move(folded.weights);
    p->bias = std::move(folded.bias);
  }
  for (const ConvPostOp& po : plan.post_ops) {
    if (po.kind != ConvPostOp::Kind::Fold) continue;
    auto c = constant_data(g, po.operand)->to_floats();
    if (c.size() != 1 && c.size() != p->bias.size())
      throw Error("fused Conv '" + n.name + "': operand of '" + po.node +
                  "' does not match the output channels");
    fold_into(p->weights, p->bias, po.alg, c);
  }
  // Without Binary post-ops the epilogue can run as our own pass (conv_epilogue.h).
  std::vector<EpilogueOp> ops;
  bool own = true;
  for (std::size_t k = 0, in = 1; k < plan.post_ops.size(); ++k) {
    const ConvPostOp& po = plan.post_ops[k];
    if (po.kind == ConvPostOp::Kind::Fold) continue;
    if (po.kind == ConvPostOp::Kind::Sum) p->sum_input = static_cast<int>(in);
    if (po.kind != ConvPostOp::Kind::Eltwise) ++in;
    EpilogueOp e;
    own = own && po.kind != ConvPostOp::Kind::Binary &&
          epilogue_op_for(po.alg, po.alpha, po.beta, &e);
    ops.push_back(e);
  }
  if (own) p->epilogue.emplace(std::move(ops));
  p->channels_last =
      p->w_dims.size() == 4 && !std::getenv("FX_CONV_PLAIN") &&
      (p->group == 1 || (p->epilogue && p->w_dims[1] == 1 && p->w_dims[0] == p->group));
  return p;
}

struct Geometry {
  std::vector<int64_t> out;
  dnnl::memory::dims st, dil, pl, pr;  // oneDNN counts dilation from 0
};

Geometry geometry(const ConvPrep& p, const std::vector<int64_t>& x) {
  const std::size_t sp = x.size() - 2;
  auto at = [](const std::vector<int64_t>& v, std::size_t i, int64_t def) {
    return i < v.size() ? v[i] : def;
  };
  if (x[1] != p.w_dims[1] * p.group)
    throw Error("fused Conv '" + p.name + "': input channels do not match the weights");
  Geometry g{{x[0], p.w_dims[0]},
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

std::vector<int64_t> grouped_weight_dims(const ConvPrep& p) {
  std::vector<int64_t> wd = p.w_dims;  // [G, O/G, I/G, k...] for oneDNN
  if (p.group > 1) {
    wd[0] /= p.group;
    wd.insert(wd.begin(), p.group);
  }
  return wd;
}

dnnl::memory::desc nhwc_md(const std::vector<int64_t>& d) {
  return dnnl::memory::desc(to_dnnl(d), dt::f32, dnnl::memory::format_tag::acdb);
}

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

// A float buffer owned by the kernel (layout conversions), grown on demand.
float* scratch(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<std::size_t>(n));
  return v.data();
}

class FusedConvKernel final : public Kernel, public OverwritesInput {
 public:
  FusedConvKernel(std::shared_ptr<const ConvPrep> prep, ConvLayouts layouts)
      : p_(std::move(prep)), lay_(layouts) {}

  const ConvPrep& prep() const { return *p_; }
  std::shared_ptr<const ConvPrep> shared_prep() const { return p_; }
  const ConvLayouts& layouts() const { return lay_; }

  // The residual of the sum post-op, when the output may take its memory: oneDNN's
  // sum post-op reads each destination element before it writes it, so the residual
  // needs no copy into the output. Only where both are NHWC (the layout plan) and the
  // convolution is not depthwise: that path writes the convolution's result before it
  // reads the residual, and an NCHW residual is reordered into the output.
  // Without a residual, a depthwise convolution on NHWC in and out with stride 1 and
  // "same" padding may write over its input (DepthwiseNhwc::run_in_place); run()
  // copies the input aside when the shapes met at run time do not allow it.
  int overwritable_input() const override {
    if (p_->sum_input >= 0) return p_->group == 1 && lay_.sum && lay_.out ? p_->sum_input : -1;
    return depthwise_in_place() ? 0 : -1;
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::Float32 || x.rank() != p_->w_dims.size())
      throw Error("fused Conv step " + ctx.step_name() + ": unsupported input " + x.str());
    std::vector<std::vector<int64_t>> operand_dims;
    for (int i = 1; i < ctx.num_inputs(); ++i) operand_dims.push_back(ctx.in(i).dims());
    if (x.dims() != src_dims_ || operand_dims != operand_dims_)
      build(x.dims(), operand_dims, ctx.threads());
    Tensor& y = ctx.output(0, DType::Float32, dst_dims_);
    if (y.numel() == 0) return;
    const Tensor* r = nullptr;
    if (p_->sum_input >= 0) {
      r = &ctx.in(p_->sum_input);
      if (r->dims() != y.dims())
        throw Error("fused Conv step " + ctx.step_name() + ": residual " + r->str() +
                    " does not match the output");
    }
    const int threads = ctx.threads();
    if (path_ == Path::Winograd) {
      wino_->run(x.raw(), r ? r->raw() : nullptr, y.raw(), threads);
      return;
    }
    // Tensors whose layout is not the path's own go through a buffer.
    const void* xin = x.raw();
    if (lay_.x != native_nhwc_) {
      xin = scratch(xbuf_, x.numel());
      run_parts(x_convert_, {const_cast<void*>(x.raw()), nullptr, nullptr, const_cast<void*>(xin)},
                threads);
    }
    void* out = lay_.out == out_nhwc_ ? y.raw() : scratch(ybuf_, y.numel());
    // The memory plan gave the output the input's memory (overwritable_input): written
    // in place where the depthwise loop can, else from a copy of the input.
    bool in_place = false;
    if (out == xin) {
      in_place = path_ == Path::DwNhwc && out_nhwc_ && !r && dw_nhwc_->can_run_in_place();
      if (!in_place) {
        float* copy = scratch(xbuf_, x.numel());
        std::memcpy(copy, xin, x.byte_size());
        xin = copy;
      }
    }
    const void* rin = r ? r->raw() : nullptr;
    switch (path_) {
      case Path::Nhwc: run_nhwc(ctx, xin, r, out, threads); break;
      case Path::Plain: run_plain(ctx, xin, r, out); break;
      case Path::Winograd: break;  // returned above
      case Path::DwNchw:
      case Path::DwNhwc:
        if (in_place) {
          dw_nhwc_->run_in_place(static_cast<float*>(out), &*p_->epilogue);
          break;
        }
        if (r && lay_.sum != native_nhwc_) {
          rin = scratch(rbuf_, r->numel());
          run_parts(r_convert_,
                    {const_cast<void*>(r->raw()), nullptr, nullptr, const_cast<void*>(rin)},
                    threads);
        }
        run_depthwise(xin, static_cast<const float*>(rin), static_cast<float*>(out));
        break;
    }
    if (lay_.out != out_nhwc_) run_parts(y_convert_, {out, nullptr, nullptr, y.raw()}, threads);
  }

 private:
  enum class Path { Plain, Nhwc, DwNchw, DwNhwc, Winograd };

  void build(const std::vector<int64_t>& x, const std::vector<std::vector<int64_t>>& operands,
             int threads) {
    const ConvPrep& p = *p_;
    Geometry geo = geometry(p, x);
    src_dims_ = x;
    operand_dims_ = operands;
    dst_dims_ = geo.out;
    wino_.reset();
    const bool any_cl = lay_.x || lay_.out || lay_.sum;
    const bool rank4 = x.size() == 4;
    if (rank4 && p.epilogue && p.group > 1 && p.group == x[1] && p.w_dims[0] == p.group) {
      path_ = any_cl ? Path::DwNhwc : Path::DwNchw;
      const DepthwiseShape s{x[0],           x[1],           x[2],        x[3],      geo.out[2],
                             geo.out[3],     p.w_dims[2],    p.w_dims[3], geo.st[0], geo.st[1],
                             geo.dil[0] + 1, geo.dil[1] + 1, geo.pl[0],   geo.pl[1]};
      dw_shape_ = s;
      if (path_ == Path::DwNhwc) dw_nhwc_.emplace(s, p.weights, p.bias);
    } else if (rank4 && build_winograd(x, geo, operands, threads)) {
      path_ = Path::Winograd;
      x_convert_.clear();
      y_convert_.clear();
      r_convert_.clear();
      return;  // it reads and writes every layout itself
    } else if (rank4 && p.group == 1 && !std::getenv("FX_CONV_PLAIN") &&
               per_channel_operands(operands) && (any_cl || prefers_nhwc(x, geo)) &&
               build_nhwc(x, geo, operands, threads)) {
      path_ = Path::Nhwc;
    } else {
      path_ = Path::Plain;
      build_plain(x, geo, operands);
    }
    native_nhwc_ = path_ == Path::Nhwc || path_ == Path::DwNhwc;
    // The NHWC depthwise loop writes an NCHW output itself (each row transposed while
    // in cache) unless a residual is added on its rows: cheaper than reordering the
    // whole output after it (EfficientNet-B0's 144 x 56 x 56 depthwise + SiLU: the
    // reorder alone took 170-200 us, more than the convolution).
    out_nhwc_ = native_nhwc_ && !(path_ == Path::DwNhwc && !lay_.out && p.sum_input < 0);
    x_convert_.clear();
    y_convert_.clear();
    r_convert_.clear();
    if (lay_.x != native_nhwc_) x_convert_ = layout_reorders(x, !lay_.x, threads);
    if (lay_.out != out_nhwc_) y_convert_ = layout_reorders(geo.out, lay_.out, threads);
    if (p.sum_input >= 0 && lay_.sum != native_nhwc_)
      r_convert_ = layout_reorders(geo.out, !lay_.sum, threads);
  }

  // A depthwise convolution (with our epilogue: no Binary post-op) whose input and
  // output are both NHWC, square odd kernel, stride 1, no dilation, explicit "same"
  // padding: the shapes DepthwiseNhwc::run_in_place takes (one image is checked at run
  // time). Only on inputs of 1 MiB or more: MobileNetV2's 112x112x32 and 56x56x144
  // depthwise steps ran 10-45% faster in place (and their consumers, reading memory just
  // written, too), its 28x28 and smaller ones 10-50% slower (the ring's row copies cost
  // more than the memory they save there).
  bool depthwise_in_place() const {
    const ConvPrep& p = *p_;
    if (p.x_bytes < (int64_t{1} << 20)) return false;
    if (!p.epilogue || !lay_.x || !lay_.out || p.group <= 1 || p.w_dims.size() != 4 ||
        p.w_dims[0] != p.group || p.w_dims[1] != 1 || p.auto_pad != "NOTSET")
      return false;
    const int64_t k = p.w_dims[2];
    if (p.w_dims[3] != k || k % 2 == 0) return false;
    auto all = [](const std::vector<int64_t>& v, int64_t x) {
      return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
    };
    return all(p.strides, 1) && all(p.dilations, 1) && p.pads.size() == 4 &&
           all(p.pads, (k - 1) / 2);
  }

  // oneDNN's Winograd convolution (runtime/winograd_conv.h) for a 3x3 stride-1
  // convolution whose post-ops are eltwise and sum ones, in the tensors' own layouts.
  bool build_winograd(const std::vector<int64_t>& x, const Geometry& geo,
                      const std::vector<std::vector<int64_t>>& operands, int threads) {
    const ConvPrep& p = *p_;
    if (std::getenv("FX_CONV_PLAIN") ||
        !winograd_shape(x[0], x[1], geo.out[1], p.group, geo.out[2], geo.out[3],
                        {p.w_dims[2], p.w_dims[3]}, geo.st, p.dilations))
      return false;
    for (const ConvPostOp& q : p.plan.post_ops)
      if (q.kind == ConvPostOp::Kind::Binary) return false;
    WinogradConvSpec ws;
    ws.name = p.name;
    ws.ic = x[1], ws.ih = x[2], ws.iw = x[3];
    ws.oc = geo.out[1], ws.oh = geo.out[2], ws.ow = geo.out[3];
    ws.pad_top = geo.pl[0], ws.pad_left = geo.pl[1];
    ws.pad_bottom = geo.pr[0], ws.pad_right = geo.pr[1];
    ws.x_nhwc = lay_.x, ws.y_nhwc = lay_.out, ws.residual_nhwc = lay_.sum;
    ws.weights = p.weights.data();
    ws.bias = p.bias.data();
    std::vector<dnnl::memory::desc> binary_mds;
    ws.post_ops = nhwc_post_ops(operands, binary_mds);
    ws.has_sum = p.sum_input >= 0;
    wino_ = WinogradConv::make(ws, threads);
    return wino_ != nullptr;
  }

  // Binary operands that broadcast per output channel or are scalars (oneDNN's
  // channels-last kernels take them in registers).
  bool per_channel_operands(const std::vector<std::vector<int64_t>>& operands) const {
    for (std::size_t k = 0, b = 0; k < p_->plan.post_ops.size(); ++k) {
      const auto kind = p_->plan.post_ops[k].kind;
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
  bool prefers_nhwc(const std::vector<int64_t>& x, const Geometry& geo) const {
    if (p_->w_dims[2] * p_->w_dims[3] == 1) return false;
    const auto any = dnnl::memory::format_tag::any;
    dnnl::convolution_forward::desc probe(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        dnnl::memory::desc(to_dnnl(x), dt::f32, any),
        dnnl::memory::desc(to_dnnl(p_->w_dims), dt::f32, any),
        dnnl::memory::desc(to_dnnl(geo.out), dt::f32, any), geo.st, geo.dil, geo.pl, geo.pr);
    try {
      dnnl::convolution_forward::primitive_desc pd(probe, dnnl_engine());
      return std::string(pd.impl_info_str()).find("gemm") == std::string::npos &&
             pd.src_desc() == nhwc_md(x) && pd.dst_desc() == nhwc_md(geo.out);
    } catch (const dnnl::error&) {
      return false;
    }
  }

  // The post-ops of the channels-last convolution: all but the folded ones, in order.
  dnnl::post_ops nhwc_post_ops(const std::vector<std::vector<int64_t>>& operands,
                               std::vector<dnnl::memory::desc>& binary_mds) const {
    dnnl::post_ops po;
    for (std::size_t k = 0, b = 0; k < p_->plan.post_ops.size(); ++k) {
      const ConvPostOp& q = p_->plan.post_ops[k];
      switch (q.kind) {
        case ConvPostOp::Kind::Fold: break;
        case ConvPostOp::Kind::Eltwise:
          po.append_eltwise(1.f, algorithm_of(q.alg), q.alpha, q.beta);
          break;
        case ConvPostOp::Kind::Sum:
          ++b;
          po.append_sum(1.f);
          break;
        case ConvPostOp::Kind::Binary: {
          std::vector<int64_t> od = operands.at(b++);
          od.insert(od.begin(), 4 - od.size(), 1);  // right-aligned broadcast
          binary_mds.push_back(plain_f32_desc(od));
          po.append_binary(algorithm_of(q.alg), binary_mds.back());
          break;
        }
      }
    }
    return po;
  }

  // The convolution on NHWC activations with every post-op in oneDNN (applied in
  // registers by its brgemm kernels), a single image split into parts over output
  // rows that run side by side on the runtime's pool (runtime/dnnl_parts.h); each
  // part reads the input rows its outputs need. Tensors of a run: 0 source, 3
  // destination, 4 + b the b-th Binary operand. False when oneDNN has no such
  // primitive (the plain path is taken instead).
  bool build_nhwc(const std::vector<int64_t>& x, const Geometry& geo,
                  const std::vector<std::vector<int64_t>>& operands, int threads) {
    const ConvPrep& p = *p_;
    const int64_t n = x[0], ic = x[1], ih = x[2], iw = x[3];
    const int64_t oc = geo.out[1], oh = geo.out[2], ow = geo.out[3];
    const int64_t s = geo.st[0], ek = (p.w_dims[2] - 1) * (geo.dil[0] + 1) + 1;
    std::vector<dnnl::memory::desc> binary_mds;
    dnnl::post_ops po = nhwc_post_ops(operands, binary_mds);
    dnnl::primitive_attr attr = part_attr();
    attr.set_post_ops(po);
    auto user_w = plain_f32_desc(p.w_dims);
    dnnl::memory::desc w_any(to_dnnl(p.w_dims), dt::f32, dnnl::memory::format_tag::any);
    dnnl::memory::desc b_md({oc}, dt::f32, dnnl::memory::format_tag::a);
    dnnl::memory b_mem(b_md, dnnl_engine(), const_cast<float*>(p.bias.data()));
    const int64_t row_macs = ow * dims_numel(p.w_dims);
    std::vector<std::pair<int64_t, int64_t>> ranges{{0, oh}};
    if (n == 1)
      ranges = split_range(oh, threads, std::max<int64_t>(1, (int64_t{1} << 20) / row_macs));
    oc_ranges_.clear();
    part_bufs_.clear();
    // Few rows per part (a 7x7 map: 3 and 4 rows) make oneDNN's tiles small and
    // unbalanced, and each part reads all weights: split output channels instead, where
    // the weights are what costs: a spatial kernel (ResNet's 3x3 at 7x7) or a 1x1 over
    // 2 MiB of weights (ResNet-50's 2048 <-> 512). MobileNetV2's 1x1 at 7x7 (0.6-1.6 MiB
    // of weights) ran 15-20% faster on rows: the channel parts' copy into the output
    // and their narrower GEMMs cost more than reading the weights twice.
    const int64_t w_numel = dims_numel(p.w_dims);
    const bool weights_dominate =
        w_numel / (p.w_dims[0] * p.w_dims[1]) > 1 || w_numel * 4 > (int64_t{2} << 20);
    if (n == 1 && threads > 1 && oh < 4 * threads && oc >= 32 * threads &&
        oh * ow * oc * 4 <= (int64_t{1} << 20) && weights_dominate)
      return build_nhwc_channels(x, geo, operands, threads, attr, binary_mds);
    if (pointwise_columns(x, geo, binary_mds, threads, po)) return true;
    std::vector<DnnlPart> parts;
    std::vector<std::pair<int64_t, int64_t>> spans;
    dnnl::memory shared_w;
    // One part: source and destination slices (byte offsets into tensors 0 and 3), the
    // padding the slice needs, and the span of the output it writes (floats).
    auto add_part = [&](const dnnl::memory::desc& src, int64_t src_off,
                        const dnnl::memory::desc& dst, int64_t dst_off,
                        const dnnl::memory::dims& ppl, const dnnl::memory::dims& ppr,
                        std::pair<int64_t, int64_t> span) {
      auto desc = conv_forward_desc(src, w_any, &b_md, dst, geo.st, geo.dil, ppl, ppr);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, dnnl_engine());
      std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src},
                                                            {DNNL_ARG_DST, dst}};
      std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, src_off}, {DNNL_ARG_DST, 3, dst_off}};
      for (std::size_t b = 0; b < binary_mds.size(); ++b) {
        const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(binary_index(b)) | DNNL_ARG_SRC_1;
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
        const int64_t min_px = std::max<int64_t>(1, (int64_t{1} << 20) / dims_numel(p.w_dims));
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
      spdlog::debug("fused Conv '{}': no channels-last primitive ({}); plain path", p.name,
                    e.what());
      return false;
    }
    parts_ = std::move(parts);
    part_spans_ = std::move(spans);
    return true;
  }

  // A 1x1 convolution (stride 1, no padding) of a single small image (at most 64 pixels)
  // with wide output (128+ channels per thread) and 512 KiB+ of weights (MobileNetV2's
  // features.18: 320 -> 1280 on 7x7, 1.6 MiB): a GEMM [pixels x IC] x [IC x OC] cut over output
  // channels, part k a oneDNN matmul writing its columns straight into the NHWC output (strided
  // rows, no copy). Each core then streams half of the weights instead of all of them (the pixel
  // split reads every weight on both cores; cold, each core pulled all 1.6 MiB through an L2 of 1
  // MiB). Eltwise post-ops only. False when oneDNN offers only its reference matmul or the shape
  // does not qualify (the callers' paths then apply).
  bool pointwise_columns(const std::vector<int64_t>& x, const Geometry& geo,
                         const std::vector<dnnl::memory::desc>& binary_mds, int threads,
                         const dnnl::post_ops& po) {
    const ConvPrep& p = *p_;
    const bool pointwise = x[0] == 1 && p.w_dims.size() == 4 && p.w_dims[2] == 1 &&
                           p.w_dims[3] == 1 && geo.st[0] == 1 && geo.st[1] == 1 && geo.pl[0] == 0 &&
                           geo.pl[1] == 0 && geo.pr[0] == 0 && geo.pr[1] == 0;
    if (!pointwise || threads < 2 || !binary_mds.empty() || p.sum_input >= 0) return false;
    const int64_t ic = x[1], oc = geo.out[1], pixels = geo.out[2] * geo.out[3];
    // Measured on MobileNetV2's 7x7 maps (2 threads): the 160 -> 960 expansions,
    // 320 -> 1280 and 960 -> 320 (160 columns a part) gain 6-20%; narrow parts
    // (576/960 -> 160, 80 columns each) lose.
    if (pixels > 64 || ic * oc * 4 < (int64_t{512} << 10) || oc < 128 * threads) return false;
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
        if (impl.rfind("ref", 0) == 0) {
          spdlog::debug("fused Conv '{}': matmul column parts only in {}", p.name, impl);
          return false;
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
      return false;
    }
    if (parts.size() < 2) return false;
    parts_ = std::move(parts);
    part_spans_ = std::move(spans);
    return true;
  }

  // Channel split of a single image with few output rows: part k computes output
  // channels [c0, c1) of every pixel into its own dense NHWC buffer (oneDNN's brgemm
  // kernels take only dense memory, a channel slice of NHWC is not), which it then
  // copies into the output; the residual of a sum post-op is gathered into it first.
  bool build_nhwc_channels(const std::vector<int64_t>& x, const Geometry& geo,
                           const std::vector<std::vector<int64_t>>& operands, int threads,
                           const dnnl::primitive_attr& attr,
                           std::vector<dnnl::memory::desc> binary_mds) {
    const ConvPrep& p = *p_;
    const int64_t oc = geo.out[1], oh = geo.out[2], ow = geo.out[3];
    const int64_t per_oc = dims_numel(p.w_dims) / oc;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int k = 0; k < threads; ++k) {  // boundaries at multiples of 16 channels
      const int64_t c0 = oc * k / threads / 16 * 16;
      const int64_t c1 = k + 1 == threads ? oc : oc * (k + 1) / threads / 16 * 16;
      if (c1 > c0) ranges.emplace_back(c0, c1);
    }
    auto src = nhwc_md(x);
    std::vector<DnnlPart> parts;
    std::vector<std::vector<float>> bufs;
    try {
      for (auto [c0, c1] : ranges) {
        const int64_t cw = c1 - c0;
        std::vector<int64_t> wd = p.w_dims;
        wd[0] = cw;
        dnnl::memory::desc w_any(to_dnnl(wd), dt::f32, dnnl::memory::format_tag::any);
        dnnl::memory::desc b_md({cw}, dt::f32, dnnl::memory::format_tag::a);
        auto dst = nhwc_md({1, cw, oh, ow});
        // Per-channel binary operands: this part's slice.
        dnnl::post_ops po;
        std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, src},
                                                              {DNNL_ARG_DST, dst}};
        std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, 0}};
        for (std::size_t k = 0, b = 0; k < p.plan.post_ops.size(); ++k) {
          const ConvPostOp& q = p.plan.post_ops[k];
          if (q.kind == ConvPostOp::Kind::Eltwise)
            po.append_eltwise(1.f, algorithm_of(q.alg), q.alpha, q.beta);
          if (q.kind == ConvPostOp::Kind::Sum) po.append_sum(1.f);
          if (q.kind != ConvPostOp::Kind::Binary) continue;
          auto od = binary_mds[b].dims();
          const bool per_channel = od[1] != 1;
          if (per_channel) od[1] = cw;
          dnnl::memory::desc md(od, dt::f32, dnnl::memory::format_tag::abcd);
          po.append_binary(algorithm_of(q.alg), md);
          const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(binary_index(b)) | DNNL_ARG_SRC_1;
          descs.push_back({arg, md});
          binds.push_back({arg, static_cast<int>(4 + b), per_channel ? c0 * 4 : 0});
          ++b;
        }
        dnnl::primitive_attr part = attr;
        part.set_post_ops(po);
        auto desc = conv_forward_desc(src, w_any, &b_md, dst, geo.st, geo.dil, geo.pl, geo.pr);
        dnnl::convolution_forward::primitive_desc pd(desc, part, dnnl_engine());
        DnnlPart dp = make_part(pd, descs, std::move(binds));
        dp.args[DNNL_ARG_WEIGHTS] =
            reorder_weights(plain_f32_desc(wd), p.weights.data() + c0 * per_oc, pd.weights_desc());
        dp.args[DNNL_ARG_BIAS] =
            dnnl::memory(b_md, dnnl_engine(), const_cast<float*>(p.bias.data() + c0));
        bufs.emplace_back(static_cast<std::size_t>(cw * oh * ow));
        dp.args[DNNL_ARG_DST].set_data_handle(bufs.back().data());
        parts.push_back(std::move(dp));
      }
    } catch (const dnnl::error& e) {
      spdlog::debug("fused Conv '{}': no channels-last primitive ({}); plain path", p.name,
                    e.what());
      return false;
    }
    (void)operands;
    parts_ = std::move(parts);
    part_bufs_ = std::move(bufs);
    oc_ranges_ = std::move(ranges);
    part_spans_.clear();
    return true;
  }

  // Index among the primitive's post-ops of the b-th Binary one.
  int binary_index(std::size_t b) const {
    int index = 0;
    std::size_t seen = 0;
    for (const ConvPostOp& q : p_->plan.post_ops) {
      if (q.kind == ConvPostOp::Kind::Fold) continue;
      if (q.kind == ConvPostOp::Kind::Binary && seen++ == b) return index;
      ++index;
    }
    return -1;
  }

  void run_nhwc(KernelContext& ctx, const void* xin, const Tensor* r, void* out, int threads) {
    // The sum post-op accumulates into the destination: the residual goes there first,
    // reordered as a whole when it is NCHW, else copied by each part before it runs.
    bool copy_in_parts = false;
    if (r) {
      if (!lay_.sum)
        run_parts(r_convert_, {const_cast<void*>(r->raw()), nullptr, nullptr, out}, threads);
      else
        copy_in_parts = r->raw() != out;
    }
    std::vector<void*> tensors{const_cast<void*>(xin), nullptr, nullptr, out};
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      if (i == p_->sum_input) continue;
      tensors.push_back(const_cast<void*>(ctx.in(i).raw()));
    }
    auto one = [&](int64_t i) {
      const auto u = static_cast<std::size_t>(i);
      if (!oc_ranges_.empty()) {
        run_channel_part(
            u, r ? (lay_.sum ? r->data<float>() : static_cast<const float*>(out)) : nullptr,
            tensors, static_cast<float*>(out));
        return;
      }
      if (copy_in_parts) {
        auto [off, len] = part_spans_[u];
        std::memcpy(static_cast<float*>(out) + off, r->data<float>() + off,
                    static_cast<std::size_t>(len) * 4);
      }
      run_part(parts_[u], tensors);
    };
    OneOmpThread one_thread;
    if (parts_.size() == 1)
      one(0);
    else
      pool_run(static_cast<int64_t>(parts_.size()), threads, one);
  }

  void run_channel_part(std::size_t u, const float* residual, const std::vector<void*>& tensors,
                        float* out) {
    const int64_t oc = dst_dims_[1], pixels = dst_dims_[2] * dst_dims_[3];
    const auto [c0, c1] = oc_ranges_[u];
    const int64_t cw = c1 - c0;
    float* buf = part_bufs_[u].data();
    const auto bytes = static_cast<std::size_t>(cw) * 4;
    if (residual)
      for (int64_t q = 0; q < pixels; ++q) std::memcpy(buf + q * cw, residual + q * oc + c0, bytes);
    run_part(parts_[u], tensors);
    for (int64_t q = 0; q < pixels; ++q) std::memcpy(out + q * oc + c0, buf + q * cw, bytes);
  }

  void run_depthwise(const void* xin, const float* rin, float* out) {
    const float* xf = static_cast<const float*>(xin);
    std::vector<const float*> res;
    if (rin) res.push_back(rin);
    if (path_ == Path::DwNhwc) {
      dw_nhwc_->run(xf, out, &*p_->epilogue, res, !out_nhwc_);
      return;
    }
    // The runtime's direct NCHW loop on the folded weights, then our epilogue pass.
    depthwise_conv2d(dw_shape_, xf, p_->weights.data(), p_->bias.data(), out);
    apply_epilogue(out, nullptr, res);
  }

  // NCHW, oneDNN's gemm convolution: with Binary post-ops every post-op goes to
  // oneDNN, else the bias and epilogue are our pass after it (conv_epilogue.h).
  void build_plain(const std::vector<int64_t>& x, const Geometry& geo,
                   const std::vector<std::vector<int64_t>>& operands) {
    const ConvPrep& p = *p_;
    const auto& out = geo.out;
    auto src_md = plain_f32_desc(x), dst_md = plain_f32_desc(out);
    std::vector<int64_t> wd = grouped_weight_dims(p);
    dnnl::memory::desc w_any(to_dnnl(wd), dt::f32, dnnl::memory::format_tag::any);
    dnnl::memory::desc b_md({p.w_dims[0]}, dt::f32, dnnl::memory::format_tag::a);
    const bool own = p.epilogue.has_value();
    dnnl::post_ops po;
    operand_mems_.clear();
    // Folded post-ops are in the weights already: the primitive's post-op indices
    // count only the others.
    int index = 0;
    post_op_index_.assign(p.plan.post_ops.size(), -1);
    for (std::size_t k = 0, b = 0; k < p.plan.post_ops.size(); ++k) {
      const ConvPostOp& q = p.plan.post_ops[k];
      if (q.kind == ConvPostOp::Kind::Fold) continue;
      if (own) continue;
      post_op_index_[k] = index++;
      if (q.kind == ConvPostOp::Kind::Eltwise) {
        po.append_eltwise(1.f, algorithm_of(q.alg), q.alpha, q.beta);
        continue;
      }
      if (q.kind == ConvPostOp::Kind::Sum) {
        ++b;
        po.append_sum(1.f);
        continue;
      }
      std::vector<int64_t> od = operands.at(b++);
      od.insert(od.begin(), out.size() - od.size(), 1);  // right-aligned broadcast
      auto md = plain_f32_desc(od);
      po.append_binary(algorithm_of(q.alg), md);
      operand_mems_.push_back(dnnl::memory(md, dnnl_engine(), DNNL_MEMORY_NONE));
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    auto desc = conv_forward_desc(src_md, w_any, own ? nullptr : &b_md, dst_md, geo.st, geo.dil,
                                  geo.pl, geo.pr);
    auto pd = dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
    prim_ = dnnl::convolution_forward(pd);
    auto user_w =
        dnnl::memory(plain_f32_desc(wd), dnnl_engine(), const_cast<float*>(p.weights.data()));
    if (pd.weights_desc() == user_w.get_desc()) {
      w_mem_ = user_w;
    } else {
      w_mem_ = dnnl::memory(pd.weights_desc(), dnnl_engine());
      dnnl::reorder(user_w, w_mem_).execute(dnnl_stream(), user_w, w_mem_);
      dnnl_stream().wait();
    }
    b_mem_ = dnnl::memory(b_md, dnnl_engine(), const_cast<float*>(p.bias.data()));
    src_mem_ = dnnl::memory(src_md, dnnl_engine(), DNNL_MEMORY_NONE);
    dst_mem_ = dnnl::memory(dst_md, dnnl_engine(), DNNL_MEMORY_NONE);
  }

  void run_plain(KernelContext& ctx, const void* xin, const Tensor* r, void* out) {
    const bool own = p_->epilogue.has_value();
    std::vector<const float*> res;
    if (r) {
      // NHWC residual (the layout plan) into NCHW first.
      const void* rin = r->raw();
      if (lay_.sum) {
        rin = scratch(rbuf_, r->numel());
        run_parts(r_convert_,
                  {const_cast<void*>(r->raw()), nullptr, nullptr, const_cast<void*>(rin)},
                  ctx.threads());
      }
      if (own)
        res.push_back(static_cast<const float*>(rin));
      else if (rin != out)
        std::memcpy(out, rin, r->byte_size());  // the sum post-op accumulates onto it
    }
    src_mem_.set_data_handle(const_cast<void*>(xin));
    dst_mem_.set_data_handle(out);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src_mem_}, {DNNL_ARG_WEIGHTS, w_mem_}, {DNNL_ARG_DST, dst_mem_}};
    if (!own) args[DNNL_ARG_BIAS] = b_mem_;  // else the epilogue adds it
    // Step inputs after x: the Binary and Sum operands, in post-op order; operand_mems_
    // holds one memory per Binary.
    for (std::size_t k = 0, in = 1, b = 0; k < p_->plan.post_ops.size(); ++k) {
      const auto kind = p_->plan.post_ops[k].kind;
      if (kind == ConvPostOp::Kind::Sum) ++in;
      if (kind != ConvPostOp::Kind::Binary) continue;
      operand_mems_[b].set_data_handle(const_cast<void*>(ctx.in(static_cast<int>(in++)).raw()));
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op_index_[k]) | DNNL_ARG_SRC_1] = operand_mems_[b];
      ++b;
    }
    prim_.execute(dnnl_stream(), args);
    dnnl_stream().wait();
    if (own) apply_epilogue(static_cast<float*>(out), p_->bias.data(), res);
  }

  void apply_epilogue(float* y, const float* bias, const std::vector<const float*>& res) const {
    const auto& d = dst_dims_;
    int64_t spatial = 1;
    for (std::size_t i = 2; i < d.size(); ++i) spatial *= d[i];
    p_->epilogue->apply(y, d[0], d[1], spatial, bias, res, current_threads());
  }

  std::shared_ptr<const ConvPrep> p_;
  ConvLayouts lay_;
  Path path_ = Path::Plain;
  bool native_nhwc_ = false;  // the path's own layout
  bool out_nhwc_ = false;     // the layout the path writes its output in
  std::vector<int64_t> src_dims_, dst_dims_;
  std::vector<std::vector<int64_t>> operand_dims_;
  // Layout conversions (tensor 0 -> tensor 3) where a tensor's layout is not the path's.
  std::vector<DnnlPart> x_convert_, y_convert_, r_convert_;
  std::vector<float> xbuf_, ybuf_, rbuf_;
  // Path::Nhwc
  std::vector<DnnlPart> parts_;
  std::vector<std::pair<int64_t, int64_t>> part_spans_;  // per part: output floats (offset, count)
  std::vector<std::pair<int64_t, int64_t>> oc_ranges_;   // channel split: per part [c0, c1)
  std::vector<std::vector<float>> part_bufs_;            // channel split: per part output
  // Path::Plain
  dnnl::primitive prim_;
  dnnl::memory w_mem_, b_mem_, src_mem_, dst_mem_;
  std::vector<dnnl::memory> operand_mems_;
  std::vector<int> post_op_index_;  // per plan post-op: its index in the primitive, -1 none
  // Path::DwNchw / DwNhwc
  DepthwiseShape dw_shape_{};
  // Path::Winograd
  std::unique_ptr<WinogradConv> wino_;
  std::optional<DepthwiseNhwc> dw_nhwc_;
};

}  // namespace

std::shared_ptr<Kernel> make_fused_conv_kernel(const Graph& g, const ConvPostOpPlan& plan) {
  return std::make_shared<FusedConvKernel>(prepare(g, plan), ConvLayouts{});
}

namespace {

// MaxPool on NHWC in and out (a ResNet stem's pool between two NHWC Convs): a direct
// loop over output rows, vectorized over channels. Adopted by plan_conv_layouts only
// where both its tensors stay NHWC.
struct PoolGeometry {
  int64_t kh, kw, sh, sw, pt, pl, pb, pr;
};

std::optional<PoolGeometry> nhwc_max_pool_geometry(const Graph& g, const Step& s) {
  if (s.nodes.size() != 1 || s.outputs.size() != 1 || s.inputs.size() != 1) return {};
  const Node& n = g.node(s.nodes[0]);
  if (n.op_type != "MaxPool" || n.outputs.size() != 1) return {};
  const auto k = n.attrs.get_ints("kernel_shape");
  auto st = n.attrs.get_ints("strides"), pads = n.attrs.get_ints("pads"),
       dil = n.attrs.get_ints("dilations");
  if (k.size() != 2 || n.attrs.get_string("auto_pad", "NOTSET") != "NOTSET" ||
      n.attrs.get_int("ceil_mode", 0) != 0 || n.attrs.get_int("storage_order", 0) != 0)
    return {};
  for (int64_t d : dil)
    if (d != 1) return {};
  if (st.empty()) st = {1, 1};
  if (pads.empty()) pads = {0, 0, 0, 0};
  if (st.size() != 2 || pads.size() != 4) return {};
  if (pads[0] >= k[0] || pads[1] >= k[1] || pads[2] >= k[0] || pads[3] >= k[1]) return {};
  return PoolGeometry{k[0], k[1], st[0], st[1], pads[0], pads[1], pads[2], pads[3]};
}

FX_CONV_CLONES void max_pool_nhwc_row(const float* img, float* out, int64_t C, int64_t H, int64_t W,
                                      int64_t OW, int64_t oh, const PoolGeometry& p) {
  const int64_t h0 = std::max<int64_t>(0, oh * p.sh - p.pt),
                h1 = std::min<int64_t>(H, oh * p.sh - p.pt + p.kh);
  for (int64_t ow = 0; ow < OW; ++ow) {
    const int64_t w0 = std::max<int64_t>(0, ow * p.sw - p.pl),
                  w1 = std::min<int64_t>(W, ow * p.sw - p.pl + p.kw);
    float* __restrict o = out + ow * C;
    const float* first = img + (h0 * W + w0) * C;
    for (int64_t c = 0; c < C; ++c) o[c] = first[c];
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) {
        const float* __restrict x = img + (h * W + w) * C;
        for (int64_t c = 0; c < C; ++c) o[c] = x[c] > o[c] ? x[c] : o[c];
      }
  }
}

class NhwcMaxPoolKernel final : public Kernel {
 public:
  explicit NhwcMaxPoolKernel(PoolGeometry p) : p_(p) {}
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::Float32 || x.rank() != 4)
      throw Error("MaxPool step " + ctx.step_name() + ": unsupported input " + x.str());
    const auto& d = x.dims();
    const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
    const int64_t oh = (h + p_.pt + p_.pb - p_.kh) / p_.sh + 1,
                  ow = (w + p_.pl + p_.pr - p_.kw) / p_.sw + 1;
    if (oh <= 0 || ow <= 0) throw Error("MaxPool step " + ctx.step_name() + ": empty output");
    Tensor& y = ctx.output(0, DType::Float32, {n, c, oh, ow});
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    parallel_for(n * oh, ow * c * p_.kh * p_.kw, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        max_pool_nhwc_row(xp + (r / oh) * h * w * c, yp + r * ow * c, c, h, w, ow, r % oh, p_);
    });
  }

 private:
  PoolGeometry p_;
};

}  // namespace

int plan_conv_layouts(const Graph& g, std::vector<Step>& steps) {
  // The steps that can exchange NHWC tensors: fused Conv kernels, lone Conv nodes
  // (no epilogue to fuse, e.g. MobileNetV2's projections) adopted as fused Conv
  // kernels without post-ops so that they do not break a chain of NHWC tensors, and
  // MaxPool nodes whose input and output can both stay NHWC.
  std::vector<std::shared_ptr<const ConvPrep>> prep(steps.size());
  std::vector<std::optional<PoolGeometry>> pool(steps.size());
  std::vector<std::vector<ValueId>> inputs(steps.size());
  // Pointwise+depthwise kernels (codegen/pointwise_depthwise_kernel.h): NHWC in and
  // out like a fused Conv without a residual.
  std::vector<std::shared_ptr<const PointwiseDepthwisePrep>> pwdw(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    inputs[i] = s.inputs;
    if (s.outputs.size() != 1) continue;
    if (s.kernel && (pwdw[i] = shared_pointwise_depthwise_prep(*s.kernel))) {
      if (std::getenv("FX_CONV_PLAIN")) pwdw[i].reset();
      continue;
    }
    if (auto* k = dynamic_cast<const FusedConvKernel*>(s.kernel.get())) {
      prep[i] = k->shared_prep();
    } else if (s.nodes.size() == 1 && g.node(s.nodes[0]).op_type == "Conv") {
      auto cp = plan_conv_post_ops(g, s.nodes, nullptr);
      if (!cp) continue;
      try {
        prep[i] = prepare(g, *cp);
      } catch (const Error&) {
        continue;
      }
      inputs[i] = cp->step_inputs;
    } else if (dynamic_cast<const NhwcMaxPoolKernel*>(s.kernel.get()) ||
               !std::getenv("FX_CONV_PLAIN")) {
      pool[i] = nhwc_max_pool_geometry(g, s);
    }
    if (prep[i] && !prep[i]->channels_last) prep[i].reset();
  }
  std::set<ValueId> graph_outputs(g.outputs().begin(), g.outputs().end());
  // A value may stay NHWC when such a step produces it and every reader is such a
  // step that reads it as its x or its residual (the Sum operand). A MaxPool's input
  // and output are NHWC together or not at all (until nothing changes).
  std::map<ValueId, bool> nhwc;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if ((prep[i] || pool[i] || pwdw[i]) && !graph_outputs.count(steps[i].outputs[0]))
      nhwc[steps[i].outputs[0]] = true;
  for (std::size_t j = 0; j < steps.size(); ++j) {
    for (std::size_t i = 0; i < inputs[j].size(); ++i) {
      auto it = nhwc.find(inputs[j][i]);
      if (it == nhwc.end()) continue;
      const bool layout_input =
          (prep[j] && (i == 0 || static_cast<int>(i) == prep[j]->sum_input)) ||
          ((pool[j] || pwdw[j]) && i == 0);
      if (!layout_input) it->second = false;
    }
  }
  auto is = [&](ValueId v) {
    auto it = nhwc.find(v);
    return it != nhwc.end() && it->second;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (!pool[i] || (is(inputs[i][0]) && is(steps[i].outputs[0]))) continue;
      for (ValueId v : {inputs[i][0], steps[i].outputs[0]}) {
        auto it = nhwc.find(v);
        if (it != nhwc.end() && it->second) it->second = false, changed = true;
      }
      pool[i].reset();
    }
  }
  int kept = 0;
  for (auto& [v, on] : nhwc) kept += on;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Step& s = steps[i];
    if (pool[i]) {
      s.kernel = std::make_shared<NhwcMaxPoolKernel>(*pool[i]);
      continue;
    }
    if (dynamic_cast<const NhwcMaxPoolKernel*>(s.kernel.get()))  // planned before, not now
      s.kernel = make_kernel(g, g.node(s.nodes[0]));
    if (pwdw[i]) {
      bool x_now = false, out_now = false;
      pointwise_depthwise_prep(*s.kernel, &x_now, &out_now);
      const bool x = is(inputs[i][0]), out = is(s.outputs[0]);
      if (x != x_now || out != out_now) s.kernel = make_pointwise_depthwise_kernel(pwdw[i], x, out);
      continue;
    }
    if (!prep[i]) continue;
    ConvLayouts lay;
    lay.x = is(inputs[i][0]);
    lay.sum =
        prep[i]->sum_input >= 0 && is(inputs[i][static_cast<std::size_t>(prep[i]->sum_input)]);
    lay.out = is(s.outputs[0]);
    const auto* now = dynamic_cast<const FusedConvKernel*>(s.kernel.get());
    if (now ? now->layouts() == lay : !lay.x && !lay.sum && !lay.out) continue;
    s.kernel = std::make_shared<FusedConvKernel>(prep[i], lay);
    s.inputs = inputs[i];
  }
  return kept;
}

}  // namespace fx
