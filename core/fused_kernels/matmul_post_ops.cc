// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/matmul_post_ops.h"

#include <spdlog/spdlog.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cfloat>
#include <iterator>
#include <set>

#include <unistd.h>

#include "analysis/fusion_pattern.h"
#include "ir/graph_queries.h"
#include "runtime/dnnl_parts.h"
#include "runtime/dnnl_util.h"
#include "runtime/kernel_util.h"
#include "util/error.h"

namespace fx {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// How a Binary operand broadcasts to the MatMul's output.
enum class Bcast { Full, Vector, Scalar };

// The data of a constant, also behind Identity nodes (how exporters share a weight or
// a bias: ViT-B/16's attention in-projection bias is an Identity of an initializer).
std::shared_ptr<TensorData> constant_behind_identity(const Graph& g, ValueId v) {
  for (int hop = 0; hop < 8 && v != kNoValue; ++hop) {
    const Value& val = g.value(v);
    if (val.producer == kNoNode || g.node(val.producer).op_type != "Identity" ||
        !g.node(val.producer).domain.empty())
      return constant_data(g, v);
    const Node& id = g.node(val.producer);
    if (id.inputs.empty()) return nullptr;
    v = id.inputs[0];
  }
  return nullptr;
}

std::optional<float> scalar_const(const Graph& g, ValueId v) {
  auto d = constant_behind_identity(g, v);
  if (!d || d->dtype() != DType::Float32 || d->numel() != 1) return {};
  return d->to_floats().at(0);
}

// A float32 constant with N elements, all of them along the last axis.
bool vector_constant(const Graph& g, ValueId v, const Dim& n) {
  auto d = constant_behind_identity(g, v);
  if (!d || d->dtype() != DType::Float32 || d->dims().empty()) return false;
  const auto& dims = d->dims();
  return (!n.is_static() || dims.back() == n.value) && d->numel() == dims.back();
}

// Constant weights, also behind Identity nodes.
std::optional<Tensor> constant_weights(const Graph& g, ValueId v) {
  auto d = constant_behind_identity(g, v);
  if (!d) return std::nullopt;
  return Tensor::from_data(d);
}

std::optional<Bcast> broadcast_of(const Shape& s, const Shape& out) {
  if (!s.rank_known() || !out.rank_known() || s.rank() > out.rank() || out.rank() == 0) return {};
  bool ones = true;
  for (std::size_t a = 0; a < s.rank(); ++a) ones = ones && s[a].is_static() && s[a].value == 1;
  if (ones) return Bcast::Scalar;
  if (s.rank() == out.rank() && s == out) return Bcast::Full;
  for (std::size_t a = 0; a + 1 < s.rank(); ++a)
    if (!(s[a].is_static() && s[a].value == 1)) return {};
  if (s[s.rank() - 1] == out[out.rank() - 1] && s[s.rank() - 1].is_static()) return Bcast::Vector;
  return {};
}

// oneDNN's brgemm matmul ("brg:<isa>") applies bias and eltwise post-ops to each
// block in registers; its gemm-based matmul ("gemm:jit") in a second pass.
bool applies_post_ops_in_registers(const std::string& impl) {
  return impl.rfind("brg", 0) == 0;
}

dnnl::algorithm algorithm_of(const std::string& a) {
  using A = dnnl::algorithm;
  if (a == "relu") return A::eltwise_relu;
  if (a == "tanh") return A::eltwise_tanh;
  if (a == "logistic") return A::eltwise_logistic;
  if (a == "gelu_erf") return A::eltwise_gelu_erf;
  if (a == "gelu_tanh") return A::eltwise_gelu_tanh;
  if (a == "clip") return A::eltwise_clip;
  if (a == "add") return A::binary_add;
  if (a == "sub") return A::binary_sub;
  if (a == "mul") return A::binary_mul;
  if (a == "div") return A::binary_div;
  throw Error("matmul post-op: unknown algorithm " + a);
}

// A oneDNN matmul with post-ops as parts (runtime/dnnl_parts.h). Run tensors: 0 A,
// 1 B, 2 Y, 3.. the Binary operands in post-op order.
class MatMulPostOpKernel final : public Kernel {
 public:
  MatMulPostOpKernel(std::vector<MatMulPostOp> ops, std::vector<Bcast> bcasts,
                     std::optional<Tensor> weights, std::vector<float> bias, bool batched)
      : ops_(std::move(ops)),
        bcasts_(std::move(bcasts)),
        weights_(std::move(weights)),
        bias_(std::move(bias)),
        batched_(batched) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.in(0);
    const Tensor& b = weights_ ? *weights_ : ctx.in(1);
    const std::size_t r = a.rank();
    bool ok = a.dtype() == DType::Float32 && b.dtype() == DType::Float32 && r >= 2;
    if (ok && batched_)
      ok = b.rank() == r && a.dims()[r - 1] == b.dims()[r - 2] &&
           std::equal(a.dims().begin(), a.dims().end() - 2, b.dims().begin());
    else if (ok)
      ok = b.rank() == 2 && a.dims().back() == b.dims()[0];
    if (!ok)
      throw Error(
          "MatMul + post-ops (step " + ctx.step_name() + "): needs float32 " +
          (batched_ ? "[..., M, K] x [..., K, N] (same batch dims)" : "[..., M, K] x [K, N]") +
          ", got " + a.str() + " x " + b.str());
    std::vector<int64_t> yd = a.dims();
    yd.back() = b.dims().back();
    const int64_t n = yd.back();
    if (!bias_.empty() && static_cast<int64_t>(bias_.size()) != n)
      throw Error("MatMul + post-ops (step " + ctx.step_name() + "): bias of " +
                  std::to_string(bias_.size()) + " for " + std::to_string(n) + " columns");
    std::vector<void*> tensors{const_cast<void*>(a.raw()), const_cast<void*>(b.raw()), nullptr};
    for (std::size_t i = 0, k = 0; i < ops_.size(); ++i) {
      if (ops_[i].kind != MatMulPostOp::Kind::Binary) continue;
      const Tensor& t = ctx.in(static_cast<int>(2 + k++));
      const Bcast bc = bcasts_[i];
      const bool fits = t.dtype() == DType::Float32 &&
                        (bc == Bcast::Full     ? t.dims() == yd
                         : bc == Bcast::Vector ? t.numel() == n && t.dims().back() == n
                                               : t.numel() == 1);
      if (!fits)
        throw Error("MatMul + post-ops (step " + ctx.step_name() + "): operand " + t.str() +
                    " of '" + ops_[i].node + "' does not fit the output");
      tensors.push_back(const_cast<void*>(t.raw()));
    }
    Tensor& y = ctx.output(0, DType::Float32, yd);
    tensors[2] = y.raw();
    if (y.numel() == 0) return;
    const int threads = std::max(1, ctx.threads());
    if (a.dims() != a_dims_ || b.dims() != b_dims_ || threads != threads_)
      build(a.dims(), b.dims(), threads);
    run_parts(parts_, tensors, threads);
  }

