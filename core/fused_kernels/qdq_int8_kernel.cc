// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/qdq_int8_kernel.h"

#include <algorithm>
#include <limits>

#include "runtime/int8_conv.h"
#include "runtime/int8_matmul.h"
#include "runtime/kernel_registry.h"
#include "runtime/parallel.h"
#include "runtime/quant_math.h"
#include "util/error.h"

namespace fx {

namespace {

ValueId in(const Graph& g, NodeId n, std::size_t i) {
  const Node& node = g.node(n);
  return i < node.inputs.size() ? node.inputs[i] : kNoValue;
}

NodeId producer_if(const Graph& g, ValueId v, const char* op) {
  if (v == kNoValue) return kNoNode;
  NodeId p = g.value(v).producer;
  return p != kNoNode && g.node(p).op_type == op ? p : kNoNode;
}

// An initializer (or absent optional input) as a Tensor view; throws when the value is
// computed.
std::optional<Tensor> constant(const Graph& g, ValueId v, const char* what) {
  if (v == kNoValue) return std::nullopt;
  const Value& val = g.value(v);
  if (!val.is_constant() || val.producer != kNoNode) {
    throw Error(std::string("QDQ group: ") + what + " '" + val.name + "' is not an initializer");
  }
  return Tensor::from_data(val.data);
}

// A DequantizeLinear's parameters: values per channel (or one), and the axis.
struct DqParams {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
};

DqParams dq_params(const Graph& g, NodeId dq) {
  DqParams p;
  p.scale = scales_of(*constant(g, in(g, dq, 1), "scale"), "QDQ group");
  auto zp = constant(g, in(g, dq, 2), "zero point");
  p.zero_point = zp ? zero_points_of(&*zp, "QDQ group") : std::vector<int32_t>(p.scale.size(), 0);
  if (p.zero_point.size() != p.scale.size()) throw Error("QDQ group: zero point and scale differ");
  return p;
}

float at(const std::vector<float>& v, int64_t i) {
  return v[v.size() == 1 ? 0 : static_cast<std::size_t>(i)];
}

// What every form needs: x's and the output's parameters, the relu.
struct Common {
  DType y_type = DType::UInt8;
  float x_scale = 1, y_scale = 1;
  int32_t x_zp = 0, y_zp = 0;
};

class QdqInt8Kernel final : public Kernel {
 public:
  QdqInt8Kernel(const Graph& g, const QdqInt8Plan& p) : plan_(p), anchor_(g.node(p.anchor)) {
    DqParams xp = dq_params(g, p.dq_x), yp = dq_params(g, p.q);
    if (xp.scale.size() != 1 || yp.scale.size() != 1)
      throw Error("QDQ group: activation quantization must be per tensor");
    c_.x_scale = xp.scale[0], c_.x_zp = xp.zero_point[0];
    c_.y_scale = yp.scale[0], c_.y_zp = yp.zero_point[0];
    auto yzp = constant(g, in(g, p.q, 2), "zero point");
    c_.y_type = yzp ? yzp->dtype() : DType::UInt8;
    if (!is_int8_type(c_.y_type)) throw Error("QDQ group: the output must be uint8 or int8");
    w_ = *constant(g, in(g, p.dq_w, 0), "weights");
    if (!is_int8_type(w_.dtype())) throw Error("QDQ group: weights must be int8 or uint8");
    wp_ = dq_params(g, p.dq_w);
    w_axis_ = g.node(p.dq_w).attrs.get_int("axis", 1);
    // The bias in float: a DequantizeLinear of an int32 initializer, or a float one.
    ValueId b = anchor_.op_type == "MatMul" ? kNoValue : in(g, p.anchor, 2);
    if (p.dq_b != kNoNode) {
      Tensor bq = *constant(g, in(g, p.dq_b, 0), "bias");
      DqParams bp = dq_params(g, p.dq_b);
      auto vals = bq.to_int64s();
      for (std::size_t i = 0; i < vals.size(); ++i) {
        const std::size_t c = bp.scale.size() == 1 ? 0 : i;
        bias_.push_back(static_cast<float>(vals[i] - bp.zero_point[c]) * bp.scale[c]);
      }
    } else if (b != kNoValue) {
      bias_ = constant(g, b, "bias")->to_floats();
    }
  }

