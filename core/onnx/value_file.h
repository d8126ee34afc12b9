// SPDX-License-Identifier: Apache-2.0
#pragma once
// ONNX test-data files of any value kind: a TensorProto, a SequenceProto of tensors
// or an OptionalProto (of a tensor or of a sequence of tensors), as the backend node
// tests of control-flow and sequence ops ship them. No ONNX types here.

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor_data.h"

namespace fx {

struct ValueFile {
  ValueKind kind = ValueKind::Tensor;
  // Tensor: one. Sequence: its elements. Optional: none when empty, else its tensor
  // or (optional_of_sequence) the sequence's elements.
  std::vector<std::shared_ptr<TensorData>> tensors;
  bool has_element = true;  // Optional only
  bool optional_of_sequence = false;
};

// Reads the file as `kind` says (the graph input's or output's kind). Throws
// FileError when the file is missing, does not parse, or holds maps or sparse tensors.
ValueFile read_value_file(const std::string& path, ValueKind kind);

}  // namespace fx