 private:
  // About 256K multiply-adds per part at least, as the runtime's MatMul.
  static int64_t min_slice(int64_t macs_per_unit) {
    return std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(macs_per_unit, 1));
  }

  // The post-ops of a part whose output slice is `y_md` (Full operands have its
  // layout; `rank` is the part's rank, `n0`/`np` its columns), with the binds of the
  // Binary operands (`elem_off`: the part's first output element in Full operands).
  // Returns the implementation oneDNN chose for it (impl_info_str).
  std::string add_part(const dnnl::memory::desc& a_md, int64_t a_off,
                       const dnnl::memory::desc& w_md, int64_t w_off, bool w_fixed,
                       const dnnl::memory::desc& y_md, int64_t y_off, int64_t n0, int64_t np) {
    const int rank = static_cast<int>(y_md.dims().size());
    dnnl::post_ops po;
    std::vector<std::pair<int, dnnl::memory::desc>> descs{{DNNL_ARG_SRC, a_md},
                                                          {DNNL_ARG_DST, y_md}};
    std::vector<DnnlPart::Bind> binds{{DNNL_ARG_SRC, 0, a_off * 4}, {DNNL_ARG_DST, 2, y_off * 4}};
    if (!w_fixed) {
      descs.push_back({DNNL_ARG_WEIGHTS, w_md});
      binds.push_back({DNNL_ARG_WEIGHTS, 1, w_off * 4});
    }
    int tensor = 3;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const MatMulPostOp& op = ops_[i];
      if (op.kind == MatMulPostOp::Kind::Linear) {
        po.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, op.alpha, op.beta);
      } else if (op.kind == MatMulPostOp::Kind::Eltwise) {
        po.append_eltwise(1.f, algorithm_of(op.alg), op.alpha, op.beta);
      } else {
        dnnl::memory::desc md;
        int64_t off = 0;
        if (bcasts_[i] == Bcast::Full) {
          md = y_md;
          off = y_off;
        } else {
          std::vector<int64_t> d(static_cast<std::size_t>(rank), 1);
          if (bcasts_[i] == Bcast::Vector) {
            d.back() = np;
            off = n0;
          }
          md = plain_f32_desc(d);
        }
        po.append_binary(algorithm_of(op.alg), md);
        const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1;
        descs.push_back({arg, md});
        binds.push_back({arg, tensor++, off * 4});
      }
    }
    dnnl::primitive_attr attr = part_attr();
    attr.set_post_ops(po);
    const dnnl::memory::desc w_want =
        w_fixed ? dnnl::memory::desc(w_md.dims(), dt::f32, tag::any) : w_md;
    std::optional<dnnl::memory::desc> bias_md;
    if (!bias_.empty()) {
      std::vector<int64_t> d(static_cast<std::size_t>(rank), 1);
      d.back() = np;
      bias_md = plain_f32_desc(d);
    }
    auto desc = bias_md ? dnnl::matmul::desc(a_md, w_want, *bias_md, y_md)
                        : dnnl::matmul::desc(a_md, w_want, y_md);
    dnnl::matmul::primitive_desc pd(desc, attr, dnnl_engine());
    // oneDNN's reference matmul (what it falls back to for post-ops its fast kernels
    // lack) is tens of times slower than matmul + a separate pass.
    const std::string impl = pd.impl_info_str();
    spdlog::debug("MatMul + post-ops: part {}x{} uses {}", y_md.dims()[rank - 2], np, impl);
    if (is_reference_impl(pd))
      throw Error("oneDNN has only its reference matmul for these post-ops (" + impl + ")");
    DnnlPart part = make_part(pd, descs, std::move(binds));
    if (w_fixed) {
      // Row parts share one reordered copy of the weights.
      const dnnl::memory::desc want = pd.weights_desc();
      dnnl::memory w;
      for (const auto& [key, mem] : reordered_)
        if (key.first == w_off && key.second == want) w = mem;
      if (!w) {
        w = reorder_weights(w_md, weights_->data<float>() + w_off, want);
        reordered_.push_back({{w_off, want}, w});
      }
      part.args[DNNL_ARG_WEIGHTS] = w;
    }
    if (bias_md)
      part.args[DNNL_ARG_BIAS] = dnnl::memory(*bias_md, dnnl_engine(), bias_.data() + n0);
    parts_.push_back(std::move(part));
    return impl;
  }

  // Column parts, as the runtime's MatMul cuts constant weights (each part its slice).
  void add_column_parts(int64_t m, int64_t k, int64_t n, int threads) {
    for (auto [n0, n1] : split_range(n, threads, min_slice(m * k))) {
      const int64_t np = n1 - n0;
      dnnl::memory::desc w_md(to_dnnl({k, np}), dt::f32, to_dnnl({n, 1}));
      dnnl::memory::desc y_md(to_dnnl({m, np}), dt::f32, to_dnnl({n, 1}));
      add_part(plain_f32_desc({m, k}), 0, w_md, n0, true, y_md, n0, n0, np);
    }
  }

 public:
  // Parts for these dims (throws fx::Error when oneDNN has no fast kernel for them).
  void build(const std::vector<int64_t>& ad, const std::vector<int64_t>& bd, int threads) {
    parts_.clear();
    reordered_.clear();
    a_dims_.clear();  // built again on the next run if this throws
    const std::size_t r = ad.size();
    const int64_t k = ad[r - 1], n = bd.back();
    if (!batched_) {
      const int64_t m = dims_numel(ad) / std::max<int64_t>(k, 1);
      // Rows (the reordered weights shared) or columns, as the runtime's MatMul (each
      // part its slice of the weights): matmul_post_ops_split_rows.
      const bool reads_tensor =
          std::any_of(bcasts_.begin(), bcasts_.end(), [](Bcast b) { return b != Bcast::Scalar; });
      if (matmul_post_ops_split_rows(m, k, n, threads, reads_tensor, l2_cache_bytes())) {
        dnnl::memory::desc w_md = plain_f32_desc({k, n});
        bool in_registers = true;
        for (auto [m0, m1] : split_range(m, threads, min_slice(n * k)))
          in_registers &= applies_post_ops_in_registers(
              add_part(plain_f32_desc({m1 - m0, k}), m0 * k, w_md, 0, true,
                       plain_f32_desc({m1 - m0, n}), m0 * n, 0, n));
        // Rows pay only where oneDNN applies the epilogue while the block is in
        // registers; where it chose another implementation (its gemm-based matmul,
        // which adds a pass over the output: what it picks below AVX-512), the rows
        // only make every thread read all the weights, and the columns, as unfused,
        // are faster. Columns that oneDNN has no fast kernel for keep the rows.
        if (!in_registers && parts_.size() > 1) {
          std::vector<DnnlPart> rows = std::move(parts_);
          auto rows_reordered = std::move(reordered_);
          parts_.clear();
          reordered_.clear();
          try {
            add_column_parts(m, k, n, threads);
            spdlog::debug(
                "MatMul + post-ops: {}x{}x{} in columns (oneDNN's row kernel would not "
                "apply the epilogue in registers)",
                m, k, n);
          } catch (const Error&) {
            parts_ = std::move(rows);
            reordered_ = std::move(rows_reordered);
          }
        }
      } else {
        add_column_parts(m, k, n, threads);
      }
    } else {
      // Same batch dims: folded into one, split over it.
      const int64_t m = ad[r - 2];
      const int64_t batch = dims_numel(ad) / std::max<int64_t>(m * k, 1);
      for (auto [b0, b1] : split_range(batch, threads, min_slice(m * n * k))) {
        const int64_t nb = b1 - b0;
        add_part(plain_f32_desc({nb, m, k}), b0 * m * k, plain_f32_desc({nb, k, n}), b0 * k * n,
                 false, plain_f32_desc({nb, m, n}), b0 * m * n, 0, n);
      }
    }
    a_dims_ = ad;
    b_dims_ = bd;
    threads_ = threads;
  }

 private:
  std::vector<MatMulPostOp> ops_;
  std::vector<Bcast> bcasts_;      // per op (Binary ones only meaningful)
  std::optional<Tensor> weights_;  // constant weights, or none (batched)
  std::vector<float> bias_;        // empty: no bias
  bool batched_;
  std::vector<int64_t> a_dims_, b_dims_;
  int threads_ = 0;
  std::vector<DnnlPart> parts_;
  std::vector<std::pair<std::pair<int64_t, dnnl::memory::desc>, dnnl::memory>> reordered_;
};