  // A copy that reads x and writes its output in the memory orders given (a Conv's).
  std::shared_ptr<Kernel> with_layouts(bool x_nhwc, bool y_nhwc) const {
    auto k = std::make_shared<QdqInt8Kernel>(*this);
    k->built_ = false;
    k->conv_.reset();
    k->mm_.reset();
    k->x_nhwc_ = x_nhwc;
    k->y_nhwc_ = y_nhwc;
    return k;
  }
  // Whether the layout plan may hand it NHWC tensors: a 2-D convolution.
  bool conv_2d() const { return anchor_.op_type == "Conv" && w_.rank() == 4; }
  bool x_nhwc() const { return x_nhwc_; }
  bool y_nhwc() const { return y_nhwc_; }

  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    if (!built_ || x.dims() != x_dims_ || x.dtype() != x_type_) build(x, ctx.threads());
    if (conv_) {
      Tensor& y = ctx.output(0, c_.y_type, conv_->y_dims());
      conv_->run(x.raw(), y.raw(), ctx.threads(), x_nhwc_, y_nhwc_);
    } else {
      Tensor& y = ctx.output(0, c_.y_type, y_dims_);
      mm_->run(x.raw(), y.raw(), ctx.threads());
    }
  }

 private:
  void build(const Tensor& x, int threads) {
    if (!is_int8_type(x.dtype()))
      throw Error("QDQ group: input must be uint8 or int8, got " + x.str());
    x_type_ = x.dtype();
    x_dims_ = x.dims();
    if (anchor_.op_type == "Conv") {
      build_conv(x, threads);
    } else {
      build_matmul(x, threads);
    }
    built_ = true;
  }

  void build_conv(const Tensor& x, int threads) {
    Int8ConvSpec s;
    s.x_dims = x.dims();
    s.w_dims = w_.dims();
    set_conv_geometry(s, anchor_.attrs);
    const int64_t m = w_.dims()[0], per_oc = w_.numel() / std::max<int64_t>(m, 1);
    if (wp_.scale.size() != 1 && (w_axis_ != 0 || static_cast<int64_t>(wp_.scale.size()) != m))
      throw Error("QDQ Conv: weights must be quantized per tensor or per output channel");
    s.x_type = x.dtype();
    s.x_zero_point = c_.x_zp;
    auto wv = w_.to_int64s();
    s.weights.resize(wv.size());
    for (std::size_t i = 0; i < wv.size(); ++i) {
      const int64_t oc = static_cast<int64_t>(i) / per_oc;
      s.weights[i] = static_cast<int32_t>(wv[i]) - wp_.zero_point[wp_.scale.size() == 1 ? 0 : oc];
    }
    fill_requant(m, s.scales, s.bias);
    s.y_type = c_.y_type;
    s.y_zero_point = c_.y_zp;
    s.relu = plan_.relu != kNoNode;
    conv_ = std::make_shared<Int8Conv>(std::move(s), threads);
  }

