// SPDX-License-Identifier: Apache-2.0
#include "codegen/matmul_epilogue.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>

#include "runtime/delegating_context.h"
#include "runtime/dnnl_parts.h"
#include "runtime/dnnl_util.h"
#include "runtime/kernel_util.h"
#include "runtime/thread_pool.h"
#include "util/error.h"

namespace fx {

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// At least ~256K multiply-adds per part, as the runtime's MatMul (waking a thread
// costs tens of microseconds).
constexpr int64_t kMinPartMacs = int64_t{1} << 18;

// What the epilogue sees: its inputs from the step's inputs or the MatMul's output,
// its outputs straight into the step's outputs.
class EpilogueContext final : public DelegatingContext {
 public:
  EpilogueContext(KernelContext& outer, const Tensor& y, const std::vector<int>& ins,
                  const std::vector<int>& outs)
      : DelegatingContext(outer), y_(y), ins_(ins), outs_(outs) {}
  int num_inputs() const override { return static_cast<int>(ins_.size()); }
  const Tensor* input(int i) const override {
    if (i < 0 || i >= num_inputs()) return nullptr;
    const int k = ins_[static_cast<std::size_t>(i)];
    return k < 0 ? &y_ : outer_.input(k);
  }
  int num_outputs() const override { return static_cast<int>(outs_.size()); }
  Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) override {
    return outer_.output(outs_.at(static_cast<std::size_t>(i)), dtype, dims);
  }
  void alias_output(int, const Tensor&, const std::vector<int64_t>&) override {
    throw Error("step " + outer_.step_name() + ": a generated epilogue does not alias");
  }

 private:
  const Tensor& y_;
  const std::vector<int>& ins_;   // step input index, -1: the MatMul's output
  const std::vector<int>& outs_;  // step output index
};

class MatMulEpilogueKernel final : public Kernel {
 public:
  MatMulEpilogueKernel(int a_in, int b_in, int y_out, bool batched,
                       std::shared_ptr<GeneratedKernel> gen, std::vector<int> gen_ins,
                       std::vector<int> gen_outs)
      : batched_(batched),
        a_in_(a_in),
        b_in_(b_in),
        y_out_(y_out),
        gen_(std::move(gen)),
        gen_ins_(std::move(gen_ins)),
        gen_outs_(std::move(gen_outs)) {}

  void run(KernelContext& ctx) override {
    const Tensor& a = ctx.in(a_in_);
    const Tensor& b = ctx.in(b_in_);
    const std::size_t r = a.rank();
    bool ok = a.dtype() == DType::Float32 && b.dtype() == DType::Float32 && r >= 2;
    if (ok && batched_) {
      ok = b.rank() == r && a.dims()[r - 1] == b.dims()[r - 2] &&
           std::equal(a.dims().begin(), a.dims().end() - 2, b.dims().begin());
    } else if (ok) {
      ok = b.rank() == 2 && a.dims().back() == b.dims()[0];
    }
    if (!ok) {
      throw Error(
          "MatMul + epilogue (step " + ctx.step_name() + "): needs float32 " +
          (batched_ ? "[..., M, K] x [..., K, N] (same batch dims)" : "[..., M, K] x [K, N]") +
          ", got " + a.str() + " x " + b.str());
    }
    std::vector<int64_t> yd = a.dims();
    yd.back() = b.dims().back();
    Tensor* y = &y_;
    if (y_out_ >= 0) {
      y = &ctx.output(y_out_, DType::Float32, yd);
    } else {
      y_buf_.reserve(static_cast<std::size_t>(dims_numel(yd)) * sizeof(float) + 64);
      y_.reset_view(DType::Float32, yd, y_buf_.data());
    }
    EpilogueContext ec(ctx, *y, gen_ins_, gen_outs_);
    gen_->bind(ec);
    if (gen_->dims() != yd) {
      throw Error("MatMul + epilogue (step " + ctx.step_name() +
                  "): the epilogue's shape differs from the MatMul's output " + y->str());
    }
    if (y->numel() == 0) return;
    const int threads = std::max(1, ctx.threads());
    const int64_t k = a.dims().back();
    if (k == 0) {
      std::fill(y->data<float>(), y->data<float>() + y->numel(), 0.0f);
      gen_->run_slice(0, gen_->cut_length());
      return;
    }
    if (a.dims() != a_dims_ || b.dims() != b_dims_ || threads != threads_ ||
        gen_->cut_axis() != cut_) {
      if (batched_)
        build_batched(a, b, threads);
      else
        build(a, b, threads);
    }
    // As runtime/dnnl_parts.cc: every part on one OpenMP thread.
    OneOmpThread one;
    float* ap = const_cast<float*>(a.data<float>());
    float* yp = y->data<float>();
    float* bp = const_cast<float*>(b.data<float>());
    pool_run(static_cast<int64_t>(parts_.size()), threads, [&](int64_t i) {
      Part& p = parts_[static_cast<std::size_t>(i)];
      p.part.args[DNNL_ARG_SRC].set_data_handle(ap + p.a_off);
      p.part.args[DNNL_ARG_DST].set_data_handle(yp + p.y_off);
      if (p.w_off >= 0) p.part.args[DNNL_ARG_WEIGHTS].set_data_handle(bp + p.w_off);
      p.part.prim.execute(dnnl_stream(), p.part.args);
      dnnl_stream().wait();
      if (per_part_) gen_->run_slice(p.begin, p.end);
    });
    if (per_part_) return;
    // The epilogue after all parts, in slices of its cut axis over the pool.
    const int64_t len = gen_->cut_length();
    const int64_t chunks = std::min<int64_t>(gen_->cut_axis() < 0 ? 1 : len, threads);
    pool_run(chunks, threads,
             [&](int64_t c) { gen_->run_slice(len * c / chunks, len * (c + 1) / chunks); });
  }

