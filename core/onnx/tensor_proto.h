// SPDX-License-Identifier: Apache-2.0
#pragma once
// Conversion between onnx::TensorProto and the IR's TensorData.

#include <onnx/onnx_pb.h>

#include <functional>
#include <memory>
#include <string>

#include "ir/mapped_file.h"
#include "ir/tensor_data.h"

namespace fx {

// Resolves an external-data location (as written in the model) to a mapped file;
// throws FileError when it is missing.
using ExternalFileResolver =
    std::function<std::shared_ptr<const MappedFile>(const std::string& location)>;

// Decodes a TensorProto. `where` names the file for error messages. Data in typed
// fields (float_data, int64_data, ...) and small raw_data are copied; external data
// stays in its mapped file. Throws FileError when the data does not match the dims.
std::shared_ptr<TensorData> tensor_from_proto(const onnx::TensorProto& t, const std::string& where,
                                              const ExternalFileResolver& external);

// Element count of dims; throws FileError(where, what + cause) on a negative dim or
// an overflowing product.
int64_t checked_numel(const std::vector<int64_t>& dims, const std::string& where,
                      const std::string& what);

// Throws FileError unless `bytes` is exactly numel elements of dtype.
void check_data_size(int64_t numel, DType dtype, std::size_t bytes, const std::string& where,
                     const std::string& what);

// Encodes TensorData as a TensorProto with raw_data.
void tensor_to_proto(const TensorData& data, const std::string& name, onnx::TensorProto& out);

}  // namespace fx
