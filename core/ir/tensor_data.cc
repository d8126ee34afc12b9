// SPDX-License-Identifier: Apache-2.0
#include "ir/tensor_data.h"

#include <cstring>

#include "util/error.h"

namespace fx {

std::shared_ptr<TensorData> TensorData::owned(DType dtype, std::vector<int64_t> dims,
                                              std::vector<std::byte> bytes) {
  auto t = std::make_shared<TensorData>();
  t->dtype_ = dtype;
  t->dims_ = std::move(dims);
  t->length_ = bytes.size();
  t->owned_ = std::move(bytes);
  return t;
}

std::shared_ptr<TensorData> TensorData::in_file(DType dtype, std::vector<int64_t> dims,
                                                std::shared_ptr<const MappedFile> file,
                                                std::size_t offset, std::size_t length) {
  if (!file || offset > file->size() || length > file->size() - offset)
    throw FileError(file ? file->path() : std::string("<no file>"),
                    "tensor data at offset " + std::to_string(offset) + " length " +
                        std::to_string(length) + " lies outside the file");
  auto t = std::make_shared<TensorData>();
  t->dtype_ = dtype;
  t->dims_ = std::move(dims);
  t->file_ = std::move(file);
  t->offset_ = offset;
  t->length_ = length;
  return t;
}

std::shared_ptr<TensorData> TensorData::from_floats(std::vector<int64_t> dims,
                                                    const std::vector<float>& values) {
  std::vector<std::byte> b(values.size() * sizeof(float));
  std::memcpy(b.data(), values.data(), b.size());
  return owned(DType::Float32, std::move(dims), std::move(b));
}

std::shared_ptr<TensorData> TensorData::from_int64s(std::vector<int64_t> dims,
                                                    const std::vector<int64_t>& values) {
  std::vector<std::byte> b(values.size() * sizeof(int64_t));
  std::memcpy(b.data(), values.data(), b.size());
  return owned(DType::Int64, std::move(dims), std::move(b));
}

std::shared_ptr<TensorData> TensorData::from_strings(std::vector<int64_t> dims,
                                                     std::vector<std::string> values) {
  auto t = std::make_shared<TensorData>();
  t->dtype_ = DType::String;
  t->dims_ = std::move(dims);
  if (static_cast<int64_t>(values.size()) != t->numel())
    throw Error("string tensor of " + std::to_string(t->numel()) + " elements given " +
                std::to_string(values.size()) + " strings");
  for (const auto& v : values) t->length_ += v.size();
  t->strings_ = std::move(values);
  return t;
}

int64_t TensorData::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::span<const std::byte> TensorData::bytes() const {
  if (dtype_ == DType::String) return {};
  if (file_) return file_->bytes().subspan(offset_, length_);
  return {owned_.data(), owned_.size()};
}

namespace {
template <class Out, class F>
std::vector<Out> convert(const TensorData& t, F&& cast) {
  std::vector<Out> out;
  auto b = t.bytes();
  const std::size_t es = dtype_size(t.dtype());
  if (es == 0) return out;
  const std::size_t n = b.size() / es;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(cast(b.data() + i * es));
  return out;
}

template <class Out>
Out read_as(DType dt, const std::byte* p) {
  auto get = [p]<class T>(T*) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return static_cast<Out>(v);
  };
  switch (dt) {
    case DType::Float32: return get((float*)nullptr);
    case DType::Float64: return get((double*)nullptr);
    case DType::Int8: return get((int8_t*)nullptr);
    case DType::UInt8: return get((uint8_t*)nullptr);
    case DType::Int16: return get((int16_t*)nullptr);
    case DType::UInt16: return get((uint16_t*)nullptr);
    case DType::Int32: return get((int32_t*)nullptr);
    case DType::UInt32: return get((uint32_t*)nullptr);
    case DType::Int64: return get((int64_t*)nullptr);
    case DType::UInt64: return get((uint64_t*)nullptr);
    case DType::Bool: return get((uint8_t*)nullptr);
    default: return Out{};
  }
}
}  // namespace

std::vector<int64_t> TensorData::to_int64s() const {
  return convert<int64_t>(*this,
                          [dt = dtype_](const std::byte* p) { return read_as<int64_t>(dt, p); });
}

std::vector<float> TensorData::to_floats() const {
  return convert<float>(*this, [dt = dtype_](const std::byte* p) { return read_as<float>(dt, p); });
}

}  // namespace fx
