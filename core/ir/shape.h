// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tensor shapes with static and symbolic dimensions. A Shape may be of unknown rank
// (shape inference could not say anything), or of known rank with some dims unknown
// or named ("batch").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fx {

struct Dim {
  int64_t value = -1;  // >= 0 when static
  std::string symbol;  // non-empty for a named symbolic dim

  static Dim fixed(int64_t v) { return Dim{v, {}}; }
  static Dim named(std::string s) { return Dim{-1, std::move(s)}; }
  bool is_static() const { return value >= 0; }
  bool operator==(const Dim&) const = default;
};

class Shape {
 public:
  Shape() = default;  // unknown rank
  explicit Shape(std::vector<Dim> dims) : dims_(std::move(dims)), known_(true) {}
  static Shape of(const std::vector<int64_t>& dims);
  static Shape scalar() { return Shape(std::vector<Dim>{}); }

  bool rank_known() const { return known_; }
  std::size_t rank() const { return dims_.size(); }
  const std::vector<Dim>& dims() const { return dims_; }
  const Dim& operator[](std::size_t i) const { return dims_[i]; }
  // True when the rank and every dim are known numbers.
  bool is_static() const;
  // Element count; nullopt unless is_static(). Saturates instead of overflowing.
  std::optional<int64_t> numel() const;
  // The static dims; only meaningful when is_static().
  std::vector<int64_t> static_dims() const;
  // "[1,3,224,224]", "[batch,768]", "[?,?]" or "?" for unknown rank.
  std::string str() const;

  bool operator==(const Shape&) const = default;

 private:
  std::vector<Dim> dims_;
  bool known_ = false;
};

}  // namespace fx
