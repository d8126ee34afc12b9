// MatMul (batched, numpy-broadcast batch dims) and Gemm through oneDNN's matmul
// primitive. Constant right-hand sides (weights) are reordered once into the
// layout oneDNN prefers.

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/dnnl_util.h"
#include "runtime/elementwise_ops.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// One oneDNN matmul for fixed dims: src [.., M, K] x weights [.., K, N] (+ bias [1.., N]).
class MatmulPrim {
 public:
  // src/wei/dst descriptors as the user lays them out; `weights_const` lets oneDNN
  // choose the weights layout (reordered once from `w`).
  void build(const dnnl::memory::desc& src, const dnnl::memory::desc& wei,
             const dnnl::memory::desc* bias, const dnnl::memory::desc& dst, const Tensor& w,
             bool weights_const) {
    auto wdims = wei.dims();
    dnnl::memory::desc want = weights_const ? dnnl::memory::desc(wdims, dt::f32, tag::any) : wei;
    auto desc = bias ? dnnl::matmul::desc(src, want, *bias, dst) : dnnl::matmul::desc(src, want, dst);
    pd_ = dnnl::matmul::primitive_desc(desc, dnnl_engine());
    prim_ = dnnl::matmul(pd_);
    src_ = dnnl::memory(src, dnnl_engine(), DNNL_MEMORY_NONE);
    dst_ = dnnl::memory(dst, dnnl_engine(), DNNL_MEMORY_NONE);
    user_w_ = dnnl::memory(wei, dnnl_engine(), DNNL_MEMORY_NONE);
    if (bias) bias_ = dnnl::memory(*bias, dnnl_engine(), DNNL_MEMORY_NONE);
    weights_const_ = weights_const;
    if (pd_.weights_desc() != wei) {
      reordered_w_ = dnnl::memory(pd_.weights_desc(), dnnl_engine());
      reorder_ = dnnl::reorder(user_w_, reordered_w_);
    } else {
      reordered_w_ = dnnl::memory();
    }
    if (weights_const) set_weights(w);
  }
  void set_weights(const Tensor& w) {
    user_w_.set_data_handle(const_cast<void*>(w.raw()));
    if (reordered_w_) {
      reorder_.execute(dnnl_stream(), user_w_, reordered_w_);
      dnnl_stream().wait();
    }
  }
  void execute(const Tensor& a, const Tensor& w, const Tensor* bias, Tensor& y) {
    if (!weights_const_) set_weights(w);
    src_.set_data_handle(const_cast<void*>(a.raw()));
    dst_.set_data_handle(y.raw());
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src_},
        {DNNL_ARG_WEIGHTS, reordered_w_ ? reordered_w_ : user_w_},
        {DNNL_ARG_DST, dst_}};
    if (bias) {
      bias_.set_data_handle(const_cast<void*>(bias->raw()));
      args[DNNL_ARG_BIAS] = bias_;
    }
    prim_.execute(dnnl_stream(), args);
    dnnl_stream().wait();
  }

 private:
  dnnl::matmul::primitive_desc pd_;
  dnnl::primitive prim_;
  dnnl::memory src_, dst_, user_w_, reordered_w_, bias_;
  dnnl::reorder reorder_;
  bool weights_const_ = false;
};

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(const Graph& g, const Node& n) : b_const_(constant_input(g, n, 1).has_value()) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.in(0);
    const Tensor& b = ctx.in(1);
    if (a.dtype() != DType::Float32 || b.dtype() != DType::Float32) {
      throw Error("MatMul: only float32 is supported, got " + a.str() + " x " + b.str());
    }
    if (a.dims() != a_dims_ || b.dims() != b_dims_) build(a, b);
    Tensor& y = ctx.output(0, DType::Float32, out_dims_);
    if (y.numel() == 0) return;
    if (k_ == 0) {
      std::fill(y.data<float>(), y.data<float>() + y.numel(), 0.0f);
      return;
    }
    prim_.execute(a, b, nullptr, y);
  }

 private:
  void build(const Tensor& a, const Tensor& b) {
    if (a.rank() == 0 || b.rank() == 0) throw Error("MatMul: scalar operand");
    std::vector<int64_t> ad = a.dims(), bd = b.dims();
    bool vec_a = ad.size() == 1, vec_b = bd.size() == 1;
    if (vec_a) ad.insert(ad.begin(), 1);
    if (vec_b) bd.push_back(1);
    if (ad.back() != bd[bd.size() - 2]) {
      throw Error("MatMul: inner dims differ: " + a.str() + " x " + b.str());
    }
    std::size_t r = std::max(ad.size(), bd.size());
    ad.insert(ad.begin(), r - ad.size(), 1);
    bd.insert(bd.begin(), r - bd.size(), 1);
    std::vector<int64_t> yd(r);
    for (std::size_t i = 0; i + 2 < r; ++i) {
      if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) {
        throw Error("MatMul: batch dims do not broadcast: " + a.str() + " x " + b.str());
      }
      yd[i] = std::max(ad[i], bd[i]);
      if (ad[i] == 0 || bd[i] == 0) yd[i] = 0;
    }
    yd[r - 2] = ad[r - 2];
    yd[r - 1] = bd[r - 1];
    k_ = ad.back();
    out_dims_.clear();
    for (std::size_t i = 0; i < r; ++i) {
      if ((vec_a && i == r - 2) || (vec_b && i == r - 1)) continue;
      out_dims_.push_back(yd[i]);
    }
    a_dims_ = a.dims();
    b_dims_ = b.dims();
    if (dims_numel(yd) == 0 || k_ == 0) return;
    if (b.rank() == 2 && a.rank() >= 2) {
      // [..., M, K] x [K, N]: fold the batch dims into M, so that oneDNN sees 2-D
      // weights (for which it picks a blocked layout; 3-D ones stay plain).
      const int64_t m = dims_numel(ad) / k_, n = b.dims()[1];
      prim_.build(plain_f32_desc({m, k_}), plain_f32_desc(b.dims()), nullptr,
                  plain_f32_desc({m, n}), b, b_const_);
      return;
    }
    // oneDNN wants at least 2-D; batch dims of weights broadcast (1) are allowed.
    prim_.build(plain_f32_desc(ad), plain_f32_desc(bd), nullptr, plain_f32_desc(yd), b, b_const_);
  }

  bool b_const_;
  int64_t k_ = 0;
  std::vector<int64_t> a_dims_, b_dims_, out_dims_;
  MatmulPrim prim_;
};

