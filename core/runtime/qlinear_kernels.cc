// SPDX-License-Identifier: Apache-2.0
// QLinearConv, ConvInteger, QLinearMatMul and MatMulInteger. The integer work runs in
// Int8Conv / Int8MatMul (oneDNN int8 primitives where they fit, an exact loop
// otherwise); these kernels turn ONNX's inputs into their specs: weights with
// their zero points taken out, the requantization scale x_scale * w_scale / y_scale.
// A spec is rebuilt when the input dims or quantization parameters change, and on
// every run when the weights are not constant.

#include <memory>

#include "runtime/int8_conv.h"
#include "runtime/int8_matmul.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/quant_math.h"

namespace fx {

namespace {

// Where a Conv-like or MatMul-like op finds its inputs.
struct QuantInputs {
  int x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias;  // -1: the op has none
};
constexpr QuantInputs kQLinearConv{0, 1, 2, 3, 4, 5, 6, 7, 8};
constexpr QuantInputs kConvInteger{0, -1, 2, 1, -1, 3, -1, -1, -1};
constexpr QuantInputs kQLinearMatMul{0, 1, 2, 3, 4, 5, 6, 7, -1};
constexpr QuantInputs kMatMulInteger{0, -1, 2, 1, -1, 3, -1, -1, -1};

const Tensor* opt(const KernelContext& ctx, int i) {
  return i < 0 ? nullptr : ctx.input(i);
}

// Per-output-channel values of a parameter with 1 or `count` elements.
template <class T>
T per(const std::vector<T>& v, int64_t i) {
  return v[v.size() == 1 ? 0 : static_cast<std::size_t>(i)];
}

// The requantization: scale per output channel (empty for integer outputs), output
// type and zero point.
struct Requant {
  std::vector<float> scales;
  DType y_type = DType::Int32;
  int32_t y_zp = 0;
  bool operator==(const Requant&) const = default;
};

Requant requant_of(const KernelContext& ctx, const QuantInputs& in, int64_t channels,
                   const char* op) {
  Requant r;
  if (in.y_scale < 0) return r;
  const auto xs = scales_of(ctx.in(in.x_scale), op);
  const auto ws = scales_of(ctx.in(in.w_scale), op);
  const auto ys = scales_of(ctx.in(in.y_scale), op);
  if (xs.size() != 1 || ys.size() != 1) {
    throw Error(std::string(op) + ": input and output scales must be per tensor");
  }
  if (ws.size() != 1 && static_cast<int64_t>(ws.size()) != channels) {
    throw Error(std::string(op) + ": " + std::to_string(ws.size()) + " weight scales for " +
                std::to_string(channels) + " output channels");
  }
  for (float w : ws) r.scales.push_back(xs[0] * w / ys[0]);
  const Tensor* yzp = opt(ctx, in.y_zp);
  r.y_type = yzp ? yzp->dtype() : DType::UInt8;
  if (!is_int8_type(r.y_type)) throw Error(std::string(op) + ": output must be uint8 or int8");
  r.y_zp = scalar_zero_point(yzp, op);
  return r;
}

// w - w_zero_point[channel], the channel being w's index / per_channel_stride.
std::vector<int32_t> centered_weights(const Tensor& w, const Tensor* zp, int64_t channels,
                                      int64_t channel_of_step, int64_t steps, const char* op) {
  if (!is_int8_type(w.dtype())) {
    throw Error(std::string(op) + ": weights must be uint8 or int8, got " + w.str());
  }
  const auto z = zero_points_of(zp, op);
  if (z.size() != 1 && static_cast<int64_t>(z.size()) != channels) {
    throw Error(std::string(op) + ": weight zero point " + zp->str() + " does not match " +
                std::to_string(channels) + " channels");
  }
  std::vector<int32_t> out(static_cast<std::size_t>(w.numel()));
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int32_t v =
        w.dtype() == DType::UInt8 ? int32_t{w.data<uint8_t>()[i]} : int32_t{w.data<int8_t>()[i]};
    out[i] = v - per(z, (i / channel_of_step) % steps);
  }
  return out;
}

class IntConvKernel final : public Kernel {
 public:
  IntConvKernel(const Graph& g, const Node& n, QuantInputs in, const char* op)
      : in_(in), op_(op), attrs_(n.attrs) {
    weights_constant_ = constant_input(g, n, static_cast<std::size_t>(in.w)).has_value();
  }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(in_.x);
    const Tensor& w = ctx.in(in_.w);
    if (!is_int8_type(x.dtype())) throw Error(std::string(op_) + ": input must be uint8 or int8");
    const int32_t xzp = scalar_zero_point(opt(ctx, in_.x_zp), op_);
    const int64_t m = w.rank() ? w.dims()[0] : 0;
    Requant r = requant_of(ctx, in_, m, op_);
    const Tensor* b = opt(ctx, in_.bias);
    if (!conv_ || !weights_constant_ || x.dims() != x_dims_ || x.dtype() != x_type_ ||
        xzp != x_zp_ || !(r == requant_) || (b != nullptr) != has_bias_) {
      Int8ConvSpec s;
      s.x_dims = x.dims();
      s.w_dims = w.dims();
      set_conv_geometry(s, attrs_);
      s.x_type = x.dtype();
      s.x_zero_point = xzp;
      const int64_t per_oc = m ? w.numel() / m : 1;
      s.weights = centered_weights(w, opt(ctx, in_.w_zp), m, per_oc, m, op_);
      if (b) {
        if (b->dtype() != DType::Int32) throw Error(std::string(op_) + ": bias must be int32");
        s.bias.assign(b->data<int32_t>(), b->data<int32_t>() + b->numel());
      }
      s.scales = r.scales;
      s.y_type = r.y_type;
      s.y_zero_point = r.y_zp;
      conv_ = std::make_unique<Int8Conv>(std::move(s), ctx.threads());
      x_dims_ = x.dims(), x_type_ = x.dtype(), x_zp_ = xzp, requant_ = r, has_bias_ = b != nullptr;
    }
    Tensor& y = ctx.output(0, r.y_type, conv_->y_dims());
    conv_->run(x.raw(), y.raw(), ctx.threads());
  }

