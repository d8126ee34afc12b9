// SPDX-License-Identifier: Apache-2.0
#include "runtime/string_adapter.h"

#include <set>
#include <vector>

#include "util/error.h"

namespace fx {
namespace {

// The context the numeric kernel sees: string inputs as element numbers, int64
// outputs kept aside for finish() to turn back into strings.
class NumberingContext final : public KernelContext {
 public:
  explicit NumberingContext(KernelContext& real) : real_(real) {
    const int n = real.num_inputs();
    numbers_.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const Tensor* t = real.input(i);
      if (!t || !t->is_string()) continue;
      Tensor& k = numbers_[static_cast<std::size_t>(i)];
      k = Tensor(DType::Int64, t->dims());
      const std::string* s = t->data<std::string>();
      for (int64_t e = 0; e < t->numel(); ++e) {
        k.data<int64_t>()[e] = static_cast<int64_t>(pool_.size());
        pool_.push_back(&s[e]);
      }
    }
    results_.resize(static_cast<std::size_t>(real.num_outputs()));
  }

  int num_inputs() const override { return real_.num_inputs(); }
  const Tensor* input(int i) const override {
    if (i >= 0 && i < num_inputs() && numbers_[static_cast<std::size_t>(i)].defined())
      return &numbers_[static_cast<std::size_t>(i)];
    return real_.input(i);
  }
  int num_outputs() const override { return real_.num_outputs(); }
  Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) override {
    if (dtype != DType::Int64 || i < 0 || i >= num_outputs()) return real_.output(i, dtype, dims);
    Tensor& r = results_[static_cast<std::size_t>(i)];
    r = Tensor(DType::Int64, dims);
    return r;
  }
  void alias_output(int i, const Tensor& src, const std::vector<int64_t>& dims) override {
    // A view of a numbered input: the same numbers under other dims.
    if (src.dtype() == DType::Int64 && i >= 0 && i < num_outputs()) {
      Tensor& r = results_[static_cast<std::size_t>(i)];
      r = Tensor(DType::Int64, dims);
      std::copy(src.data<int64_t>(), src.data<int64_t>() + src.numel(), r.data<int64_t>());
      return;
    }
    real_.alias_output(i, src, dims);
  }
  int threads() const override { return real_.threads(); }
  const std::string& step_name() const override { return real_.step_name(); }

  // Each numbered output as strings in the real context.
  void finish() {
    for (std::size_t k = 0; k < results_.size(); ++k) {
      const Tensor& r = results_[k];
      if (!r.defined()) continue;
      Tensor& y = real_.output(static_cast<int>(k), DType::String, r.dims());
      std::string* out = y.data<std::string>();
      for (int64_t e = 0; e < r.numel(); ++e) {
        const int64_t at = r.data<int64_t>()[e];
        if (at < 0 || at >= static_cast<int64_t>(pool_.size()))
          throw Error(step_name() + ": string element " + std::to_string(at) + " out of range");
        out[e] = *pool_[static_cast<std::size_t>(at)];
      }
    }
  }

 private:
  KernelContext& real_;
  std::vector<Tensor> numbers_;           // per input: its element numbers, or undefined
  std::vector<const std::string*> pool_;  // element number -> string, inputs in order
  std::vector<Tensor> results_;           // per output: numbers to read back, or undefined
};

class StringAdapter final : public Kernel {
 public:
  explicit StringAdapter(std::shared_ptr<Kernel> inner) : inner_(std::move(inner)) {}
  void run(KernelContext& ctx) override {
    bool strings = false;
    for (int i = 0; i < ctx.num_inputs(); ++i)
      strings = strings || (ctx.input(i) && ctx.input(i)->is_string());
    if (!strings) return inner_->run(ctx);
    NumberingContext numbered(ctx);
    inner_->run(numbered);
    numbered.finish();
  }
  // String outputs are new tensors; other runs are the inner kernel's, views included.
  bool aliases_input() const override { return inner_->aliases_input(); }

 private:
  std::shared_ptr<Kernel> inner_;
};

}  // namespace

bool moves_strings(const std::string& op_type) {
  static const std::set<std::string> ops = {
      "Concat",          "Gather",          "GatherElements", "GatherND",     "Slice",
      "Transpose",       "Expand",          "Tile",           "Split",        "Where",
      "Compress",        "ReverseSequence", "DepthToSpace",   "SpaceToDepth", "ScatterND",
      "ScatterElements", "Scatter"};
  return ops.count(op_type) != 0;
}

std::shared_ptr<Kernel> wrap_string_adapter(std::shared_ptr<Kernel> inner) {
  return std::make_shared<StringAdapter>(std::move(inner));
}

}  // namespace fx