 private:
  struct Part {
    DnnlPart part;
    int64_t a_off = 0, y_off = 0;  // floats
    int64_t w_off = -1;            // floats into the weights input; -1: fixed weights
    int64_t begin = 0, end = 0;    // the epilogue's slice of its cut axis
  };

  // A part computing rows [row0, row0 + rows) x columns [n0, n1) of y = a x b.
  void add_part(int64_t rows, int64_t row0, int64_t n0, int64_t n1, int64_t k, int64_t n,
                const Tensor& b, int64_t begin, int64_t end) {
    const int64_t np = n1 - n0;
    dnnl::memory::desc a_md(to_dnnl({rows, k}), dt::f32, tag::ab);
    dnnl::memory::desc w_user(to_dnnl({k, np}), dt::f32, to_dnnl({n, 1}));
    dnnl::memory::desc w_any(to_dnnl({k, np}), dt::f32, tag::any);
    dnnl::memory::desc y_md(to_dnnl({rows, np}), dt::f32, to_dnnl({n, 1}));
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, w_any, y_md), part_attr(),
                                    dnnl_engine());
    Part p;
    p.part = make_part(pd, {{DNNL_ARG_SRC, a_md}, {DNNL_ARG_DST, y_md}}, {});
    // Parts with the same columns share their reordered weights.
    const dnnl::memory::desc want = pd.weights_desc();
    dnnl::memory w;
    for (const auto& [key, mem] : weights_)
      if (key.first == n0 && key.second == want) w = mem;
    if (!w) {
      w = reorder_weights(w_user, b.data<float>() + n0, want);
      weights_.push_back({{n0, want}, w});
    }
    p.part.args[DNNL_ARG_WEIGHTS] = w;
    p.a_off = row0 * k;
    p.y_off = row0 * n + n0;
    p.begin = begin;
    p.end = end;
    parts_.push_back(std::move(p));
  }

  // Weights that are an input (attention's K^T, V): parts over the batch, cut along
  // the epilogue's cut axis when that is a batch axis.
  void build_batched(const Tensor& a, const Tensor& b, int threads) {
    start_build(a, b, threads);
    const std::size_t r = a.rank();
    const int64_t m = a.dims()[r - 2], k = a.dims()[r - 1], n = b.dims()[r - 1];
    const int64_t batch = dims_numel(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 2));
    const bool cut_batch = cut_ >= 0 && cut_ < static_cast<int>(r) - 2;
    int64_t per_unit = 1;  // batch entries per index of the cut axis (or per unit)
    if (cut_batch)
      for (std::size_t x = static_cast<std::size_t>(cut_) + 1; x + 2 < r; ++x)
        per_unit *= a.dims()[x];
    const int64_t units = cut_batch ? a.dims()[static_cast<std::size_t>(cut_)] : batch;
    const int64_t min_units = std::max<int64_t>(1, kMinPartMacs / (per_unit * m * k * n));
    for (auto [u0, u1] : split_range(units, threads, min_units)) {
      const int64_t nb = (u1 - u0) * per_unit, b0 = u0 * per_unit;
      dnnl::memory::desc a_md = plain_f32_desc({nb, m, k}), w_md = plain_f32_desc({nb, k, n}),
                         y_md = plain_f32_desc({nb, m, n});
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, w_md, y_md), part_attr(),
                                      dnnl_engine());
      Part p;
      p.part =
          make_part(pd, {{DNNL_ARG_SRC, a_md}, {DNNL_ARG_WEIGHTS, w_md}, {DNNL_ARG_DST, y_md}}, {});
      p.a_off = b0 * m * k;
      p.w_off = b0 * k * n;
      p.y_off = b0 * m * n;
      p.begin = u0;
      p.end = u1;
      parts_.push_back(std::move(p));
    }
    per_part_ = cut_batch;
  }

  // Forgets the previous shapes' parts; both builds start here.
  void start_build(const Tensor& a, const Tensor& b, int threads) {
    parts_.clear();
    weights_.clear();
    a_dims_ = a.dims();
    b_dims_ = b.dims();
    threads_ = threads;
    cut_ = gen_->cut_axis();
  }

  void build(const Tensor& a, const Tensor& b, int threads) {
    start_build(a, b, threads);
    const int64_t k = b.dims()[0], n = b.dims()[1], m = a.numel() / k;
    const auto& d = gen_->dims();
    const int r = static_cast<int>(d.size());
    if (cut_ >= 0 && cut_ < r - 1) {
      // Rows: whole units of the cut axis, each with the epilogue over its rows.
      int64_t rows_per_unit = 1;
      for (int x = cut_ + 1; x < r - 1; ++x) rows_per_unit *= d[static_cast<std::size_t>(x)];
      const int64_t min_units = std::max<int64_t>(1, kMinPartMacs / (rows_per_unit * k * n));
      for (auto [u0, u1] : split_range(d[static_cast<std::size_t>(cut_)], threads, min_units))
        add_part((u1 - u0) * rows_per_unit, u0 * rows_per_unit, 0, n, k, n, b, u0, u1);
      per_part_ = true;
      return;
    }
    // Columns, each part its slice of the weights: with one row (M = 1, cut along the
    // columns) the epilogue follows each part; otherwise it runs after all of them.
    per_part_ = cut_ == r - 1 && m == 1;
    const int64_t min_cols = std::max<int64_t>(1, kMinPartMacs / (m * k));
    for (auto [n0, n1] : split_range(n, threads, min_cols)) add_part(m, 0, n0, n1, k, n, b, n0, n1);
  }

  bool batched_;
  int a_in_, b_in_, y_out_;
  std::shared_ptr<GeneratedKernel> gen_;
  std::vector<int> gen_ins_, gen_outs_;
  std::vector<int64_t> a_dims_, b_dims_;
  int threads_ = 0, cut_ = -2;
  bool per_part_ = false;
  std::vector<Part> parts_;
  std::vector<std::pair<std::pair<int64_t, dnnl::memory::desc>, dnnl::memory>> weights_;
  AlignedBuffer y_buf_;  // the MatMul's output when no step output holds it
  Tensor y_;
};