// The node among `left` that reads `v`, when it is the only reader of `v` in the
// graph (an intermediate value must not leave the group).
NodeId next_of(const Graph& g, const std::set<NodeId>& left, ValueId v) {
  const Value& val = g.value(v);
  if (val.is_graph_output) return kNoNode;
  std::set<NodeId> users(val.consumers.begin(), val.consumers.end());
  if (users.size() != 1 || !left.count(*users.begin())) return kNoNode;
  return *users.begin();
}

}  // namespace

bool matmul_post_ops_split_rows(int64_t m, int64_t k, int64_t n, int threads, bool reads_tensor,
                                int64_t l2_bytes) {
  if (reads_tensor) return true;
  if (l2_bytes <= 0 || k * n * static_cast<int64_t>(sizeof(float)) > l2_bytes) return false;
  // About 256K multiply-adds per part at least, as MatMulPostOpKernel::min_slice.
  auto parts = [&](int64_t len, int64_t macs_per_unit) {
    return split_range(
               len, threads,
               std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(macs_per_unit, 1)))
        .size();
  };
  return parts(m, n * k) >= parts(n, m * k);
}

int64_t l2_cache_bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<int64_t>(l2) : int64_t{0};
  }();
  return bytes;
}

std::string matmul_fusion_loss(const Graph& g, const std::vector<NodeId>& nodes, int threads) {
  if (threads <= 1) return {};
  auto mm = std::find_if(nodes.begin(), nodes.end(), [&](NodeId n) {
    return g.node(n).op_type == "MatMul" && g.node(n).domain.empty();
  });
  if (mm == nodes.end()) return {};
  const Node& node = g.node(*mm);
  if (node.inputs.size() != 2) return {};
  const auto w = constant_weights(g, node.inputs[1]);
  const Shape& as = g.value(node.inputs[0]).shape;
  if (!w || w->rank() != 2 || !as.is_static()) return {};
  const int64_t k = w->dims()[0], n = w->dims()[1];
  const int64_t m = k > 0 ? as.numel().value_or(0) / k : 0;
  // The epilogue: members after the MatMul (Identity moves nothing); whether one of
  // them reads a tensor from outside the group, which makes the fused kernels split rows.
  const std::set<NodeId> members(nodes.begin(), nodes.end());
  std::set<ValueId> produced;
  for (NodeId x : nodes)
    for (ValueId v : g.node(x).outputs) produced.insert(v);
  int64_t ops = 0;
  bool reads_tensor = false;
  for (auto it = std::next(mm); it != nodes.end(); ++it) {
    const Node& e = g.node(*it);
    if (e.op_type == "Identity") continue;
    ++ops;
    for (ValueId v : e.inputs)
      if (v != kNoValue && !produced.count(v) && !scalar_const(g, v)) reads_tensor = true;
  }
  // Fewer rows than threads are not split by rows (one row: the generated epilogue
  // splits the columns and follows each part).
  if (ops == 0 || !reads_tensor || m < threads) return {};
  const int64_t extra = (threads - 1) * k * n, saved = 2 * m * n * ops;
  if (extra <= saved) return {};
  return "fusing would cost more than it saves: the fused MatMul splits its " + std::to_string(m) +
         " rows over " + std::to_string(threads) + " threads, so each reads all " +
         std::to_string(k) + "x" + std::to_string(n) + " weights (" +
         std::to_string(extra * 4 / 1024) + " KiB more) against " +
         std::to_string(saved * 4 / 1024) + " KiB of output traffic its " + std::to_string(ops) +
         " epilogue op(s) save";
}

