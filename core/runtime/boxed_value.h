// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runtime values that are not one tensor: ONNX sequences and optionals, which
// control-flow models carry through Loop and If (a list of detections grown per
// iteration, an optional state).
//
// They live beside the tensors rather than inside Tensor: the executor keeps one
// BoxedPtr slot per value next to its Tensor slot, and only the kernels that take
// or make sequences/optionals (KernelContext::input_boxed / set_output_boxed) look
// at it. Every other kernel, the memory plan and the fused kernels stay tensor-only,
// and a Tensor stays a small view. Elements are owned tensors (arena memory is
// reused once a step is done), shared between copies of the box: boxes are
// immutable, an op that changes a sequence makes a new box.

#include <memory>
#include <vector>

#include "ir/graph.h"
#include "runtime/tensor.h"

namespace fx {

struct BoxedValue {
  ValueKind kind = ValueKind::Sequence;  // Sequence or Optional
  DType elem_dtype = DType::Undefined;
  // Sequence: its elements. Optional of a tensor: none (empty) or one.
  std::vector<Tensor> items;
  // Optional of a sequence, when it has one.
  std::shared_ptr<const BoxedValue> inner;

  bool optional_has_element() const { return !items.empty() || inner != nullptr; }
};
using BoxedPtr = std::shared_ptr<const BoxedValue>;

// One value as the executor's callers and control-flow kernels pass it: a tensor,
// or (boxed set) a sequence/optional.
struct RunValue {
  Tensor tensor;
  BoxedPtr boxed;
  bool is_boxed() const { return boxed != nullptr; }
};

}  // namespace fx
