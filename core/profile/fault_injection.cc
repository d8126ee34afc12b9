// SPDX-License-Identifier: Apache-2.0
#include "profile/fault_injection.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <thread>

#include "runtime/delegating_context.h"
#include "util/error.h"

namespace fx {
namespace {

// Forwards to the real context and remembers the outputs the kernel asked for.
class RecordingContext final : public DelegatingContext {
 public:
  explicit RecordingContext(KernelContext& inner) : DelegatingContext(inner) {}
  int num_inputs() const override { return outer_.num_inputs(); }
  const Tensor* input(int i) const override { return outer_.input(i); }
  int num_outputs() const override { return outer_.num_outputs(); }
  Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) override {
    Tensor& t = outer_.output(i, dtype, dims);
    written_.push_back(&t);
    return t;
  }
  void alias_output(int i, const Tensor& src, const std::vector<int64_t>& dims) override {
    outer_.alias_output(i, src, dims);
  }
  const std::vector<Tensor*>& written() const { return written_; }

 private:
  std::vector<Tensor*> written_;
};

class BrokenKernel final : public Kernel {
 public:
  BrokenKernel(std::shared_ptr<Kernel> inner, FaultSpec::Mode mode)
      : inner_(std::move(inner)), mode_(mode) {}
  void run(KernelContext& ctx) override {
    if (mode_ == FaultSpec::Mode::Crash) std::raise(SIGSEGV);
    RecordingContext rec(ctx);
    inner_->run(rec);
    if (mode_ == FaultSpec::Mode::Slow) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return;
    }
    for (Tensor* t : rec.written())
      if (t->dtype() == DType::Float32)
        for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] += 1.0f;
  }
  bool aliases_input() const override { return inner_->aliases_input(); }

 private:
  std::shared_ptr<Kernel> inner_;
  FaultSpec::Mode mode_;
};

}  // namespace

FaultSpec parse_fault_spec(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw Error("FXC_TEST_BREAK_GROUP: expected GROUP:wrong, GROUP:crash or GROUP:slow, got '" +
                text + "'");
  FaultSpec f;
  f.selector = text.substr(0, colon);
  std::string mode = text.substr(colon + 1);
  if (mode == "wrong")
    f.mode = FaultSpec::Mode::Wrong;
  else if (mode == "crash")
    f.mode = FaultSpec::Mode::Crash;
  else if (mode == "slow")
    f.mode = FaultSpec::Mode::Slow;
  else
    throw Error("FXC_TEST_BREAK_GROUP: mode must be wrong, crash or slow, got '" + mode + "'");
  return f;
}

std::shared_ptr<Kernel> broken_kernel(std::shared_ptr<Kernel> kernel, FaultSpec::Mode mode) {
  return std::make_shared<BrokenKernel>(std::move(kernel), mode);
}

namespace {

// The group that `fault.selector` names: an id, or #N, the plan's N-th group.
GroupBuild* fault_target(FusedProgram& p, const std::string& selector) {
  if (!selector.empty() && selector[0] == '#') {
    auto n = static_cast<std::size_t>(std::stoul(selector.substr(1)));
    return n < p.groups.size() ? &p.groups[n] : nullptr;
  }
  for (auto& b : p.groups)
    if (b.id == selector) return &b;
  return nullptr;
}

}  // namespace

void inject_fault(FusedProgram& p, const FaultSpec& fault) {
  GroupBuild* b = fault_target(p, fault.selector);
  if (!b) {
    spdlog::warn("FXC_TEST_BREAK_GROUP: no group '{}' in the plan", fault.selector);
    return;
  }
  if (!b->step) return;  // excluded: nothing runs that could be broken
  spdlog::warn("FXC_TEST_BREAK_GROUP: breaking the kernel of group {} on purpose", b->id);
  b->step->kernel = broken_kernel(b->step->kernel, fault.mode);
  for (auto& s : p.steps)
    if (s.name == b->id) s.kernel = b->step->kernel;
}

}  // namespace fx