  void build_matmul(const Tensor& x, int threads) {
    const bool gemm = anchor_.op_type == "Gemm";
    const bool trans_b = gemm && anchor_.attrs.get_int("transB", 0) != 0;
    if (w_.rank() != 2 || x.rank() < 1 || (gemm && x.rank() != 2))
      throw Error("QDQ " + anchor_.op_type + ": unsupported shapes " + x.str() + " * " + w_.str());
    const int64_t k = trans_b ? w_.dims()[1] : w_.dims()[0],
                  n = trans_b ? w_.dims()[0] : w_.dims()[1];
    if (x.dims().back() != k)
      throw Error("QDQ " + anchor_.op_type + ": inner dims differ: " + x.str() + " * " + w_.str());
    // The weight scales must be per output column: per tensor, or along N.
    const int64_t n_axis = trans_b ? 0 : 1;
    if (wp_.scale.size() != 1 &&
        (normalize(w_axis_) != n_axis || static_cast<int64_t>(wp_.scale.size()) != n))
      throw Error("QDQ " + anchor_.op_type +
                  ": weights must be quantized per tensor or per column");
    Int8MatMulSpec s;
    s.m = x.numel() / k, s.k = k, s.n = n;
    s.a_type = x.dtype();
    s.a_zero_point = c_.x_zp;
    auto wv = w_.to_int64s();
    s.b.resize(wv.size());
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c) {
        const int64_t src = trans_b ? c * k + r : r * n + c;
        s.b[r * n + c] =
            static_cast<int32_t>(wv[src]) - wp_.zero_point[wp_.scale.size() == 1 ? 0 : c];
      }
    const float alpha = gemm ? anchor_.attrs.get_float("alpha", 1.f) : 1.f;
    const float beta = gemm ? anchor_.attrs.get_float("beta", 1.f) : 1.f;
    fill_requant(n, s.scales, s.bias, alpha, beta);
    s.y_type = c_.y_type;
    s.y_zero_point = c_.y_zp;
    s.relu = plan_.relu != kNoNode;
    y_dims_ = x.dims();
    y_dims_.back() = n;
    mm_ = std::make_shared<Int8MatMul>(std::move(s), threads);
  }

  int64_t normalize(int64_t axis) const { return axis < 0 ? axis + 2 : axis; }

  // scale[c] = x_scale * w_scale[c] * alpha / y_scale; the float bias in accumulator
  // units: beta * b[c] / (x_scale * w_scale[c] * alpha).
  void fill_requant(int64_t channels, std::vector<float>& scales, std::vector<float>& bias,
                    float alpha = 1.f, float beta = 1.f) const {
    if (!bias_.empty() && bias_.size() != 1 && static_cast<int64_t>(bias_.size()) != channels)
      throw Error("QDQ group: bias of " + std::to_string(bias_.size()) + " values for " +
                  std::to_string(channels) + " channels");
    for (int64_t c = 0; c < channels; ++c) {
      const float acc_scale = c_.x_scale * at(wp_.scale, c) * alpha;
      scales.push_back(acc_scale / c_.y_scale);
      if (!bias_.empty()) bias.push_back(beta * at(bias_, c) / acc_scale);
    }
  }

  QdqInt8Plan plan_;
  Node anchor_;
  Common c_;
  DType x_type_ = DType::Undefined;
  Tensor w_;
  DqParams wp_;
  int64_t w_axis_ = 1;
  std::vector<float> bias_;
  bool built_ = false;
  std::vector<int64_t> x_dims_, y_dims_;
  // Built for the first input seen (copies share them until they build their own).
  std::shared_ptr<Int8Conv> conv_;
  std::shared_ptr<Int8MatMul> mm_;
  bool x_nhwc_ = false, y_nhwc_ = false;
};

