// SPDX-License-Identifier: Apache-2.0
#include "ir/dtype.h"

#include <array>

namespace fx {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 17> kInfo = {{
    {DType::Undefined, "undefined", 0},
    {DType::Float32, "float32", 4},
    {DType::UInt8, "uint8", 1},
    {DType::Int8, "int8", 1},
    {DType::UInt16, "uint16", 2},
    {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},
    {DType::Int64, "int64", 8},
    {DType::String, "string", 0},
    {DType::Bool, "bool", 1},
    {DType::Float16, "float16", 2},
    {DType::Float64, "float64", 8},
    {DType::UInt32, "uint32", 4},
    {DType::UInt64, "uint64", 8},
    {DType::Complex64, "complex64", 8},
    {DType::Complex128, "complex128", 16},
    {DType::BFloat16, "bfloat16", 2},
}};

const DTypeInfo& info(DType t) {
  auto i = static_cast<std::size_t>(t);
  return i < kInfo.size() ? kInfo[i] : kInfo[0];
}

}  // namespace

std::size_t dtype_size(DType t) {
  return info(t).size;
}
std::string_view dtype_name(DType t) {
  return info(t).name;
}

DType dtype_from_name(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  if (name == "float") return DType::Float32;
  if (name == "double") return DType::Float64;
  return DType::Undefined;
}

bool dtype_is_valid(int32_t onnx_type) {
  return onnx_type > 0 && onnx_type < static_cast<int32_t>(kInfo.size());
}

bool dtype_is_float(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16 || t == DType::Float64;
}

}  // namespace fx
