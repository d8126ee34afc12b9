// SPDX-License-Identifier: Apache-2.0
#pragma once
// A kernel context that runs a kernel on behalf of another one (`outer`): the adapters
// that convert a kernel's tensors (half_adapter, string_adapter), the sub-steps of a
// composite kernel, a generated epilogue, a recorder. What holds for the whole step
// (the thread count, the model's opset, the step's name) comes from the outer context
// here, once, so that an adapter cannot drop one: KernelContext::opset() defaults to 0
// (latest), and a wrapper that forgot to forward it ran Loop and If bodies at the wrong
// opset without a sign. Derived classes say what they do differently: their tensors.

#include <string>

#include "runtime/kernel.h"

namespace fx {

class DelegatingContext : public KernelContext {
 public:
  explicit DelegatingContext(KernelContext& outer) : outer_(outer) {}
  int threads() const override { return outer_.threads(); }
  int64_t opset() const override { return outer_.opset(); }
  const std::string& step_name() const override { return outer_.step_name(); }

 protected:
  KernelContext& outer_;
};

}  // namespace fx