// Dequantize both operands, add, [relu,] quantize: per element, in the operations and
// order of the unfused DequantizeLinear, Add, Relu and QuantizeLinear kernels
// (runtime/quant_kernels.cc), so the result is theirs bit for bit.
class QdqAddKernel final : public Kernel {
 public:
  QdqAddKernel(const Graph& g, const QdqInt8Plan& p) : relu_(p.relu != kNoNode) {
    for (NodeId dq : {p.dq_x, p.dq_x2, p.q}) {
      DqParams d = dq_params(g, dq);
      if (d.scale.size() != 1) throw Error("QDQ Add: quantization must be per tensor");
      scale_.push_back(d.scale[0]);
      zp_.push_back(static_cast<float>(d.zero_point[0]));
    }
    auto yzp = constant(g, in(g, p.q, 2), "zero point");
    y_type_ = yzp ? yzp->dtype() : DType::UInt8;
    if (!is_int8_type(y_type_)) throw Error("QDQ Add: the output must be uint8 or int8");
  }

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.in(0);
    const Tensor& b = ctx.in(1);
    if (!is_int8_type(a.dtype()) || !is_int8_type(b.dtype()) || a.dims() != b.dims())
      throw Error("QDQ Add: operands must be 8-bit tensors of one shape, got " + a.str() + " and " +
                  b.str());
    Tensor& y = ctx.output(0, y_type_, a.dims());
    auto by_types = [&](auto* out) {
      auto with = [&](const auto* pa, const auto* pb) {
        parallel_for(a.numel(), 8, [&](int64_t i0, int64_t i1) { add(pa, pb, out, i0, i1); });
      };
      const bool ua = a.dtype() == DType::UInt8, ub = b.dtype() == DType::UInt8;
      if (ua && ub) with(a.data<uint8_t>(), b.data<uint8_t>());
      if (ua && !ub) with(a.data<uint8_t>(), b.data<int8_t>());
      if (!ua && ub) with(a.data<int8_t>(), b.data<uint8_t>());
      if (!ua && !ub) with(a.data<int8_t>(), b.data<int8_t>());
    };
    if (y_type_ == DType::UInt8) {
      by_types(y.data<uint8_t>());
    } else {
      by_types(y.data<int8_t>());
    }
  }

 private:
  template <class A, class B, class Q>
  void add(const A* a, const B* b, Q* y, int64_t i0, int64_t i1) const {
    constexpr int32_t lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
    constexpr float kRound = 12582912.f;  // 1.5 * 2^23, as quantize_block rounds
    const float sa = scale_[0], sb = scale_[1], sy = scale_[2];
    const float za = zp_[0], zb = zp_[1];
    const int32_t zy = static_cast<int32_t>(zp_[2]);
    // Locals only: the 8-bit stores may alias any member, which would keep the loop from
    // vectorizing. The Relu as a select against a floor: max(v, 0) with it, v without.
    const float floor = relu_ ? 0.f : -std::numeric_limits<float>::infinity();
    for (int64_t i = i0; i < i1; ++i) {
      float v = (static_cast<float>(a[i]) - za) * sa + (static_cast<float>(b[i]) - zb) * sb;
      v = v > floor ? v : floor;
      v = v / sy;
      v = v > -300.f ? v : -300.f;
      v = v < 300.f ? v : 300.f;
      const int32_t q = static_cast<int32_t>((v + kRound) - kRound) + zy;
      y[i] = static_cast<Q>(q < lo ? lo : (q > hi ? hi : q));
    }
  }

  bool relu_;
  DType y_type_ = DType::UInt8;
  std::vector<float> scale_, zp_;  // a, b, y
};

// MaxPool on the 8-bit values: the runtime's MaxPool kernel, which pools uint8 and
// int8 as they are. Equal to dequantize -> pool -> quantize because the two share
// scale and zero point (checked here) and dequantization is increasing.
std::shared_ptr<Kernel> qdq_max_pool_kernel(const Graph& g, const QdqInt8Plan& p) {
  DqParams x = dq_params(g, p.dq_x), y = dq_params(g, p.q);
  auto xz = constant(g, in(g, p.dq_x, 2), "zero point"),
       yz = constant(g, in(g, p.q, 2), "zero point");
  const DType xt = xz ? xz->dtype() : DType::UInt8, yt = yz ? yz->dtype() : DType::UInt8;
  if (x.scale.size() != 1 || x.scale != y.scale || x.zero_point != y.zero_point || xt != yt)
    throw Error(
        "QDQ MaxPool: the DequantizeLinear and QuantizeLinear differ in scale, zero point or type");
  return make_kernel(g, g.node(p.anchor));
}

}  // namespace

