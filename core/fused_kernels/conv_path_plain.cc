// SPDX-License-Identifier: Apache-2.0
// The plain path (conv_path.h): NCHW in and out. With Binary post-ops one oneDNN
// primitive with every post-op; else the convolution as parts over the runtime's pool
// (runtime/conv_parts.h: channels-last inside where oneDNN prefers it, else split over
// output channels or groups) and the bias and epilogue as our pass after it
// (conv_epilogue.h).

#include <cstring>
#include <unordered_map>

#include "fused_kernels/conv_path.h"
#include "runtime/conv_parts.h"
#include "runtime/dnnl_util.h"

namespace fx {

namespace {

using dt = dnnl::memory::data_type;

class PlainConvPath final : public ConvPath {
 public:
  PlainConvPath(const ConvPrep& p, const std::vector<int64_t>& x, const ConvGeometry& geo,
                const OperandDims& operands, int threads)
      : p_(p), dst_dims_(geo.out) {
    const auto& out = geo.out;
    const bool own = p.epilogue.has_value();
    if (own) {
      ConvPartsSpec spec;
      spec.x = x, spec.w = p.w_dims, spec.out = out, spec.group = p.group;
      spec.strides = geo.st, spec.dil = geo.dil, spec.pl = geo.pl, spec.pr = geo.pr;
      spec.weights = p.weights.data();
      parts_ = std::make_unique<ConvParts>(spec, threads);
      return;
    }
    auto src_md = plain_f32_desc(x), dst_md = plain_f32_desc(out);
    std::vector<int64_t> wd = dnnl_conv_weight_dims(p.w_dims, p.group);
    dnnl::memory::desc w_any(to_dnnl(wd), dt::f32, dnnl::memory::format_tag::any);
    dnnl::memory::desc b_md({p.w_dims[0]}, dt::f32, dnnl::memory::format_tag::a);
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
        po.append_eltwise(1.f, conv_post_op_algorithm(q.alg), q.alpha, q.beta);
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
      po.append_binary(conv_post_op_algorithm(q.alg), md);
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

  bool reads_nhwc() const override { return false; }

  void run(const ConvRunArgs& a) override {
    KernelContext& ctx = a.ctx;
    const Tensor* r = a.residual;
    void* out = a.out;
    const bool own = p_.epilogue.has_value();
    std::vector<const float*> res;
    if (r) {
      // NHWC residual (the layout plan) into NCHW first.
      const void* rin = r->raw();
      if (a.layouts.sum) rin = a.residual_convert.into_buffer(*r, ctx.threads());
      if (own)
        res.push_back(static_cast<const float*>(rin));
      else if (rin != out)
        std::memcpy(out, rin, r->byte_size());  // the sum post-op accumulates onto it
    }
    if (parts_) {
      parts_->run(a.x, nullptr, nullptr, out, a.threads);
      apply_conv_epilogue(p_, dst_dims_, static_cast<float*>(out), p_.bias.data(), res);
      return;
    }
    src_mem_.set_data_handle(const_cast<void*>(a.x));
    dst_mem_.set_data_handle(out);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src_mem_}, {DNNL_ARG_WEIGHTS, w_mem_}, {DNNL_ARG_DST, dst_mem_}};
    if (!own) args[DNNL_ARG_BIAS] = b_mem_;  // else the epilogue adds it
    // Step inputs after x: the Binary and Sum operands, in post-op order; operand_mems_
    // holds one memory per Binary.
    for (std::size_t k = 0, in = 1, b = 0; k < p_.plan.post_ops.size(); ++k) {
      const auto kind = p_.plan.post_ops[k].kind;
      if (kind == ConvPostOp::Kind::Sum) ++in;
      if (kind != ConvPostOp::Kind::Binary) continue;
      operand_mems_[b].set_data_handle(const_cast<void*>(ctx.in(static_cast<int>(in++)).raw()));
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op_index_[k]) | DNNL_ARG_SRC_1] = operand_mems_[b];
      ++b;
    }
    prim_.execute(dnnl_stream(), args);
    dnnl_stream().wait();
    if (own) apply_conv_epilogue(p_, dst_dims_, static_cast<float*>(out), p_.bias.data(), res);
  }

 private:
  const ConvPrep& p_;
  std::vector<int64_t> dst_dims_;
  dnnl::primitive prim_;
  dnnl::memory w_mem_, b_mem_, src_mem_, dst_mem_;
  std::vector<dnnl::memory> operand_mems_;
  std::vector<int> post_op_index_;    // per plan post-op: its index in the primitive, -1 none
  std::unique_ptr<ConvParts> parts_;  // set: without Binary post-ops, the convolution alone
};

}  // namespace

std::unique_ptr<ConvPath> make_plain_conv_path(const ConvPrep& p, const std::vector<int64_t>& x,
                                               const ConvGeometry& geo, const OperandDims& operands,
                                               int threads) {
  return std::make_unique<PlainConvPath>(p, x, geo, operands, threads);
}

}  // namespace fx
