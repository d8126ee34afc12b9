// SPDX-License-Identifier: Apache-2.0
#pragma once
// A read-only file mapped into memory. Model weights are referenced inside it by
// offset, so opening a 350 MB model touches only the pages of its graph structure.

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace fx {

class MappedFile {
 public:
  // Throws FileError naming the path when it cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }

 private:
  MappedFile() = default;
  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace fx