// The MatMul's own conditions: [..., M, K] x constant 2-D float32 [K, N] weights, or a
// batch of the input's rank >= 3 (p.batched); float32. Sets p's first step inputs.
// Returns why not, or "".
std::string check_matmul(const Graph& g, const Node& mm, MatMulPostOpPlan& p) {
  if (mm.inputs.size() != 2 || mm.outputs.size() != 1) return "the MatMul is malformed";
  const Shape& as = g.value(mm.inputs[0]).shape;
  const Shape& bs = g.value(mm.inputs[1]).shape;
  const Shape& out = g.value(mm.outputs[0]).shape;
  if (!as.rank_known() || as.rank() < 2 || !bs.rank_known() || !out.rank_known() ||
      out.rank() != as.rank())
    return "the MatMul's operands are not [..., M, K] x [K, N] or batched alike";
  if (auto w = constant_weights(g, mm.inputs[1])) {
    if (w->dtype() != DType::Float32 || w->rank() != 2)
      return "the MatMul's weights are not a constant 2-D float32 tensor";
  } else if (as.rank() >= 3 && bs.rank() == as.rank()) {
    p.batched = true;
  } else {
    return "the MatMul's weights are not constant, nor a batch of the input's rank >= 3";
  }
  if (g.value(mm.inputs[0]).dtype != DType::Float32) return "the MatMul is not float32";
  p.step_inputs = {mm.inputs[0], mm.inputs[1]};
  return "";
}

