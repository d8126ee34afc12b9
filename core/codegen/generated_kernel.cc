// SPDX-License-Identifier: Apache-2.0
#include "codegen/generated_kernel.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "codegen/kernel_compiler.h"
#include "runtime/delegating_context.h"
#include "runtime/parallel.h"
#include "util/error.h"

namespace fx {

GeneratedKernel::GeneratedKernel(const LoweredGroup& g, std::shared_ptr<CompiledLibrary> lib)
    : entry_(g.entry),
      rank_(g.rank),
      row_begin_(g.row_begin),
      has_reduction_(g.has_reduction),
      // parallel_for's units per element: about two per micro-op, load and store (the
      // runtime's binary kernels count 2, its unary ones 4).
      cost_(2 * static_cast<int64_t>(g.ops.size() + g.inputs.size() + g.outputs.size())),
      lib_(std::move(lib)) {
  fn_ = lib_->symbol<RowKernelFn>(g.entry);
  for (const auto& in : g.inputs) ins_.push_back({in.bcast, in.rank, in.mask});
  for (const auto& o : g.outputs)
    outs_.push_back({g.vars[static_cast<std::size_t>(o.var)].row, o.drop_row_axes});
}

int GeneratedKernel::overwritable_input() const {
  if (has_reduction_ || outs_.size() != 1 || !outs_[0].row || outs_[0].drop_row_axes) return -1;
  for (std::size_t i = 0; i < ins_.size(); ++i) {
    const In& in = ins_[i];
    if (in.mask || in.rank != rank_) continue;
    if (std::none_of(in.bcast.begin(), in.bcast.end(), [](bool b) { return b; }))
      return static_cast<int>(i);
  }
  return -1;
}

void GeneratedKernel::run(KernelContext& ctx) {
  bind(ctx);
  if (numel_ == 0) return;
  const int threads = std::max(1, ctx.threads());
  // A tensor this large goes to the compiled function whole (OpenMP threads): its
  // outputs leave through streaming stores only when the call sees all of it
  // (fx_stream_bytes in cpp_emitter.cc), and a step of milliseconds does not mind the
  // team's spinning.
  constexpr int64_t kWholeBytes = int64_t{16} << 20;
  if (threads > 1 && numel_ * static_cast<int64_t>(sizeof(float)) >= kWholeBytes) {
    fn_(in_ptrs_.data(), out_ptrs_.data(), dims_.data(), threads);
    return;
  }
  if (cut_ < 0 || threads <= 1) {
    fn_(in_ptrs_.data(), out_ptrs_.data(), dims_.data(), 1);
    return;
  }
  ScopedThreads scoped(threads);
  parallel_for(cut_length(), numel_ / cut_length() * cost_,
               [&](int64_t b, int64_t e) { run_slice(b, e); });
}

void GeneratedKernel::bind(KernelContext& ctx) {
  dims_.assign(static_cast<std::size_t>(rank_), 1);
  std::vector<bool> seen(static_cast<std::size_t>(rank_), false);
  in_ptrs_.resize(ins_.size());
  for (std::size_t i = 0; i < ins_.size(); ++i) {
    const Tensor& t = ctx.in(static_cast<int>(i));
    const DType want = ins_[i].mask ? DType::Bool : DType::Float32;
    if (t.dtype() != want || static_cast<int>(t.rank()) != ins_[i].rank) {
      throw Error("generated kernel " + entry_ + " (step " + ctx.step_name() + "): input " +
                  std::to_string(i) + " is " + t.str() + ", expected " +
                  std::string(dtype_name(want)) + " of rank " + std::to_string(ins_[i].rank));
    }
    const int off = rank_ - ins_[i].rank;
    for (int a = std::max(0, off); a < rank_; ++a) {
      int64_t d = t.dims()[static_cast<std::size_t>(a - off)];
      auto ua = static_cast<std::size_t>(a);
      if (ins_[i].bcast[ua]) {
        if (d != 1)
          throw Error("generated kernel " + entry_ + ": input " + t.str() +
                      " is not broadcast along axis " + std::to_string(a) +
                      " as when it was generated");
        continue;
      }
      if (seen[ua] && dims_[ua] != d) {
        throw Error("generated kernel " + entry_ + " (step " + ctx.step_name() +
                    "): inputs disagree on axis " + std::to_string(a));
      }
      dims_[ua] = d;
      seen[ua] = true;
    }
    // A bool mask goes through the float pointer ABI as its first byte.
    in_ptrs_[i] = ins_[i].mask ? reinterpret_cast<const float*>(t.raw()) : t.data<float>();
  }
  out_ptrs_.resize(outs_.size());
  for (std::size_t k = 0; k < outs_.size(); ++k) {
    std::vector<int64_t> od = dims_;
    if (!outs_[k].row) {
      if (outs_[k].drop_row_axes)
        od.resize(static_cast<std::size_t>(row_begin_));
      else
        std::fill(od.begin() + row_begin_, od.end(), 1);
    }
    out_ptrs_[k] = ctx.output(static_cast<int>(k), DType::Float32, od).data<float>();
  }
  find_cut();
}

// The compiled function parallelizes with OpenMP when given threads > 1. It is called
// with 1 instead, on slices of one axis spread over the runtime's thread pool: an
// OpenMP team's threads keep spinning after their region (libgomp's default wait
// policy) and took the core from the pool worker of the next step (a MatMul then ran
// at half speed); the pool also never waits for a thread that has not started.
// The cut axis is the first one longer than 1, so a slice is a sub-box of the
// reference shape and each operand's slice starts at (first index) x (its stride
// along the axis).
void GeneratedKernel::find_cut() {
  const auto R = static_cast<std::size_t>(rank_);
  numel_ = 1;
  for (int64_t d : dims_) numel_ *= d;
  cut_ = -1;
  std::size_t axis = 0;
  while (axis < R && dims_[axis] == 1) ++axis;
  if (numel_ == 0 || axis == R) return;
  // Inside the row only elementwise kernels (whose outputs are all rows) may be cut.
  const bool outer = static_cast<int>(axis) < row_begin_;
  if (!outer && has_reduction_) return;
  for (const Out& o : outs_)
    if (!o.row && !outer) return;
  in_step_.resize(ins_.size());
  out_step_.resize(outs_.size());
  for (std::size_t i = 0; i < ins_.size(); ++i) {  // as fx_strides in the generated code
    int64_t acc = 1;
    for (std::size_t a = R; a-- > axis + 1;)
      if (!ins_[i].bcast[a]) acc *= dims_[a];
    in_step_[i] = ins_[i].bcast[axis] ? 0 : acc;
  }
  for (std::size_t k = 0; k < outs_.size(); ++k) {
    const std::size_t end = outs_[k].row ? R : static_cast<std::size_t>(row_begin_);
    int64_t acc = 1;
    for (std::size_t a = axis + 1; a < end; ++a) acc *= dims_[a];
    out_step_[k] = acc;
  }
  cut_ = static_cast<int>(axis);
}

void GeneratedKernel::run_slice(int64_t begin, int64_t end) {
  if (cut_ < 0) {
    if (begin == 0 && end > 0) fn_(in_ptrs_.data(), out_ptrs_.data(), dims_.data(), 1);
    return;
  }
  if (begin >= end) return;
  std::vector<int64_t> d = dims_;
  d[static_cast<std::size_t>(cut_)] = end - begin;
  std::vector<const float*> in(in_ptrs_.size());
  std::vector<float*> out(out_ptrs_.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = ins_[i].mask
                ? reinterpret_cast<const float*>(
                      reinterpret_cast<const unsigned char*>(in_ptrs_[i]) + begin * in_step_[i])
                : in_ptrs_[i] + begin * in_step_[i];
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = out_ptrs_[k] + begin * out_step_[k];
  fn_(in.data(), out.data(), d.data(), 1);
}

// The context a sub-step sees: its inputs from the step's inputs or earlier sub-steps'
// outputs; its outputs into the step's outputs (no copy) or this kernel's buffers.
class CompositeKernel::Inner final : public DelegatingContext {
 public:
  Inner(CompositeKernel& k, KernelContext& outer, std::map<ValueId, Tensor>& values,
        const SubStep& s)
      : DelegatingContext(outer), k_(k), values_(values), s_(s) {
    for (ValueId v : s.inputs) ins_.push_back(v == kNoValue ? nullptr : &values.at(v));
  }
  int num_inputs() const override { return static_cast<int>(ins_.size()); }
  const Tensor* input(int i) const override {
    return i < num_inputs() ? ins_[static_cast<std::size_t>(i)] : nullptr;
  }
  int num_outputs() const override { return static_cast<int>(s_.outputs.size()); }
  Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) override {
    ValueId v = s_.outputs.at(static_cast<std::size_t>(i));
    auto it = std::find(k_.outputs_.begin(), k_.outputs_.end(), v);
    if (it != k_.outputs_.end()) {
      Tensor& t = outer_.output(static_cast<int>(it - k_.outputs_.begin()), dtype, dims);
      return values_[v] = t;
    }
    auto slot = std::find(k_.internal_.begin(), k_.internal_.end(), v) - k_.internal_.begin();
    if (static_cast<std::size_t>(slot) == k_.internal_.size()) {
      k_.internal_.push_back(v);
      k_.buffers_.push_back(std::make_unique<AlignedBuffer>());
    }
    auto& buf = *k_.buffers_[static_cast<std::size_t>(slot)];
    buf.reserve(static_cast<std::size_t>(dims_numel(dims)) * dtype_size(dtype) + 64);
    Tensor& t = values_[v];
    t.reset_view(dtype, dims, buf.data());
    return t;
  }
  void alias_output(int i, const Tensor& src, const std::vector<int64_t>& dims) override {
    ValueId v = s_.outputs.at(static_cast<std::size_t>(i));
    if (std::find(k_.outputs_.begin(), k_.outputs_.end(), v) != k_.outputs_.end()) {
      Tensor& t = output(i, src.dtype(), dims);  // the step's own output: copy
      std::memcpy(t.raw(), src.raw(), src.byte_size());
      return;
    }
    values_[v] = src.reshaped(dims);
  }
  const std::string& step_name() const override { return s_.name; }

 private:
  CompositeKernel& k_;
  std::map<ValueId, Tensor>& values_;
  const SubStep& s_;
  std::vector<const Tensor*> ins_;
};

CompositeKernel::CompositeKernel(std::vector<SubStep> steps, std::vector<ValueId> inputs,
                                 std::vector<ValueId> outputs)
    : steps_(std::move(steps)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}

void CompositeKernel::run(KernelContext& ctx) {
  std::map<ValueId, Tensor> values;
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    if (const Tensor* t = ctx.input(static_cast<int>(i))) values[inputs_[i]] = *t;
  }
  for (const SubStep& s : steps_) {
    Inner inner(*this, ctx, values, s);
    s.kernel->run(inner);
  }
}

}  // namespace fx