class GemmKernel final : public Kernel {
 public:
  GemmKernel(const Graph& g, const Node& n)
      : alpha_(n.attrs.get_float("alpha", 1.0f)),
        beta_(n.attrs.get_float("beta", 1.0f)),
        trans_a_(n.attrs.get_int("transA", 0) != 0),
        trans_b_(n.attrs.get_int("transB", 0) != 0),
        b_const_(constant_input(g, n, 1).has_value()) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.in(0);
    const Tensor& b = ctx.in(1);
    const Tensor* c = ctx.input(2);
    if (a.dtype() != DType::Float32 || b.dtype() != DType::Float32 || a.rank() != 2 ||
        b.rank() != 2) {
      throw Error("Gemm: needs 2-D float32 operands, got " + a.str() + " x " + b.str());
    }
    int64_t m = trans_a_ ? a.dims()[1] : a.dims()[0], k = trans_a_ ? a.dims()[0] : a.dims()[1];
    int64_t kb = trans_b_ ? b.dims()[1] : b.dims()[0], n = trans_b_ ? b.dims()[0] : b.dims()[1];
    if (k != kb) throw Error("Gemm: inner dims differ: " + a.str() + " x " + b.str());
    bool bias = c && beta_ == 1.0f && c->numel() == n && (c->rank() == 1 || c->dims()[0] == 1);
    if (a.dims() != a_dims_ || b.dims() != b_dims_ || bias != bias_) {
      a_dims_ = a.dims();
      b_dims_ = b.dims();
      bias_ = bias;
      // Transposed operands are described by strides, not copied.
      dnnl::memory::desc amd({m, k}, dt::f32, trans_a_ ? dnnl::memory::dims{1, m} : dnnl::memory::dims{k, 1});
      dnnl::memory::desc bmd({k, n}, dt::f32, trans_b_ ? dnnl::memory::dims{1, k} : dnnl::memory::dims{n, 1});
      dnnl::memory::desc cmd({1, n}, dt::f32, tag::ab);
      if (m * n * k > 0) prim_.build(amd, bmd, bias ? &cmd : nullptr, plain_f32_desc({m, n}), b, b_const_);
    }
    Tensor& y = ctx.output(0, DType::Float32, {m, n});
    float* yp = y.data<float>();
    if (m * n == 0) return;
    if (k == 0) std::fill(yp, yp + m * n, 0.0f);
    else prim_.execute(a, b, bias ? c : nullptr, y);
    if (alpha_ != 1.0f) {
      const float al = alpha_;
      unary_map<float, float>(y, y, [al](float v) { return v * al; });
    }
    if (c && !bias && beta_ != 0.0f) {
      if (c->dtype() != DType::Float32) throw Error("Gemm: C must be float32");
      BroadcastRows<2> rows({&y.dims(), &c->dims()});
      if (rows.out_dims != y.dims()) throw Error("Gemm: C " + c->str() + " does not broadcast to " + y.str());
      const float be = beta_;
      binary_map<float, float>(rows, y, *c, y, [be](float v, float w) { return v + be * w; });
    }
  }

 private:
  float alpha_, beta_;
  bool trans_a_, trans_b_, b_const_, bias_ = false;
  std::vector<int64_t> a_dims_, b_dims_;
  MatmulPrim prim_;
};

}  // namespace

void register_matmul_kernels(KernelTable& t) {
  t["MatMul"] = [](const Graph& g, const Node& n) { return std::make_shared<MatMulKernel>(g, n); };
  t["Gemm"] = [](const Graph& g, const Node& n) { return std::make_shared<GemmKernel>(g, n); };
}

}  // namespace fx