// Node `nd` of the chain on `cur` (the MatMul's output is `out`, N its last dim) as
// post-op `po`: an eltwise op, a scalar Add/Sub/Mul/Div as a linear one, the first Add of
// a constant [N] vector as the matmul's bias (*is_bias; p.bias), else a binary post-op
// whose operand becomes a step input of `p`. Returns why not, or "".
std::string chain_op(const Graph& g, const Node& nd, ValueId cur, const Shape& out, const Dim& n,
                     MatMulPostOpPlan& p, MatMulPostOp& po, bool* is_bias) {
  const std::string& op = nd.op_type;
  if (op == "Relu") {
    po.alg = "relu";
  } else if (op == "LeakyRelu") {
    po.alg = "relu";
    po.alpha = nd.attrs.get_float("alpha", 0.01f);
  } else if (op == "Tanh") {
    po.alg = "tanh";
  } else if (op == "Sigmoid") {
    po.alg = "logistic";
  } else if (op == "Gelu") {
    const std::string approx = nd.attrs.get_string("approximate", "none");
    po.alg = approx == "tanh" ? "gelu_tanh" : "gelu_erf";
  } else if (op == "Clip") {
    po.alg = "clip";
    po.alpha = nd.attrs.get_float("min", -FLT_MAX);
    po.beta = nd.attrs.get_float("max", FLT_MAX);
    for (std::size_t k = 1; k < nd.inputs.size() && k < 3; ++k) {
      if (nd.inputs[k] == kNoValue) continue;
      auto c = scalar_const(g, nd.inputs[k]);
      if (!c) return "Clip '" + nd.name + "' has non-constant bounds";
      (k == 1 ? po.alpha : po.beta) = *c;
    }
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (nd.inputs.size() != 2 || nd.inputs[0] == nd.inputs[1])
      return "node '" + nd.name + "' is not binary on the chain";
    const bool first = nd.inputs[0] == cur;
    const ValueId other = first ? nd.inputs[1] : nd.inputs[0];
    if ((op == "Sub" || op == "Div") && !first)
      return "node '" + nd.name + "' has the MatMul's result as its second operand";
    if (auto c = scalar_const(g, other)) {
      po.kind = MatMulPostOp::Kind::Linear;
      po.alpha = op == "Mul" ? *c : op == "Div" ? 1.f / *c : 1.f;
      po.beta = op == "Add" ? *c : op == "Sub" ? -*c : 0.f;
    } else if (op == "Add" && p.post_ops.empty() && p.bias == kNoValue &&
               vector_constant(g, other, n)) {
      p.bias = other;  // the matmul's own bias
      *is_bias = true;
    } else {
      const Value& ov = g.value(other);
      if (ov.dtype != DType::Float32) return "operand of '" + nd.name + "' is not float32";
      if (!broadcast_of(ov.shape, out))
        return "operand of '" + nd.name + "' does not broadcast to the MatMul's output";
      po.kind = MatMulPostOp::Kind::Binary;
      po.alg = op == "Add" ? "add" : op == "Sub" ? "sub" : op == "Mul" ? "mul" : "div";
      po.operand = other;
      p.step_inputs.push_back(other);
    }
  } else {
    return "op " + op + " (node '" + nd.name + "') has no oneDNN post-op";
  }
  return "";
}