 private:
  QuantInputs in_;
  const char* op_;
  Attributes attrs_;
  bool weights_constant_ = false;
  std::unique_ptr<Int8Conv> conv_;
  std::vector<int64_t> x_dims_;
  DType x_type_ = DType::Undefined;
  int32_t x_zp_ = 0;
  Requant requant_;
  bool has_bias_ = false;
};

// Numpy-style matmul of integer tensors with per-row (a) and per-column (b) zero
// points and scales, exact; the general case behind the oneDNN fast path.
void matmul_reference(const Tensor& a, const Tensor& b, const std::vector<int32_t>& azp,
                      const std::vector<int32_t>& bzp, const std::vector<float>& row_scale,
                      const std::vector<float>& col_scale, const Requant& r, Tensor& y) {
  std::vector<int64_t> ad = a.dims(), bd = b.dims();
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  std::vector<int64_t> a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
  const auto batch = broadcast_dims({&a_batch, &b_batch});
  const int64_t nb = dims_numel(batch);
  auto offset = [&](const std::vector<int64_t>& own, int64_t idx) {  // broadcast batch offset
    int64_t off = 0, stride = 1;
    for (std::size_t i = 0; i < own.size(); ++i) {
      const std::size_t d = own.size() - 1 - i, bdim = batch.size() - 1 - i;
      int64_t rest = idx;
      for (std::size_t j = batch.size() - 1; j > bdim; --j) rest /= batch[j];
      const int64_t coord = own[d] == 1 ? 0 : rest % batch[bdim];
      off += coord * stride;
      stride *= own[d];
    }
    return off;
  };
  auto val = [](const Tensor& t, int64_t i) -> int32_t {
    return t.dtype() == DType::UInt8 ? int32_t{t.data<uint8_t>()[i]} : int32_t{t.data<int8_t>()[i]};
  };
  for (int64_t bi = 0; bi < nb; ++bi) {
    const int64_t ao = offset(a_batch, bi) * m * k, bo = offset(b_batch, bi) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          acc += int64_t{val(a, ao + i * k + kk) - per(azp, i)} *
                 (val(b, bo + kk * n + j) - per(bzp, j));
        }
        const int64_t o = (bi * m + i) * n + j;
        if (r.y_type == DType::Int32) {
          y.data<int32_t>()[o] = static_cast<int32_t>(acc);
        } else {
          const float scale = per(row_scale, i) * per(col_scale, j);
          store_quantized(r.y_type, y.raw(), o, static_cast<float>(acc) * scale, r.y_zp);
        }
      }
  }
}

std::vector<int64_t> matmul_out_dims(const Tensor& a, const Tensor& b) {
  if (a.rank() == 0 || b.rank() == 0) throw Error("matmul of a scalar");
  std::vector<int64_t> ad = a.dims(), bd = b.dims();
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  if (ad.back() != bd[bd.size() - 2]) {
    throw Error("matmul inner dims differ: " + a.str() + " * " + b.str());
  }
  std::vector<int64_t> a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
  auto out = broadcast_dims({&a_batch, &b_batch});
  if (a.rank() > 1) out.push_back(ad[ad.size() - 2]);
  if (b.rank() > 1) out.push_back(bd.back());
  return out;
}

