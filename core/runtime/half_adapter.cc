// SPDX-License-Identifier: Apache-2.0
#include "runtime/half_adapter.h"

#include <cstring>

#include "runtime/delegating_context.h"
#include "runtime/half.h"
#include "runtime/overwrite_input.h"
#include "util/error.h"

namespace fx {
namespace {

// `t` as a float32 tensor of `dims`, its memory kept from the previous run when the
// dims are the same (the adapter's buffers live as long as the step).
Tensor& reuse(Tensor& t, const std::vector<int64_t>& dims) {
  if (!t.defined() || t.dtype() != DType::Float32 || t.dims() != dims)
    t = Tensor(DType::Float32, dims);
  return t;
}

// The context the wrapped kernel sees: widened inputs; float32 outputs meant to
// be half go to temporaries that finish() narrows into the real outputs.
class WideningContext final : public DelegatingContext {
 public:
  // `wide` and `temps`: the adapter's buffers, reused run after run.
  WideningContext(KernelContext& real, const std::vector<DType>& out_types, DType seen_half,
                  std::vector<Tensor>& wide, std::vector<Tensor>& temps)
      : DelegatingContext(real),
        out_types_(out_types),
        seen_half_(seen_half),
        wide_(wide),
        temps_(temps) {
    const int n = real.num_inputs();
    wide_.resize(static_cast<std::size_t>(n));
    used_.assign(static_cast<std::size_t>(n), false);
    for (int i = 0; i < n; ++i) {
      const Tensor* t = real.input(i);
      if (!t || !dtype_is_half(t->dtype())) continue;
      Tensor& f = reuse(wide_[static_cast<std::size_t>(i)], t->dims());
      half_to_floats(t->dtype(), t->data<uint16_t>(), f.data<float>(), t->numel());
      used_[static_cast<std::size_t>(i)] = true;
    }
    temps_.resize(static_cast<std::size_t>(real.num_outputs()));
    narrow_to_.assign(temps_.size(), DType::Undefined);
  }

  int num_inputs() const override { return outer_.num_inputs(); }
  const Tensor* input(int i) const override {
    if (i >= 0 && i < num_inputs() && used_[static_cast<std::size_t>(i)])
      return &wide_[static_cast<std::size_t>(i)];
    return outer_.input(i);
  }
  int num_outputs() const override { return outer_.num_outputs(); }
  Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) override {
    // An index past the node's outputs is the real context's to refuse.
    if (i < 0 || i >= static_cast<int>(temps_.size())) return outer_.output(i, dtype, dims);
    const DType target = target_of(i);
    if (dtype == DType::Float32 && dtype_is_half(target)) {
      auto k = static_cast<std::size_t>(i);
      narrow_to_[k] = target;
      return reuse(temps_[k], dims);
    }
    return outer_.output(i, dtype, dims);
  }
  void alias_output(int i, const Tensor& src, const std::vector<int64_t>& dims) override {
    // A view of a widened input is a view of the original half input.
    for (std::size_t k = 0; k < wide_.size(); ++k) {
      if (used_[k] && wide_[k].raw() == src.raw()) {
        outer_.alias_output(i, *outer_.input(static_cast<int>(k)), dims);
        return;
      }
    }
    const DType target = target_of(i);
    if (src.dtype() == DType::Float32 && dtype_is_half(target)) {
      Tensor& y = outer_.output(i, target, dims);
      floats_to_half(target, src.data<float>(), y.data<uint16_t>(), src.numel());
      return;
    }
    outer_.alias_output(i, src, dims);
  }

  void finish() {
    for (std::size_t k = 0; k < temps_.size(); ++k) {
      if (narrow_to_[k] == DType::Undefined) continue;
      const Tensor& f = temps_[k];
      Tensor& y = outer_.output(static_cast<int>(k), narrow_to_[k], f.dims());
      floats_to_half(narrow_to_[k], f.data<float>(), y.data<uint16_t>(), f.numel());
    }
  }

 private:
  DType target_of(int i) const {
    DType d = i < static_cast<int>(out_types_.size()) ? out_types_[static_cast<std::size_t>(i)]
                                                      : DType::Undefined;
    return d == DType::Undefined ? seen_half_ : d;
  }

  const std::vector<DType>& out_types_;
  DType seen_half_;
  std::vector<Tensor>& wide_;
  std::vector<Tensor>& temps_;
  std::vector<bool> used_;  // inputs widened this run
  std::vector<DType> narrow_to_;
};

class HalfAdapter final : public Kernel, public OverwritesInput {
 public:
  HalfAdapter(std::shared_ptr<Kernel> inner, std::vector<DType> out_types)
      : inner_(std::move(inner)), out_types_(std::move(out_types)) {
    for (DType d : out_types_) any_half_out_ = any_half_out_ || dtype_is_half(d);
  }
  void run(KernelContext& ctx) override {
    DType seen = DType::Undefined;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (t && dtype_is_half(t->dtype())) seen = t->dtype();
    }
    if (seen == DType::Undefined && !any_half_out_) return inner_->run(ctx);
    WideningContext w(ctx, out_types_, seen, wide_, temps_);
    inner_->run(w);
    w.finish();
  }
  bool aliases_input() const override { return inner_->aliases_input(); }
  // Inputs are widened into temporaries before the kernel runs, so writing the
  // narrowed result over input 0 is as safe as the kernel's own promise.
  bool may_write_over_input() const override { return inner_->may_write_over_input(); }
  int overwritable_input() const override {
    const auto* o = dynamic_cast<const OverwritesInput*>(inner_.get());
    return o ? o->overwritable_input() : -1;
  }

 private:
  std::shared_ptr<Kernel> inner_;
  std::vector<DType> out_types_;
  bool any_half_out_ = false;
  // Widened inputs and float32 results to narrow, kept between runs (no allocation and
  // first-touch page faults at every run).
  std::vector<Tensor> wide_, temps_;
};

}  // namespace

bool has_half_constants(const Graph& g) {
  for (std::size_t v = 0; v < g.value_count(); ++v) {
    const Value& val = g.value(static_cast<ValueId>(v));
    if (val.is_constant() && dtype_is_half(val.data->dtype())) return true;
  }
  return false;
}

Graph widen_half_constants(const Graph& g) {
  Graph out = g;
  for (std::size_t v = 0; v < out.value_count(); ++v) {
    Value& val = out.value(static_cast<ValueId>(v));
    if (!val.is_constant() || !dtype_is_half(val.data->dtype())) continue;
    const Tensor h = Tensor::from_data(val.data);
    std::vector<std::byte> bytes(static_cast<std::size_t>(h.numel()) * sizeof(float));
    half_to_floats(h.dtype(), h.data<uint16_t>(), reinterpret_cast<float*>(bytes.data()),
                   h.numel());
    val.data = TensorData::owned(DType::Float32, h.dims(), std::move(bytes));
    val.dtype = DType::Float32;
  }
  return out;
}

std::shared_ptr<Kernel> wrap_half_adapter(std::shared_ptr<Kernel> inner,
                                          std::vector<DType> out_types) {
  return std::make_shared<HalfAdapter>(std::move(inner), std::move(out_types));
}

}  // namespace fx
