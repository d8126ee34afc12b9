// SPDX-License-Identifier: Apache-2.0
#include "runtime/string_adapter.h"

#include <algorithm>
#include <map>
#include <vector>

#include "runtime/delegating_context.h"
#include "util/error.h"

namespace fx {
namespace {

// Which outputs of an op carry its data type (the others are int64 indices or counts).
struct StringOp {
  const char* op;
  int data_outputs;  // outputs 0 .. data_outputs-1 carry data; -1: every output
};
constexpr StringOp kStringOps[] = {
    {"Concat", -1},       {"Gather", -1},       {"GatherElements", -1}, {"GatherND", -1},
    {"Slice", -1},        {"Transpose", -1},    {"Expand", -1},         {"Tile", -1},
    {"Split", -1},        {"Where", -1},        {"Compress", -1},       {"ReverseSequence", -1},
    {"DepthToSpace", -1}, {"SpaceToDepth", -1}, {"ScatterND", -1},      {"ScatterElements", -1},
    {"Scatter", -1},      {"Pad", -1},          {"OneHot", -1},         {"Trilu", -1},
    {"Unique", 1},        {"NonZero", 0},
};

const StringOp* string_op(const std::string& op_type) {
  for (const StringOp& s : kStringOps)
    if (op_type == s.op) return &s;
  return nullptr;
}

// The context the numeric kernel sees: string inputs as value numbers, data outputs
// kept aside for finish() to turn back into strings.
class NumberingContext final : public DelegatingContext {
 public:
  NumberingContext(KernelContext& real, int data_outputs) : DelegatingContext(real) {
    const int n = real.num_inputs();
    // The distinct strings in byte order, the empty string first (number 0).
    names_ = {{std::string(), 0}};
    for (int i = 0; i < n; ++i) {
      const Tensor* t = real.input(i);
      if (!t || !t->is_string()) continue;
      for (int64_t e = 0; e < t->numel(); ++e) names_.emplace(t->data<std::string>()[e], 0);
    }
    for (auto& [s, k] : names_) {
      k = static_cast<int64_t>(pool_.size());
      pool_.push_back(&s);
    }
    numbers_.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const Tensor* t = real.input(i);
      if (!t || !t->is_string()) continue;
      Tensor& k = numbers_[static_cast<std::size_t>(i)];
      k = Tensor(DType::Int64, t->dims());
      for (int64_t e = 0; e < t->numel(); ++e)
        k.data<int64_t>()[e] = names_.at(t->data<std::string>()[e]);
    }
    const int outs = real.num_outputs();
    results_.resize(static_cast<std::size_t>(outs));
    data_outputs_ = data_outputs < 0 ? outs : std::min(data_outputs, outs);
  }

  int num_inputs() const override { return outer_.num_inputs(); }
  const Tensor* input(int i) const override {
    if (i >= 0 && i < num_inputs() && numbers_[static_cast<std::size_t>(i)].defined())
      return &numbers_[static_cast<std::size_t>(i)];
    return outer_.input(i);
  }
  int num_outputs() const override { return outer_.num_outputs(); }
  Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) override {
    if (dtype != DType::Int64 || i < 0 || i >= data_outputs_) return outer_.output(i, dtype, dims);
    Tensor& r = results_[static_cast<std::size_t>(i)];
    r = Tensor(DType::Int64, dims);
    return r;
  }
  void alias_output(int i, const Tensor& src, const std::vector<int64_t>& dims) override {
    // A view of a numbered input: the same numbers under other dims.
    if (src.dtype() == DType::Int64 && i >= 0 && i < data_outputs_) {
      Tensor& r = results_[static_cast<std::size_t>(i)];
      r = Tensor(DType::Int64, dims);
      std::copy(src.data<int64_t>(), src.data<int64_t>() + src.numel(), r.data<int64_t>());
      return;
    }
    outer_.alias_output(i, src, dims);
  }

  // Each numbered data output as strings in the real context.
  void finish() {
    for (std::size_t k = 0; k < results_.size(); ++k) {
      const Tensor& r = results_[k];
      if (!r.defined()) continue;
      Tensor& y = outer_.output(static_cast<int>(k), DType::String, r.dims());
      std::string* out = y.data<std::string>();
      for (int64_t e = 0; e < r.numel(); ++e) {
        const int64_t at = r.data<int64_t>()[e];
        if (at < 0 || at >= static_cast<int64_t>(pool_.size()))
          throw Error(step_name() + ": string number " + std::to_string(at) + " out of range");
        out[e] = *pool_[static_cast<std::size_t>(at)];
      }
    }
  }

 private:
  std::map<std::string, int64_t> names_;  // string -> number
  std::vector<const std::string*> pool_;  // number -> string (keys of names_)
  std::vector<Tensor> numbers_;           // per input: its numbers, or undefined
  std::vector<Tensor> results_;           // per data output: numbers to read back
  int data_outputs_ = 0;
};

class StringAdapter final : public Kernel {
 public:
  StringAdapter(std::shared_ptr<Kernel> inner, int data_outputs)
      : inner_(std::move(inner)), data_outputs_(data_outputs) {}
  void run(KernelContext& ctx) override {
    bool strings = false;
    for (int i = 0; i < ctx.num_inputs(); ++i)
      strings = strings || (ctx.input(i) && ctx.input(i)->is_string());
    if (!strings) return inner_->run(ctx);
    NumberingContext numbered(ctx, data_outputs_);
    inner_->run(numbered);
    numbered.finish();
  }
  // String outputs are new tensors; other runs are the inner kernel's, views included.
  bool aliases_input() const override { return inner_->aliases_input(); }

 private:
  std::shared_ptr<Kernel> inner_;
  int data_outputs_;
};

}  // namespace

bool moves_strings(const std::string& op_type) {
  return string_op(op_type) != nullptr;
}

std::shared_ptr<Kernel> wrap_string_adapter(const std::string& op_type,
                                            std::shared_ptr<Kernel> inner) {
  const StringOp* s = string_op(op_type);
  if (!s) throw Error("no string adapter for " + op_type);
  return std::make_shared<StringAdapter>(std::move(inner), s->data_outputs);
}

}  // namespace fx
