// SPDX-License-Identifier: Apache-2.0
#include "onnx/tensor_proto.h"

#include <cstring>
#include <limits>

#include "util/error.h"

namespace fx {
namespace {

template <class Src, class Dst = Src>
std::vector<std::byte> pack(const google::protobuf::RepeatedField<Src>& field) {
  std::vector<std::byte> out(static_cast<std::size_t>(field.size()) * sizeof(Dst));
  auto* p = reinterpret_cast<Dst*>(out.data());
  for (int i = 0; i < field.size(); ++i) p[i] = static_cast<Dst>(field.Get(i));
  return out;
}

// ONNX stores these types in int32_data, one element per int32.
std::vector<std::byte> pack_int32_field(const onnx::TensorProto& t, DType dtype) {
  switch (dtype) {
    case DType::Int32: return pack<int32_t>(t.int32_data());
    case DType::Int16: return pack<int32_t, int16_t>(t.int32_data());
    case DType::UInt16:
    case DType::Float16:
    case DType::BFloat16: return pack<int32_t, uint16_t>(t.int32_data());
    case DType::Int8: return pack<int32_t, int8_t>(t.int32_data());
    case DType::UInt8:
    case DType::Bool: return pack<int32_t, uint8_t>(t.int32_data());
    default: return {};
  }
}

}  // namespace

int64_t checked_numel(const std::vector<int64_t>& dims, const std::string& where,
                      const std::string& what) {
  // Absurd dims are an error, not a crash or a huge allocation.
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0) throw FileError(where, what + " has a negative dimension " + std::to_string(d));
    if (d != 0 && numel > std::numeric_limits<int64_t>::max() / d)
      throw FileError(where, what + " has dimensions whose product overflows");
    numel *= d;
  }
  return numel;
}

void check_data_size(int64_t numel, DType dtype, std::size_t bytes, const std::string& where,
                     const std::string& what) {
  const std::size_t es = dtype_size(dtype);
  if (es == 0) return;
  if (static_cast<uint64_t>(numel) > std::numeric_limits<std::size_t>::max() / es ||
      bytes != static_cast<std::size_t>(numel) * es)
    throw FileError(where, what + " declares " + std::to_string(numel) + " elements of " +
                               std::string(dtype_name(dtype)) + " but holds " +
                               std::to_string(bytes) + " bytes");
}

std::shared_ptr<TensorData> tensor_from_proto(const onnx::TensorProto& t, const std::string& where,
                                              const ExternalFileResolver& external) {
  const std::string what = "tensor '" + t.name() + "'";
  if (!dtype_is_valid(t.data_type()))
    throw FileError(where, what + " has unknown data type " + std::to_string(t.data_type()));
  auto dtype = static_cast<DType>(t.data_type());
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  const int64_t numel = checked_numel(dims, where, what);
  if (dtype == DType::String) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL || t.has_raw_data())
      throw FileError(where, what +
                                 " is a string tensor stored as raw or external bytes "
                                 "(ONNX keeps strings in string_data)");
    if (t.string_data_size() != numel)
      throw FileError(where, what + " declares " + std::to_string(numel) + " strings but holds " +
                                 std::to_string(t.string_data_size()));
    return TensorData::from_strings(std::move(dims),
                                    {t.string_data().begin(), t.string_data().end()});
  }
  auto check_size = [&](std::size_t bytes) { check_data_size(numel, dtype, bytes, where, what); };

  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    std::size_t offset = 0, length = 0;
    bool has_length = false;
    for (const auto& kv : t.external_data()) {
      try {
        if (kv.key() == "location") location = kv.value();
        if (kv.key() == "offset") offset = std::stoull(kv.value());
        if (kv.key() == "length") length = std::stoull(kv.value()), has_length = true;
      } catch (const std::exception&) {
        throw FileError(
            where, what + " has an invalid external_data " + kv.key() + " '" + kv.value() + "'");
      }
    }
    if (location.empty()) throw FileError(where, what + " is external but names no location");
    auto file = external(location);
    if (!has_length) length = file->size() >= offset ? file->size() - offset : 0;
    check_size(length);
    try {
      return TensorData::in_file(dtype, std::move(dims), std::move(file), offset, length);
    } catch (const FileError& e) {
      throw FileError(where, what + ": " + e.what());
    }
  }

  std::vector<std::byte> bytes;
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    bytes.resize(raw.size());
    if (!raw.empty()) std::memcpy(bytes.data(), raw.data(), raw.size());  // data() may be null
  } else if (t.float_data_size()) {
    bytes = pack<float>(t.float_data());
  } else if (t.int32_data_size()) {
    bytes = pack_int32_field(t, dtype);
  } else if (t.int64_data_size()) {
    bytes = pack<int64_t>(t.int64_data());
  } else if (t.double_data_size()) {
    bytes = pack<double>(t.double_data());
  } else if (t.uint64_data_size()) {
    bytes = dtype == DType::UInt32 ? pack<uint64_t, uint32_t>(t.uint64_data())
                                   : pack<uint64_t>(t.uint64_data());
  }
  check_size(bytes.size());
  return TensorData::owned(dtype, std::move(dims), std::move(bytes));
}

void tensor_to_proto(const TensorData& data, const std::string& name, onnx::TensorProto& out) {
  out.Clear();
  out.set_name(name);
  out.set_data_type(static_cast<int32_t>(data.dtype()));
  for (int64_t d : data.dims()) out.add_dims(d);
  if (data.dtype() == DType::String) {
    for (const auto& v : data.strings()) out.add_string_data(v);
    return;
  }
  auto b = data.bytes();
  out.set_raw_data(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace fx
