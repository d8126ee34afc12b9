// SPDX-License-Identifier: Apache-2.0
#pragma once
// A runtime tensor: element type, dims, and a pointer into memory it either owns
// (64-byte aligned, shared between copies of the Tensor) or merely views (an
// executor arena slot, a constant's bytes, a caller's buffer).
//
//   Tensor t(DType::Float32, {1, 3, 224, 224});   // owned, uninitialized
//   float* p = t.data<float>();
//   Tensor c = Tensor::from_data(value.data);      // view of constant bytes
//   Tensor v = t.reshaped({3, 224 * 224});         // view sharing t's storage
//
// Copying a Tensor is cheap (it shares storage); clone() makes a deep copy.
//
// A string tensor (DType::String) holds std::string elements in an owned array:
// data<std::string>() reads and writes them; it has no raw bytes (byte_size() is 0,
// string_bytes() the total length), so byte-copying kernels cannot take it by mistake.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/tensor_data.h"

namespace fx {

inline constexpr std::size_t kTensorAlignment = 64;

// Element count of dims (1 for a scalar); throws fx::Error on a negative dim.
int64_t dims_numel(const std::vector<int64_t>& dims);
// "[1,3,224,224]"
std::string dims_str(const std::vector<int64_t>& dims);

// An aligned heap block that can grow (contents are not preserved on growth).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes) { reserve(bytes); }
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  // Ensures capacity() >= bytes; returns true when it had to reallocate.
  bool reserve(std::size_t bytes);
  void* data() const { return data_; }
  std::size_t capacity() const { return capacity_; }

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

class Tensor {
 public:
  Tensor() = default;
  // Owned, 64-byte aligned, uninitialized storage.
  Tensor(DType dtype, std::vector<int64_t> dims);
  // A view of memory owned elsewhere; `keep_alive` (optional) is held while the
  // Tensor or a copy of it lives.
  static Tensor view(DType dtype, std::vector<int64_t> dims, const void* data,
                     std::shared_ptr<const void> keep_alive = {});
  // A view of constant data (copied into aligned memory when the bytes are not
  // aligned to the element size, e.g. raw_data at an odd offset in a model file).
  static Tensor from_data(const std::shared_ptr<TensorData>& data);
  // Convenience constructors for tests and shape computations.
  static Tensor from_floats(std::vector<int64_t> dims, const std::vector<float>& values);
  static Tensor from_int64s(std::vector<int64_t> dims, const std::vector<int64_t>& values);
  static Tensor from_int32s(std::vector<int64_t> dims, const std::vector<int32_t>& values);
  static Tensor from_bools(std::vector<int64_t> dims, const std::vector<bool>& values);
  static Tensor from_strings(std::vector<int64_t> dims, const std::vector<std::string>& values);

  bool defined() const { return dtype_ != DType::Undefined; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::size_t rank() const { return dims_.size(); }
  // dims()[i], with negative i counting from the end.
  int64_t dim(int64_t i) const;
  int64_t numel() const { return numel_; }
  std::size_t byte_size() const { return static_cast<std::size_t>(numel_) * dtype_size(dtype_); }
  bool is_string() const { return dtype_ == DType::String; }
  // Total length of a string tensor's elements (0 for other types).
  std::size_t string_bytes() const;

  template <class T>
  T* data() { return static_cast<T*>(data_); }
  template <class T>
  const T* data() const { return static_cast<const T*>(data_); }
  void* raw() { return data_; }
  const void* raw() const { return data_; }

  // A view with other dims and the same storage; numel must match.
  Tensor reshaped(std::vector<int64_t> dims) const;
  // Deep copy into owned storage.
  Tensor clone() const;
  // Elements converted (any integer/float/bool dtype); for shapes, scalars, tests.
  // A string tensor's elements.
  std::vector<std::string> to_strings() const;
  std::vector<float> to_floats() const;
  std::vector<int64_t> to_int64s() const;
  // An owned TensorData copy (for export to TensorProto files).
  std::shared_ptr<TensorData> to_tensor_data() const;
  // "float32[1,3,224,224]"
  std::string str() const;

  // Re-points this tensor at other memory, reusing the dims vector's capacity so
  // that the executor's per-run bookkeeping does not allocate.
  void reset_view(DType dtype, const std::vector<int64_t>& dims, void* data);

 private:
  DType dtype_ = DType::Undefined;
  std::vector<int64_t> dims_;
  int64_t numel_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<const void> storage_;  // owner of data_, when any
};

}  // namespace fx
