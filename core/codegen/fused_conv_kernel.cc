#include "codegen/fused_conv_kernel.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <cstring>
#include <set>

#include "codegen/conv_epilogue.h"
#include "codegen/kernel_ir.h"
#include "onnx/bn_fold.h"
#include "runtime/depthwise_conv.h"
#include "runtime/dnnl_util.h"
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

class FusedConvKernel final : public Kernel {
 public:
  FusedConvKernel(const Graph& g, const ConvPostOpPlan& plan) : plan_(plan) {
    const Node& n = g.node(plan.conv);
    group_ = n.attrs.get_int("group", 1);
    strides_ = n.attrs.get_ints("strides");
    dilations_ = n.attrs.get_ints("dilations");
    pads_ = n.attrs.get_ints("pads");
    auto_pad_ = n.attrs.get_string("auto_pad", "NOTSET");
    const Value& w = g.value(n.inputs[1]);
    if (!w.is_constant() || w.data->dtype() != DType::Float32)
      throw Error("fused Conv '" + n.name + "': weights are not constant float32");
    w_dims_ = w.data->dims();
    weights_ = w.data->to_floats();
    bool has_bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
    if (has_bias) {
      if (!g.value(n.inputs[2]).is_constant())
        throw Error("fused Conv '" + n.name + "': bias is not constant");
      bias_ = g.value(n.inputs[2]).data->to_floats();
    } else {
      bias_.assign(static_cast<std::size_t>(w_dims_.at(0)), 0.f);
    }
    if (plan.bn != kNoNode) {
      const Node& bn = g.node(plan.bn);
      auto f = [&](int i) {
        return g.value(bn.inputs[static_cast<std::size_t>(i)]).data->to_floats();
      };
      auto folded = fold_bn_weights(weights_, w_dims_[0], bias_, f(1), f(2), f(3), f(4),
                                    bn.attrs.get_float("epsilon", 1e-5f));
      weights_ = std::move(folded.weights);
      bias_ = std::move(folded.bias);
    }
    for (const ConvPostOp& po : plan.post_ops) {
      if (po.kind != ConvPostOp::Kind::Fold) continue;
      auto c = constant_data(g, po.operand)->to_floats();
      if (c.size() != 1 && c.size() != bias_.size())
        throw Error("fused Conv '" + n.name + "': operand of '" + po.node +
                    "' does not match the output channels");
      fold_into(weights_, bias_, po.alg, c);
    }
    // Without Binary post-ops the epilogue runs as our own pass (conv_epilogue.h).
    std::vector<EpilogueOp> ops;
    bool own = true;
    for (const ConvPostOp& po : plan.post_ops) {
      if (po.kind == ConvPostOp::Kind::Fold) continue;
      EpilogueOp e;
      own = own && po.kind != ConvPostOp::Kind::Binary &&
            epilogue_op_for(po.alg, po.alpha, po.beta, &e);
      ops.push_back(e);
    }
    if (own) epilogue_.emplace(std::move(ops));
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::Float32 || x.rank() != w_dims_.size())
      throw Error("fused Conv step " + ctx.step_name() + ": unsupported input " + x.str());
    std::vector<std::vector<int64_t>> operand_dims;
    for (int i = 1; i < ctx.num_inputs(); ++i) operand_dims.push_back(ctx.in(i).dims());
    if (x.dims() != src_dims_ || operand_dims != operand_dims_) build(x.dims(), operand_dims);
    Tensor& y = ctx.output(0, DType::Float32, dst_dims_);
    if (depthwise_) {
      // The runtime's direct depthwise loop (oneDNN's is im2col+gemm on NCHW), on the
      // folded weights; the epilogue is always ours here.
      depthwise_conv2d(dw_, x.data<float>(), weights_.data(), bias_.data(), y.data<float>());
      residuals_.clear();
      for (int i = 1; i < ctx.num_inputs(); ++i) {
        const Tensor& r = ctx.in(i);
        if (r.dims() != y.dims())
          throw Error("fused Conv step " + ctx.step_name() + ": residual " + r.str() +
                      " does not match the output");
        residuals_.push_back(r.data<float>());
      }
      apply_epilogue(y, nullptr, ctx.threads());
      return;
    }
    if (blocked_) {
      run_blocked(ctx, x, y);
      return;
    }
    src_mem_.set_data_handle(const_cast<void*>(x.raw()));
    dst_mem_.set_data_handle(y.raw());
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src_mem_}, {DNNL_ARG_WEIGHTS, w_mem_}, {DNNL_ARG_DST, dst_mem_}};
    if (!epilogue_) args[DNNL_ARG_BIAS] = b_mem_;  // else the epilogue adds it
    // Step inputs after x: the Binary and Sum operands, in post-op order; operand_mems_
    // holds one memory per Binary.
    residuals_.clear();
    for (std::size_t k = 0, in = 1, b = 0; k < plan_.post_ops.size(); ++k) {
      const auto kind = plan_.post_ops[k].kind;
      if (kind == ConvPostOp::Kind::Sum) {
        const Tensor& r = ctx.in(static_cast<int>(in++));
        if (r.dims() != y.dims())
          throw Error("fused Conv step " + ctx.step_name() + ": residual " + r.str() +
                      " does not match the output");
        if (epilogue_)
          residuals_.push_back(r.data<float>());
        else if (r.raw() != y.raw())
          std::memcpy(y.raw(), r.raw(), y.byte_size());
      }
      if (kind != ConvPostOp::Kind::Binary) continue;
      operand_mems_[b].set_data_handle(const_cast<void*>(ctx.in(static_cast<int>(in++)).raw()));
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op_index_[k]) | DNNL_ARG_SRC_1] = operand_mems_[b];
      ++b;
    }
    prim_.execute(dnnl_stream(), args);
    dnnl_stream().wait();
    if (epilogue_) apply_epilogue(y, bias_.data(), ctx.threads());
  }

 private:
  void build(const std::vector<int64_t>& x, const std::vector<std::vector<int64_t>>& operands) {
    const std::size_t sp = x.size() - 2;
    auto at = [](const std::vector<int64_t>& v, std::size_t i, int64_t def) {
      return i < v.size() ? v[i] : def;
    };
    if (x[1] != w_dims_[1] * group_)
      throw Error("fused Conv: input channels do not match the weights");
    dnnl::memory::dims st(sp), dil(sp), pl(sp), pr(sp);
    std::vector<int64_t> out{x[0], w_dims_[0]};
    for (std::size_t i = 0; i < sp; ++i) {
      int64_t in = x[2 + i], s = at(strides_, i, 1), d = at(dilations_, i, 1);
      int64_t ek = (w_dims_[2 + i] - 1) * d + 1;
      int64_t p0 = at(pads_, i, 0), p1 = at(pads_, sp + i, 0);
      if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        int64_t o = (in + s - 1) / s, total = std::max<int64_t>(0, (o - 1) * s + ek - in);
        p0 = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        p1 = total - p0;
      } else if (auto_pad_ == "VALID") {
        p0 = p1 = 0;
      }
      int64_t o = (in + p0 + p1 - ek) / s + 1;
      if (o <= 0) throw Error("fused Conv: empty output");
      out.push_back(o);
      st[i] = s;
      dil[i] = d - 1;
      pl[i] = p0;
      pr[i] = p1;
    }
    src_dims_ = x;
    operand_dims_ = operands;
    dst_dims_ = out;
    depthwise_ = epilogue_ && sp == 2 && group_ > 1 && group_ == x[1] && w_dims_[0] == group_;
    if (!depthwise_ && try_blocked(x, out, st, dil, pl, pr, operands)) return;
    if (depthwise_) {
      dw_ = DepthwiseShape{x[0],       x[1],  x[2],  x[3],       out[2],     out[3], w_dims_[2],
                           w_dims_[3], st[0], st[1], dil[0] + 1, dil[1] + 1, pl[0],  pl[1]};
      return;
    }
    using dt = dnnl::memory::data_type;
    auto src_md = plain_f32_desc(x), dst_md = plain_f32_desc(out);
    std::vector<int64_t> wd = w_dims_;
    if (group_ > 1) {
      wd[0] /= group_;
      wd.insert(wd.begin(), group_);
    }
    dnnl::memory::desc w_any(to_dnnl(wd), dt::f32, dnnl::memory::format_tag::any);
    dnnl::memory::desc b_md({w_dims_[0]}, dt::f32, dnnl::memory::format_tag::a);
    dnnl::post_ops po;
    operand_mems_.clear();
    // Folded post-ops are in the weights already: the primitive's post-op indices
    // count only the others.
    int index = 0;
    post_op_index_.assign(plan_.post_ops.size(), -1);
    for (std::size_t k = 0, b = 0; k < plan_.post_ops.size(); ++k) {
      const ConvPostOp& p = plan_.post_ops[k];
      if (p.kind == ConvPostOp::Kind::Fold) continue;
      if (epilogue_) {
        b += p.kind == ConvPostOp::Kind::Sum;
        continue;
      }
      post_op_index_[k] = index++;
      if (p.kind == ConvPostOp::Kind::Eltwise) {
        po.append_eltwise(1.f, algorithm_of(p.alg), p.alpha, p.beta);
        continue;
      }
      if (p.kind == ConvPostOp::Kind::Sum) {
        ++b;
        po.append_sum(1.f);
        continue;
      }
      std::vector<int64_t> od = operands.at(b++);
      od.insert(od.begin(), out.size() - od.size(), 1);  // right-aligned broadcast
      auto md = plain_f32_desc(od);
      po.append_binary(algorithm_of(p.alg), md);
      operand_mems_.push_back(dnnl::memory(md, dnnl_engine(), DNNL_MEMORY_NONE));
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    auto desc =
        conv_forward_desc(src_md, w_any, epilogue_ ? nullptr : &b_md, dst_md, st, dil, pl, pr);
    auto pd = dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
    prim_ = dnnl::convolution_forward(pd);
    auto user_w = dnnl::memory(plain_f32_desc(wd), dnnl_engine(), weights_.data());
    if (pd.weights_desc() == user_w.get_desc()) {
      w_mem_ = user_w;
    } else {
      w_mem_ = dnnl::memory(pd.weights_desc(), dnnl_engine());
      dnnl::reorder(user_w, w_mem_).execute(dnnl_stream(), user_w, w_mem_);
      dnnl_stream().wait();
    }
    b_mem_ = dnnl::memory(b_md, dnnl_engine(), bias_.data());
    src_mem_ = dnnl::memory(src_md, dnnl_engine(), DNNL_MEMORY_NONE);
    dst_mem_ = dnnl::memory(dst_md, dnnl_engine(), DNNL_MEMORY_NONE);
  }

  // oneDNN's own blocked layouts (nChw16c...) let it pick its direct JIT convolution
  // which applies eltwise and sum post-ops in registers; on plain NCHW it falls back to
  // im2col + gemm. The price is a reorder of the input and of the output (and of a
  // residual, into the output block, as the sum post-op's operand). Taken for kernels
  // larger than 1x1 when the primitive oneDNN picks for "any" layouts is not a gemm
  // and there are no binary post-ops; false leaves the plain path.
  bool try_blocked(const std::vector<int64_t>& x, const std::vector<int64_t>& out,
                   const dnnl::memory::dims& st, const dnnl::memory::dims& dil,
                   const dnnl::memory::dims& pl, const dnnl::memory::dims& pr,
                   const std::vector<std::vector<int64_t>>& operands) {
    blocked_ = false;
    if (std::getenv("FX_CONV_PLAIN")) return false;
    // A 1x1 convolution on NCHW is a plain gemm already: reorders would only add two
    // passes over memory.
    int64_t taps = 1;
    for (std::size_t i = 2; i < w_dims_.size(); ++i) taps *= w_dims_[i];
    if (taps == 1) return false;
    for (const auto& p : plan_.post_ops)
      if (p.kind == ConvPostOp::Kind::Binary) return false;
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    std::vector<int64_t> wd = w_dims_;
    if (group_ > 1) {
      wd[0] /= group_;
      wd.insert(wd.begin(), group_);
    }
    dnnl::memory::desc src_any(to_dnnl(x), dt::f32, tag::any),
        dst_any(to_dnnl(out), dt::f32, tag::any), w_any(to_dnnl(wd), dt::f32, tag::any),
        b_md({w_dims_[0]}, dt::f32, tag::a);
    dnnl::post_ops po;
    for (const auto& p : plan_.post_ops) {
      if (p.kind == ConvPostOp::Kind::Eltwise)
        po.append_eltwise(1.f, algorithm_of(p.alg), p.alpha, p.beta);
      if (p.kind == ConvPostOp::Kind::Sum) po.append_sum(1.f);
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    auto desc = dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                dnnl::algorithm::convolution_direct, src_any, w_any,
                                                b_md, dst_any, st, dil, pl, pr);
    dnnl::convolution_forward::primitive_desc pd;
    try {
      pd = dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
    } catch (const dnnl::error&) {
      return false;
    }
    if (std::string(pd.impl_info_str()).find("gemm") != std::string::npos) return false;
    prim_ = dnnl::convolution_forward(pd);
    auto user_w = dnnl::memory(plain_f32_desc(wd), dnnl_engine(), weights_.data());
    w_mem_ = dnnl::memory(pd.weights_desc(), dnnl_engine());
    dnnl::reorder(user_w, w_mem_).execute(dnnl_stream(), user_w, w_mem_);
    dnnl_stream().wait();
    b_mem_ = dnnl::memory(b_md, dnnl_engine(), bias_.data());
    auto src_md = plain_f32_desc(x), dst_md = plain_f32_desc(out);
    src_mem_ = dnnl::memory(src_md, dnnl_engine(), DNNL_MEMORY_NONE);
    dst_mem_ = dnnl::memory(dst_md, dnnl_engine(), DNNL_MEMORY_NONE);
    res_mem_ = dnnl::memory(dst_md, dnnl_engine(), DNNL_MEMORY_NONE);
    src_reorder_.reset();
    if (pd.src_desc() != src_md) {
      src_blk_ = dnnl::memory(pd.src_desc(), dnnl_engine());
      src_reorder_ = dnnl::reorder(src_mem_, src_blk_);
    }
    dst_blk_ = dnnl::memory(pd.dst_desc(), dnnl_engine());
    dst_reorder_ = dnnl::reorder(dst_blk_, dst_mem_);
    res_reorder_ = dnnl::reorder(res_mem_, dst_blk_);
    (void)operands;
    blocked_ = true;
    return true;
  }

  void run_blocked(KernelContext& ctx, const Tensor& x, Tensor& y) {
    auto& s = dnnl_stream();
    src_mem_.set_data_handle(const_cast<void*>(x.raw()));
    dst_mem_.set_data_handle(y.raw());
    if (src_reorder_) src_reorder_->execute(s, src_mem_, src_blk_);
    for (int i = 1; i < ctx.num_inputs(); ++i) {  // the Sum operand (one at most)
      const Tensor& r = ctx.in(i);
      if (r.dims() != y.dims())
        throw Error("fused Conv step " + ctx.step_name() + ": residual " + r.str() +
                    " does not match the output");
      res_mem_.set_data_handle(const_cast<void*>(r.raw()));
      res_reorder_.execute(s, res_mem_, dst_blk_);
    }
    prim_.execute(s, {{DNNL_ARG_SRC, src_reorder_ ? src_blk_ : src_mem_},
                      {DNNL_ARG_WEIGHTS, w_mem_},
                      {DNNL_ARG_BIAS, b_mem_},
                      {DNNL_ARG_DST, dst_blk_}});
    dst_reorder_.execute(s, dst_blk_, dst_mem_);
    s.wait();
  }

  void apply_epilogue(Tensor& y, const float* bias, int threads) const {
    const auto& d = y.dims();
    int64_t spatial = 1;
    for (std::size_t i = 2; i < d.size(); ++i) spatial *= d[i];
    epilogue_->apply(y.data<float>(), d[0], d[1], spatial, bias, residuals_, threads);
  }

  ConvPostOpPlan plan_;
  int64_t group_ = 1;
  std::vector<int64_t> strides_, dilations_, pads_;
  std::string auto_pad_;
  std::vector<int64_t> w_dims_;
  std::vector<float> weights_, bias_;
  std::vector<int64_t> src_dims_, dst_dims_;
  std::vector<std::vector<int64_t>> operand_dims_;
  dnnl::primitive prim_;
  dnnl::memory w_mem_, b_mem_, src_mem_, dst_mem_;
  std::vector<dnnl::memory> operand_mems_;
  std::vector<int> post_op_index_;        // per plan post-op: its index in the primitive, -1 folded
  std::optional<ConvEpilogue> epilogue_;  // set: no oneDNN post-ops, this pass instead
  bool depthwise_ = false;                // runs runtime/depthwise_conv.h's loop
  bool blocked_ = false;                  // try_blocked()
  std::optional<dnnl::reorder> src_reorder_;
  dnnl::reorder dst_reorder_, res_reorder_;
  dnnl::memory src_blk_, dst_blk_, res_mem_;
  DepthwiseShape dw_{};
  std::vector<const float*> residuals_;
};

}  // namespace

std::shared_ptr<Kernel> make_fused_conv_kernel(const Graph& g, const ConvPostOpPlan& plan) {
  return std::make_shared<FusedConvKernel>(g, plan);
}

}  // namespace fx