std::optional<MatMulPostOpPlan> plan_matmul_post_ops(const Graph& g,
                                                     const std::vector<NodeId>& nodes,
                                                     std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<MatMulPostOpPlan> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (nodes.size() < 2 || g.node(nodes[0]).op_type != "MatMul" || !g.node(nodes[0]).domain.empty())
    return fail("the group has no leading MatMul with an epilogue");
  MatMulPostOpPlan p;
  p.matmul = nodes[0];
  const Node& mm = g.node(p.matmul);
  if (std::string w = check_matmul(g, mm, p); !w.empty()) return fail(w);
  const Shape& out = g.value(mm.outputs[0]).shape;
  const Dim n = out[out.rank() - 1];
  std::set<NodeId> left(nodes.begin() + 1, nodes.end());
  // Decomposed GELU is recognized as the analysis does (analysis/fusion_pattern.h).
  std::vector<OpClass> classes(g.nodes().size());
  std::vector<char> claimed(g.nodes().size(), 0);
  PatternContext ctx(g, classes, claimed);
  ValueId cur = mm.outputs[0];
  while (!left.empty()) {
    MatMulPostOp po;
    // GELU written out reads its input twice (x / sqrt2 ... * x): matched first.
    if (auto gelu = match_decomposed_gelu(ctx, cur)) {
      if (!g.value(cur).is_graph_output &&
          std::all_of(gelu->nodes.begin(), gelu->nodes.end(),
                      [&](NodeId x) { return left.count(x) > 0; })) {
        po.alg = gelu->name;  // "gelu_erf" or "gelu_tanh"
        for (NodeId x : gelu->nodes) {
          left.erase(x);
          po.node += (po.node.empty() ? "" : "+") + g.node(x).name;
        }
        p.post_ops.push_back(po);
        cur = gelu->output;
        continue;
      }
    }
    NodeId id = next_of(g, left, cur);
    if (id == kNoNode) return fail("the MatMul's chain leaves the group or branches");
    const Node& nd = g.node(id);
    po.node = nd.name;
    if (!nd.domain.empty() || nd.outputs.size() != 1)
      return fail("node '" + nd.name + "' has no oneDNN post-op");
    left.erase(id);
    bool is_bias = false;
    if (std::string w = chain_op(g, nd, cur, out, n, p, po, &is_bias); !w.empty()) return fail(w);
    if (is_bias) {
      cur = nd.outputs[0];
      continue;
    }
    p.post_ops.push_back(po);
    cur = nd.outputs[0];
  }
  auto outs = group_external_outputs(g, nodes);
  if (outs.size() != 1 || outs[0] != cur) return fail("the group has several outputs");
  p.output = cur;
  return p;
}

