// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bytes of a constant tensor (an initializer or a Constant node's value). Large
// data stays where the model keeps it, a mapped model file or external-data file,
// referenced by offset, until a kernel reads it.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/mapped_file.h"

namespace fx {

class TensorData {
 public:
  // Data owned in memory (small tensors, decoded typed fields, results of rewrites).
  static std::shared_ptr<TensorData> owned(DType dtype, std::vector<int64_t> dims,
                                           std::vector<std::byte> bytes);
  // Data that lives in a mapped file at [offset, offset + length).
  static std::shared_ptr<TensorData> in_file(DType dtype, std::vector<int64_t> dims,
                                             std::shared_ptr<const MappedFile> file,
                                             std::size_t offset, std::size_t length);
  // Convenience for tests and rewrites.
  static std::shared_ptr<TensorData> from_floats(std::vector<int64_t> dims,
                                                 const std::vector<float>& values);
  static std::shared_ptr<TensorData> from_int64s(std::vector<int64_t> dims,
                                                 const std::vector<int64_t>& values);
  // A string tensor (dtype String): its elements are held as strings, not bytes;
  // byte_size() is their total length.
  static std::shared_ptr<TensorData> from_strings(std::vector<int64_t> dims,
                                                  std::vector<std::string> values);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t numel() const;
  std::size_t byte_size() const { return length_; }
  // True when the bytes are still in a file mapping (not copied).
  bool is_file_backed() const { return file_ != nullptr; }
  // A string tensor's elements (empty for other types).
  const std::vector<std::string>& strings() const { return strings_; }
  // Little-endian raw bytes, numel() * dtype_size() of them (none for strings).
  std::span<const std::byte> bytes() const;

  template <class T>
  std::span<const T> as() const {
    auto b = bytes();
    return {reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T)};
  }
  // Elements converted to int64 / float (for shape-like and scalar constants).
  std::vector<int64_t> to_int64s() const;
  std::vector<float> to_floats() const;

 private:
  DType dtype_ = DType::Undefined;
  std::vector<int64_t> dims_;
  std::vector<std::byte> owned_;
  std::vector<std::string> strings_;
  std::shared_ptr<const MappedFile> file_;
  std::size_t offset_ = 0;
  std::size_t length_ = 0;
};

}  // namespace fx