std::optional<QdqInt8Plan> plan_qdq_int8(const Graph& g, const std::vector<NodeId>& nodes,
                                         std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<QdqInt8Plan> {
    if (why) *why = w;
    return std::nullopt;
  };
  QdqInt8Plan p;
  for (NodeId n : nodes) {
    const std::string& op = g.node(n).op_type;
    if (op == "Conv" || op == "MatMul" || op == "Gemm" || op == "Add" || op == "MaxPool") {
      if (p.anchor != kNoNode) return fail("two anchors");
      p.anchor = n;
    } else if (op == "QuantizeLinear") {
      if (p.q != kNoNode) return fail("two QuantizeLinear");
      p.q = n;
    } else if (op == "Relu") {
      p.relu = n;
    } else if (op != "DequantizeLinear") {
      return fail("not a QDQ group: " + op);
    }
  }
  if (p.anchor == kNoNode || p.q == kNoNode)
    return fail("not a QDQ group (no anchor or no QuantizeLinear)");
  const std::string& anchor_op = g.node(p.anchor).op_type;
  const bool weighted = anchor_op != "Add" && anchor_op != "MaxPool";
  p.dq_x = producer_if(g, in(g, p.anchor, 0), "DequantizeLinear");
  if (weighted) p.dq_w = producer_if(g, in(g, p.anchor, 1), "DequantizeLinear");
  if (anchor_op == "Add") p.dq_x2 = producer_if(g, in(g, p.anchor, 1), "DequantizeLinear");
  if (weighted && anchor_op != "MatMul")
    p.dq_b = producer_if(g, in(g, p.anchor, 2), "DequantizeLinear");
  std::vector<NodeId> want{p.dq_x, p.anchor, p.q};
  for (NodeId n : {p.dq_w, p.dq_b, p.dq_x2, p.relu})
    if (n != kNoNode) want.push_back(n);
  if (p.dq_x == kNoNode || (weighted && p.dq_w == kNoNode) ||
      (anchor_op == "Add" && p.dq_x2 == kNoNode))
    return fail("the anchor's inputs are not dequantized");
  if (anchor_op == "MaxPool" && p.relu != kNoNode) return fail("a Relu after a QDQ MaxPool");
  ValueId chain = g.node(p.relu != kNoNode ? p.relu : p.anchor).outputs[0];
  if (in(g, p.q, 0) != chain ||
      (p.relu != kNoNode && in(g, p.relu, 0) != g.node(p.anchor).outputs[0]))
    return fail("the QuantizeLinear does not read the anchor's result");
  auto sorted = nodes;
  std::sort(sorted.begin(), sorted.end());
  std::sort(want.begin(), want.end());
  if (sorted != want)
    return fail("the group holds more than one QDQ anchor and its (de)quantizers");
  p.x = in(g, p.dq_x, 0);
  if (p.dq_x2 != kNoNode) p.x2 = in(g, p.dq_x2, 0);
  p.output = g.node(p.q).outputs[0];
  return p;
}

bool qdq_int8_conv_layouts(const Kernel* k, bool* x_nhwc, bool* y_nhwc) {
  const auto* q = dynamic_cast<const QdqInt8Kernel*>(k);
  if (!q || !q->conv_2d()) return false;
  if (x_nhwc) *x_nhwc = q->x_nhwc();
  if (y_nhwc) *y_nhwc = q->y_nhwc();
  return true;
}

std::shared_ptr<Kernel> qdq_int8_conv_with_layouts(const Kernel& k, bool x_nhwc, bool y_nhwc) {
  const auto* q = dynamic_cast<const QdqInt8Kernel*>(&k);
  if (!q || !q->conv_2d()) throw Error("not a QDQ int8 2-D convolution kernel");
  return q->with_layouts(x_nhwc, y_nhwc);
}

bool is_qdq_int8_add_kernel(const Kernel* k) {
  return dynamic_cast<const QdqAddKernel*>(k) != nullptr;
}

std::shared_ptr<Kernel> make_qdq_int8_kernel(const Graph& g, const QdqInt8Plan& plan) {
  const std::string& op = g.node(plan.anchor).op_type;
  if (op == "Add") return std::make_shared<QdqAddKernel>(g, plan);
  if (op == "MaxPool") return qdq_max_pool_kernel(g, plan);
  return std::make_shared<QdqInt8Kernel>(g, plan);
}

}  // namespace fx