class IntMatMulKernel final : public Kernel {
 public:
  IntMatMulKernel(const Graph& g, const Node& n, QuantInputs in, const char* op)
      : in_(in), op_(op) {
    weights_constant_ = constant_input(g, n, static_cast<std::size_t>(in.w)).has_value();
  }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.in(in_.x);
    const Tensor& b = ctx.in(in_.w);
    if (!is_int8_type(a.dtype()) || !is_int8_type(b.dtype())) {
      throw Error(std::string(op_) + ": inputs must be uint8 or int8, got " + a.str() + " and " +
                  b.str());
    }
    const auto out_dims = matmul_out_dims(a, b);
    const int64_t n = b.rank() > 1 ? b.dims().back() : 1, k = a.dims().back();
    const auto azp = zero_points_of(opt(ctx, in_.x_zp), op_);
    const Tensor* bzp_t = opt(ctx, in_.w_zp);
    const auto bzp = zero_points_of(bzp_t, op_);
    Requant r;
    std::vector<float> row_scale{1.f}, col_scale{1.f};
    if (in_.y_scale >= 0) {  // QLinearMatMul: a's scale may be per row, b's per column
      row_scale = scales_of(ctx.in(in_.x_scale), op_);
      col_scale = scales_of(ctx.in(in_.w_scale), op_);
      const float ys = scales_of(ctx.in(in_.y_scale), op_).at(0);
      for (float& s : row_scale) s /= ys;
      const Tensor* yzp = opt(ctx, in_.y_zp);
      r.y_type = yzp ? yzp->dtype() : DType::UInt8;
      if (!is_int8_type(r.y_type)) throw Error(std::string(op_) + ": output must be uint8 or int8");
      r.y_zp = scalar_zero_point(yzp, op_);
      if (row_scale.size() == 1)
        for (float c : col_scale) r.scales.push_back(row_scale[0] * c);
    }
    const int64_t m = a.rank() > 1 ? a.dims()[a.rank() - 2] : 1;
    auto check = [&](std::size_t size, int64_t want, const char* what) {
      if (size != 1 && static_cast<int64_t>(size) != want) {
        throw Error(std::string(op_) + ": " + what + " has " + std::to_string(size) +
                    " values for " + std::to_string(want));
      }
    };
    check(azp.size(), m, "a's zero point");
    check(row_scale.size(), m, "a's scale");
    check(bzp.size(), n, "b's zero point");
    check(col_scale.size(), n, "b's scale");
    Tensor& y = ctx.output(0, r.y_type, out_dims);
    if (y.numel() == 0) return;
    const bool per_row = azp.size() != 1 || row_scale.size() != 1;
    if (b.rank() != 2 || per_row) {
      matmul_reference(a, b, azp, bzp, row_scale, col_scale, r, y);
      return;
    }
    if (!mm_ || !weights_constant_ || a.numel() / k != m_ || a.dtype() != a_type_ ||
        azp[0] != a_zp_ || !(r == requant_)) {
      Int8MatMulSpec s;
      s.m = a.numel() / k, s.k = k, s.n = n;
      s.a_type = a.dtype();
      s.a_zero_point = azp[0];
      s.b = centered_weights(b, bzp_t, n, 1, n, op_);
      s.scales = r.scales;
      s.y_type = r.y_type;
      s.y_zero_point = r.y_zp;
      mm_ = std::make_unique<Int8MatMul>(std::move(s), ctx.threads());
      m_ = a.numel() / k, a_type_ = a.dtype(), a_zp_ = azp[0], requant_ = r;
    }
    mm_->run(a.raw(), y.raw(), ctx.threads());
  }

 private:
  QuantInputs in_;
  const char* op_;
  bool weights_constant_ = false;
  std::unique_ptr<Int8MatMul> mm_;
  int64_t m_ = -1;
  DType a_type_ = DType::Undefined;
  int32_t a_zp_ = 0;
  Requant requant_;
};

}  // namespace

void register_qlinear_kernels(KernelTable& t) {
  t["QLinearConv"] = [](const Graph& g, const Node& n) {
    return std::make_shared<IntConvKernel>(g, n, kQLinearConv, "QLinearConv");
  };
  t["ConvInteger"] = [](const Graph& g, const Node& n) {
    return std::make_shared<IntConvKernel>(g, n, kConvInteger, "ConvInteger");
  };
  t["QLinearMatMul"] = [](const Graph& g, const Node& n) {
    return std::make_shared<IntMatMulKernel>(g, n, kQLinearMatMul, "QLinearMatMul");
  };
  t["MatMulInteger"] = [](const Graph& g, const Node& n) {
    return std::make_shared<IntMatMulKernel>(g, n, kMatMulInteger, "MatMulInteger");
  };
}

}  // namespace fx
