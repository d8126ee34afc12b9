// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a step's code sees. A Kernel is built once per step (it may cache oneDNN
// primitives, reordered weights, parsed attributes) and run many times; at run time
// it reads its inputs and asks the context for its outputs, whose dims it computes
// from the actual input tensors. Output memory comes from the executor's memory plan.
//
// Fused kernels from codegen implement the same interface.

#include <memory>
#include <string>
#include <vector>

#include "runtime/boxed_value.h"
#include "runtime/tensor.h"

namespace fx {

class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual int num_inputs() const = 0;
  // nullptr for an omitted optional input (or i >= num_inputs()).
  virtual const Tensor* input(int i) const = 0;
  // Input i, which must be present; throws fx::Error naming the step otherwise.
  const Tensor& in(int i) const;
  virtual int num_outputs() const = 0;
  // Sets output i's dtype and dims and returns it backed by planned memory.
  virtual Tensor& output(int i, DType dtype, const std::vector<int64_t>& dims) = 0;
  // Makes output i a view of `src` (an input) with other dims: no copy. Only for
  // kernels whose aliases_input() is true.
  virtual void alias_output(int i, const Tensor& src, const std::vector<int64_t>& dims) = 0;
  // Sequence/optional values (runtime/boxed_value.h), for the few kernels that take
  // or make them: input i when it is boxed (null otherwise); output i set to a box.
  virtual BoxedPtr input_boxed(int i) const;
  virtual void set_output_boxed(int i, BoxedPtr value);
  // Intra-op thread count the kernel should use.
  virtual int threads() const = 0;
  // The model's default-domain opset (0: latest), for kernels that build kernels of
  // their own: a Loop or If body runs at the opset of the model that holds it.
  virtual int64_t opset() const { return 0; }
  // Name of the step, for error messages.
  virtual const std::string& step_name() const = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void run(KernelContext& ctx) = 0;
  // True when outputs may be views of input 0 (Reshape, Flatten, Squeeze, ...): the
  // memory plan then keeps input 0's buffer alive as long as those outputs.
  virtual bool aliases_input() const { return false; }
  // True when output 0 may be written over input 0's memory: the kernel reads each
  // element of input 0 before writing the same element of output 0, and output 0
  // has input 0's dtype and dims (unary elementwise ops). The memory plan then gives
  // output 0 input 0's slot when input 0 is read by no later step, as ONNX Runtime
  // does for such ops: the data stays in cache and no second buffer is touched.
  virtual bool may_write_over_input() const { return false; }
};

}  // namespace fx