int index_of(const std::vector<ValueId>& vs, ValueId v) {
  auto it = std::find(vs.begin(), vs.end(), v);
  return it == vs.end() ? -1 : static_cast<int>(it - vs.begin());
}

}  // namespace

std::shared_ptr<Kernel> make_matmul_epilogue_kernel(const Graph& g, NodeId anchor,
                                                    const LoweredGroup& epilogue,
                                                    std::shared_ptr<GeneratedKernel> gen,
                                                    const std::vector<ValueId>& step_inputs,
                                                    const std::vector<ValueId>& step_outputs,
                                                    std::string* why) {
  auto fail = [&](const std::string& w) -> std::shared_ptr<Kernel> {
    if (why) *why = w;
    return nullptr;
  };
  const Node& mm = g.node(anchor);
  if (mm.op_type != "MatMul" || mm.inputs.size() != 2 || mm.outputs.size() != 1)
    return fail("the anchor is not a MatMul");
  auto w = constant_input(g, mm, 1);
  const Shape& as = g.value(mm.inputs[0]).shape;
  const Shape& bs = g.value(mm.inputs[1]).shape;
  bool batched = false;
  if (!w) {
    batched = as.rank_known() && bs.rank_known() && as.rank() >= 3 && bs.rank() == as.rank();
    if (!batched)
      return fail("the MatMul's weights are not constant, nor a batch of the input's rank >= 3");
  } else if (w->dtype() != DType::Float32 || w->rank() != 2) {
    return fail("the MatMul's weights are not a constant 2-D float32 tensor");
  }
  if (!as.rank_known() || as.rank() < 2 || static_cast<int>(as.rank()) != epilogue.rank)
    return fail("the MatMul's input is not of the epilogue's rank (>= 2)");
  const ValueId y = mm.outputs[0];
  std::vector<int> ins, outs;
  bool reads_y = false;
  for (const KInput& in : epilogue.inputs) {
    if (in.mask) return fail("the epilogue reads a bool mask");
    if (in.value == y) {
      const bool whole = in.rank == epilogue.rank &&
                         std::none_of(in.bcast.begin(), in.bcast.end(), [](bool b) { return b; });
      if (!whole) return fail("the epilogue broadcasts the MatMul's output");
      reads_y = true;
      ins.push_back(-1);
      continue;
    }
    const int i = index_of(step_inputs, in.value);
    if (i < 0) return fail("epilogue input '" + in.name + "' is not an input of the step");
    ins.push_back(i);
  }
  if (!reads_y) return fail("the epilogue does not read the MatMul's output");
  for (const KOutput& o : epilogue.outputs) {
    const int k = index_of(step_outputs, o.value);
    if (k < 0) return fail("epilogue output '" + o.name + "' is not an output of the step");
    outs.push_back(k);
  }
  const int a_in = index_of(step_inputs, mm.inputs[0]), b_in = index_of(step_inputs, mm.inputs[1]);
  if (a_in < 0 || b_in < 0) return fail("the MatMul's inputs are not inputs of the step");
  return std::make_shared<MatMulEpilogueKernel>(a_in, b_in, index_of(step_outputs, y), batched,
                                                std::move(gen), std::move(ins), std::move(outs));
}

}  // namespace fx
