// SPDX-License-Identifier: Apache-2.0
#include "runtime/tensor.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "runtime/half.h"
#include "util/error.h"

namespace fx {

int64_t dims_numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error("negative dimension in shape " + dims_str(dims));
    n *= d;
  }
  return n;
}

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

AlignedBuffer::~AlignedBuffer() {
  std::free(data_);
}

bool AlignedBuffer::reserve(std::size_t bytes) {
  if (bytes <= capacity_ && data_) return false;
  std::free(data_);
  // Large buffers on 2 MiB boundaries, marked for transparent huge pages (the usual
  // `madvise` setting gives them only to regions that ask): a kernel streaming a
  // 64 MiB tensor otherwise walks 16,384 pages, and its bandwidth then depended on
  // how its pages happened to fall (LayerNorm at 70% or 91% of the copy run to run).
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t align = bytes >= 2 * kHuge ? kHuge : kTensorAlignment;
  // Round up: aligned_alloc wants a multiple of the alignment; never zero bytes.
  std::size_t n = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
  data_ = std::aligned_alloc(align, n);
  if (!data_) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (align == kHuge) madvise(data_, n, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  capacity_ = n;
  return true;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims)
    : dtype_(dtype), dims_(std::move(dims)), numel_(dims_numel(dims_)) {
  if (dtype_ == DType::String) {
    auto strings = std::make_shared<std::vector<std::string>>(static_cast<std::size_t>(numel_));
    data_ = strings->data();
    storage_ = std::move(strings);
    return;
  }
  auto buf = std::make_shared<AlignedBuffer>(byte_size());
  data_ = buf->data();
  storage_ = std::move(buf);
}

Tensor Tensor::view(DType dtype, std::vector<int64_t> dims, const void* data,
                    std::shared_ptr<const void> keep_alive) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.numel_ = dims_numel(t.dims_);
  t.data_ = const_cast<void*>(data);
  t.storage_ = std::move(keep_alive);
  return t;
}

Tensor Tensor::from_data(const std::shared_ptr<TensorData>& data) {
  if (data->dtype() == DType::String) return from_strings(data->dims(), data->strings());
  auto bytes = data->bytes();
  std::size_t esize = std::max<std::size_t>(dtype_size(data->dtype()), 1);
  if (reinterpret_cast<uintptr_t>(bytes.data()) % esize == 0) {
    return view(data->dtype(), data->dims(), bytes.data(), data);
  }
  Tensor t(data->dtype(), data->dims());
  std::memcpy(t.raw(), bytes.data(), std::min(bytes.size(), t.byte_size()));
  return t;
}

Tensor Tensor::from_floats(std::vector<int64_t> dims, const std::vector<float>& values) {
  Tensor t(DType::Float32, std::move(dims));
  if (static_cast<int64_t>(values.size()) != t.numel()) throw Error("from_floats: size mismatch");
  std::memcpy(t.raw(), values.data(), t.byte_size());
  return t;
}

Tensor Tensor::from_int64s(std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  Tensor t(DType::Int64, std::move(dims));
  if (static_cast<int64_t>(values.size()) != t.numel()) throw Error("from_int64s: size mismatch");
  std::memcpy(t.raw(), values.data(), t.byte_size());
  return t;
}

Tensor Tensor::from_int32s(std::vector<int64_t> dims, const std::vector<int32_t>& values) {
  Tensor t(DType::Int32, std::move(dims));
  if (static_cast<int64_t>(values.size()) != t.numel()) throw Error("from_int32s: size mismatch");
  std::memcpy(t.raw(), values.data(), t.byte_size());
  return t;
}

Tensor Tensor::from_bools(std::vector<int64_t> dims, const std::vector<bool>& values) {
  Tensor t(DType::Bool, std::move(dims));
  if (static_cast<int64_t>(values.size()) != t.numel()) throw Error("from_bools: size mismatch");
  for (std::size_t i = 0; i < values.size(); ++i) t.data<uint8_t>()[i] = values[i] ? 1 : 0;
  return t;
}

