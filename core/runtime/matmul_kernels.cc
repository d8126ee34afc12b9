// SPDX-License-Identifier: Apache-2.0
// MatMul (batched, numpy-broadcast batch dims) and Gemm through oneDNN's matmul
// primitive, split into parts that run side by side (runtime/dnnl_parts.h).
// Constant right-hand sides (weights) are reordered once into the layout oneDNN
// prefers, each part its own slice.

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/dnnl_parts.h"
#include "runtime/dnnl_util.h"
#include "runtime/elementwise_ops.h"
#include "runtime/gemv.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// A matmul as parts (runtime/dnnl_parts.h). Operands are run tensors 0 (A),
// 1 (weights), 2 (bias), 3 (dst); offsets are in floats.
class MatmulParts {
 public:
  void clear() { parts_.clear(); }
  // One part: A slice `a` at a_off, weights slice `w` at w_off (reordered once into
  // oneDNN's preferred layout when `w_const` is given), optional bias, dst slice.
  void add(const dnnl::memory::desc& a, int64_t a_off, const dnnl::memory::desc& w, int64_t w_off,
           const Tensor* w_const, const dnnl::memory::desc* bias, int64_t bias_off,
           const dnnl::memory::desc& dst, int64_t dst_off) {
    dnnl::memory::desc want = w_const ? dnnl::memory::desc(w.dims(), dt::f32, tag::any) : w;
    auto desc = bias ? dnnl::matmul::desc(a, want, *bias, dst) : dnnl::matmul::desc(a, want, dst);
    dnnl::matmul::primitive_desc pd(desc, part_attr(), dnnl_engine());
    std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, a}, {DNNL_ARG_DST, dst}};
    std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, a_off * 4}, {DNNL_ARG_DST, 3, dst_off * 4}};
    if (!w_const) {
      descs.push_back({DNNL_ARG_WEIGHTS, w});
      binds.push_back({DNNL_ARG_WEIGHTS, 1, w_off * 4});
    }
    if (bias) {
      descs.push_back({DNNL_ARG_BIAS, *bias});
      binds.push_back({DNNL_ARG_BIAS, 2, bias_off * 4});
    }
    DnnlPart part = make_part(pd, descs, std::move(binds));
    if (w_const) {
      part.args[DNNL_ARG_WEIGHTS] =
          reorder_weights(w, w_const->data<float>() + w_off, pd.weights_desc());
    }
    parts_.push_back(std::move(part));
  }
  void execute(const Tensor& a, const Tensor& w, const Tensor* bias, Tensor& y, int threads) {
    run_parts(parts_,
              {const_cast<void*>(a.raw()), const_cast<void*>(w.raw()),
               bias ? const_cast<void*>(bias->raw()) : nullptr, y.raw()},
              threads);
  }

 private:
  std::vector<DnnlPart> parts_;
};

// Smallest slice worth a part: about 256K multiply-adds (a GEMV over a large
// weight matrix is memory-bound: two threads stream it faster).
int64_t min_slice(int64_t macs_per_unit) {
  return std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(macs_per_unit, 1));
}

dnnl::memory::desc strided(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  return dnnl::memory::desc(to_dnnl(dims), dt::f32, to_dnnl(strides));
}

