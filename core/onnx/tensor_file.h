// SPDX-License-Identifier: Apache-2.0
#pragma once
// ONNX TensorProto files (the `input_0.pb` / `output_0.pb` of ONNX's test data and
// of `fxc run`) read into and written from TensorData. No ONNX types here; the
// runtime converts with Tensor::from_data / Tensor::to_tensor_data.

#include <memory>
#include <string>

#include "ir/tensor_data.h"

namespace fx {

// Reads one serialized TensorProto; `name` (optional) receives its name field.
// Throws FileError when the file is missing or is not a valid tensor.
std::shared_ptr<TensorData> read_tensor_file(const std::string& path, std::string* name = nullptr);

// Writes `data` as a TensorProto with raw_data; throws FileError on I/O failure.
void write_tensor_file(const std::string& path, const TensorData& data, const std::string& name);

}  // namespace fx