Tensor Tensor::from_strings(std::vector<int64_t> dims, const std::vector<std::string>& values) {
  Tensor t(DType::String, std::move(dims));
  if (static_cast<int64_t>(values.size()) != t.numel()) throw Error("from_strings: size mismatch");
  std::copy(values.begin(), values.end(), t.data<std::string>());
  return t;
}

std::size_t Tensor::string_bytes() const {
  std::size_t n = 0;
  if (is_string())
    for (int64_t i = 0; i < numel_; ++i) n += data<std::string>()[i].size();
  return n;
}

std::vector<std::string> Tensor::to_strings() const {
  if (!is_string()) throw Error("not a string tensor: " + str());
  return {data<std::string>(), data<std::string>() + numel_};
}

int64_t Tensor::dim(int64_t i) const {
  int64_t r = static_cast<int64_t>(dims_.size());
  if (i < 0) i += r;
  if (i < 0 || i >= r) throw Error("axis " + std::to_string(i) + " out of range for " + str());
  return dims_[static_cast<std::size_t>(i)];
}

Tensor Tensor::reshaped(std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  t.numel_ = dims_numel(t.dims_);
  if (t.numel_ != numel_) throw Error("cannot reshape " + str() + " to " + dims_str(t.dims_));
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, dims_);
  if (is_string())
    std::copy(data<std::string>(), data<std::string>() + numel_, t.data<std::string>());
  if (byte_size()) std::memcpy(t.raw(), data_, byte_size());
  return t;
}

namespace {
template <class Out>
std::vector<Out> convert(const Tensor& t) {
  std::vector<Out> out(static_cast<std::size_t>(t.numel()));
  auto n = out.size();
  auto cp = [&](auto* p) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Out>(p[i]);
  };
  switch (t.dtype()) {
    case DType::Float32: cp(t.data<float>()); break;
    case DType::Float64: cp(t.data<double>()); break;
    case DType::Int64: cp(t.data<int64_t>()); break;
    case DType::Int32: cp(t.data<int32_t>()); break;
    case DType::Int16: cp(t.data<int16_t>()); break;
    case DType::Int8: cp(t.data<int8_t>()); break;
    case DType::UInt8:
    case DType::Bool: cp(t.data<uint8_t>()); break;
    case DType::UInt16: cp(t.data<uint16_t>()); break;
    case DType::UInt32: cp(t.data<uint32_t>()); break;
    case DType::UInt64: cp(t.data<uint64_t>()); break;
    case DType::Float16:
    case DType::BFloat16: {
      const uint16_t* p = t.data<uint16_t>();
      const bool bf = t.dtype() == DType::BFloat16;
      for (std::size_t i = 0; i < n; ++i)
        out[i] = static_cast<Out>(bf ? bfloat16_to_float(p[i]) : half_to_float(p[i]));
      break;
    }
    default: throw Error("cannot convert " + t.str() + " to numbers");
  }
  return out;
}
}  // namespace

std::vector<float> Tensor::to_floats() const {
  return convert<float>(*this);
}
std::vector<int64_t> Tensor::to_int64s() const {
  return convert<int64_t>(*this);
}

std::shared_ptr<TensorData> Tensor::to_tensor_data() const {
  if (is_string()) return TensorData::from_strings(dims_, to_strings());
  std::vector<std::byte> bytes(byte_size());
  if (!bytes.empty()) std::memcpy(bytes.data(), data_, bytes.size());
  return TensorData::owned(dtype_, dims_, std::move(bytes));
}

std::string Tensor::str() const {
  return std::string(dtype_name(dtype_)) + dims_str(dims_);
}

void Tensor::reset_view(DType dtype, const std::vector<int64_t>& dims, void* data) {
  dtype_ = dtype;
  dims_.assign(dims.begin(), dims.end());
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  numel_ = n;
  data_ = data;
  storage_.reset();
}

}  // namespace fx