class MatMulKernel final : public Kernel {
 public:
  MatMulKernel(const Graph& g, const Node& n) : b_const_(constant_input(g, n, 1).has_value()) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.in(0);
    const Tensor& b = ctx.in(1);
    if (a.dtype() != DType::Float32 || b.dtype() != DType::Float32) {
      throw Error("MatMul: only float32 is supported, got " + a.str() + " x " + b.str());
    }
    if (a.dims() != a_dims_ || b.dims() != b_dims_) build(a, b, ctx.threads());
    Tensor& y = ctx.output(0, DType::Float32, out_dims_);
    if (y.numel() == 0) return;
    if (k_ == 0) {
      std::fill(y.data<float>(), y.data<float>() + y.numel(), 0.0f);
      return;
    }
    prim_.execute(a, b, nullptr, y, ctx.threads());
  }

 private:
  void build(const Tensor& a, const Tensor& b, int threads) {
    prim_.clear();
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
      if (b_const_) {  // split the columns: each part owns its slice of the weights
        for (auto [n0, n1] : split_range(n, threads, min_slice(m * k_))) {
          prim_.add(plain_f32_desc({m, k_}), 0, strided({k_, n1 - n0}, {n, 1}), n0, &b, nullptr, 0,
                    strided({m, n1 - n0}, {n, 1}), n0);
        }
      } else {  // split the rows
        for (auto [m0, m1] : split_range(m, threads, min_slice(n * k_))) {
          prim_.add(plain_f32_desc({m1 - m0, k_}), m0 * k_, plain_f32_desc(b.dims()), 0, nullptr,
                    nullptr, 0, plain_f32_desc({m1 - m0, n}), m0 * n);
        }
      }
      return;
    }
    // Same batch dims on both sides: fold them into one and split over it.
    bool same_batch = r >= 3;
    for (std::size_t i = 0; i + 2 < r; ++i) same_batch = same_batch && ad[i] == bd[i];
    if (same_batch) {
      const int64_t m = ad[r - 2], n = bd[r - 1];
      const int64_t batch = dims_numel(yd) / (m * n);
      for (auto [b0, b1] : split_range(batch, threads, min_slice(m * n * k_))) {
        const int64_t nb = b1 - b0;
        prim_.add(plain_f32_desc({nb, m, k_}), b0 * m * k_, plain_f32_desc({nb, k_, n}),
                  b0 * k_ * n, nullptr, nullptr, 0, plain_f32_desc({nb, m, n}), b0 * m * n);
      }
      return;
    }
    // oneDNN wants at least 2-D; batch dims of weights broadcast (1) are allowed.
    prim_.add(plain_f32_desc(ad), 0, plain_f32_desc(bd), 0, nullptr, nullptr, 0, plain_f32_desc(yd),
              0);
  }

  bool b_const_;
  int64_t k_ = 0;
  std::vector<int64_t> a_dims_, b_dims_, out_dims_;
  MatmulParts prim_;
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
    // C as a bias vector: [n] or [1, n], added after alpha scales the product.
    const bool c_row =
        c && beta_ == 1.0f && c->numel() == n && (c->rank() == 1 || c->dims()[0] == 1);
    if (m == 1 && b_const_ && k > 0 && n > 0 && c_row == (c != nullptr) &&
        (!c || c->dtype() == DType::Float32)) {
      run_gemv(a, b, c, k, n, ctx);
      return;
    }
    // oneDNN adds the bias before our alpha pass: only with alpha 1.
    bool bias = c_row && alpha_ == 1.0f;
    if (a.dims() != a_dims_ || b.dims() != b_dims_ || bias != bias_) {
      a_dims_ = a.dims();
      b_dims_ = b.dims();
      bias_ = bias;
      // Transposed operands are described by strides, not copied. Parts split the
      // columns of the output (rows of B when transposed).
      prim_.clear();
      dnnl::memory::dims a_str = trans_a_ ? dnnl::memory::dims{1, m} : dnnl::memory::dims{k, 1};
      dnnl::memory::desc amd({m, k}, dt::f32, a_str);
      if (m * n * k > 0) {
        for (auto [n0, n1] : split_range(n, ctx.threads(), min_slice(m * k))) {
          const int64_t np = n1 - n0;
          auto bmd = trans_b_ ? strided({k, np}, {1, k}) : strided({k, np}, {n, 1});
          dnnl::memory::desc cmd({1, np}, dt::f32, tag::ab);
          prim_.add(amd, 0, bmd, trans_b_ ? n0 * k : n0, b_const_ ? &b : nullptr,
                    bias ? &cmd : nullptr, n0, strided({m, np}, {n, 1}), n0);
        }
      }
    }
    Tensor& y = ctx.output(0, DType::Float32, {m, n});
    float* yp = y.data<float>();
    if (m * n == 0) return;
    if (k == 0)
      std::fill(yp, yp + m * n, 0.0f);
    else
      prim_.execute(a, b, bias ? c : nullptr, y, ctx.threads());
    if (alpha_ != 1.0f) {
      const float al = alpha_;
      unary_map<float, float>(y, y, [al](float v) { return v * al; });
    }
    if (c && !bias && beta_ != 0.0f) {
      if (c->dtype() != DType::Float32) throw Error("Gemm: C must be float32");
      BroadcastRows<2> rows({&y.dims(), &c->dims()});
      if (rows.out_dims != y.dims())
        throw Error("Gemm: C " + c->str() + " does not broadcast to " + y.str());
      const float be = beta_;
      binary_map<float, float>(rows, y, *c, y, [be](float v, float w) { return v + be * w; });
    }
  }

 private:
  // A single row against constant weights: our GEMV (runtime/gemv.h) over the rows of
  // B^T, which are B's rows when transposed, else a copy transposed once.
  void run_gemv(const Tensor& a, const Tensor& b, const Tensor* c, int64_t k, int64_t n,
                KernelContext& ctx) {
    if (!trans_b_ && (b.dims() != packed_dims_ || packed_.empty())) {
      const float* bp = b.data<float>();
      packed_.resize(static_cast<std::size_t>(n * k));
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) packed_[j * k + i] = bp[i * n + j];
      packed_dims_ = b.dims();
    }
    Tensor& y = ctx.output(0, DType::Float32, {1, n});
    gemv_rows(a.data<float>(), trans_b_ ? b.data<float>() : packed_.data(),
              c ? c->data<float>() : nullptr, alpha_, n, k, y.data<float>());
  }

  float alpha_, beta_;
  bool trans_a_, trans_b_, b_const_, bias_ = false;
  std::vector<float> packed_;
  std::vector<int64_t> packed_dims_;
  std::vector<int64_t> a_dims_, b_dims_;
  MatmulParts prim_;
};

}  // namespace

void register_matmul_kernels(KernelTable& t) {
  t["MatMul"] = [](const Graph& g, const Node& n) { return std::make_shared<MatMulKernel>(g, n); };
  t["Gemm"] = [](const Graph& g, const Node& n) { return std::make_shared<GemmKernel>(g, n); };
}

}  // namespace fx