std::shared_ptr<Kernel> make_matmul_post_op_kernel(const Graph& g, const MatMulPostOpPlan& plan) {
  const Node& mm = g.node(plan.matmul);
  const Shape& out = g.value(mm.outputs[0]).shape;
  std::vector<Bcast> bcasts;
  for (const MatMulPostOp& op : plan.post_ops) {
    Bcast b = Bcast::Scalar;
    if (op.kind == MatMulPostOp::Kind::Binary) {
      auto bc = broadcast_of(g.value(op.operand).shape, out);
      if (!bc) throw Error("MatMul + post-ops: operand of '" + op.node + "' does not broadcast");
      b = *bc;
    }
    bcasts.push_back(b);
  }
  std::optional<Tensor> w;
  if (!plan.batched) {
    w = constant_weights(g, mm.inputs[1]);
    if (!w) throw Error("MatMul + post-ops: the weights of '" + mm.name + "' are not constant");
  }
  std::vector<float> bias;
  if (plan.bias != kNoValue) bias = constant_behind_identity(g, plan.bias)->to_floats();
  auto k = std::make_shared<MatMulPostOpKernel>(plan.post_ops, std::move(bcasts), std::move(w),
                                                std::move(bias), plan.batched);
  // With static shapes, the parts of one and two threads are made now, so that a
  // group oneDNN cannot run fast is known before it is chosen (throws fx::Error).
  const Shape& as = g.value(mm.inputs[0]).shape;
  const Shape& bs = g.value(mm.inputs[1]).shape;
  if (as.is_static() && bs.is_static())
    for (int threads : {1, 2}) k->build(as.static_dims(), bs.static_dims(), threads);
  return k;
}

}  // namespace fx
