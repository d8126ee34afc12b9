// SPDX-License-Identifier: Apache-2.0
#pragma once
// Element types of tensors. The numeric values follow onnx.TensorProto.DataType so
// that import and export are a cast, but nothing here depends on ONNX headers.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fx {

enum class DType : int32_t {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
};

// Bytes of one element; 0 for Undefined and String (variable size).
std::size_t dtype_size(DType t);
// Short lower-case name as ONNX spells it in text: "float32", "int64", ...
std::string_view dtype_name(DType t);
// Parses dtype_name() output back; Undefined when unknown.
DType dtype_from_name(std::string_view name);
// True when the numeric value is a known ONNX data type.
bool dtype_is_valid(int32_t onnx_type);
bool dtype_is_float(DType t);

}  // namespace fx
