// SPDX-License-Identifier: Apache-2.0
#include "ir/shape.h"

#include <limits>

namespace fx {

Shape Shape::of(const std::vector<int64_t>& dims) {
  std::vector<Dim> d;
  d.reserve(dims.size());
  for (int64_t v : dims) d.push_back(v >= 0 ? Dim::fixed(v) : Dim{});
  return Shape(std::move(d));
}

bool Shape::is_static() const {
  if (!known_) return false;
  for (const auto& d : dims_)
    if (!d.is_static()) return false;
  return true;
}

std::optional<int64_t> Shape::numel() const {
  if (!is_static()) return std::nullopt;
  int64_t n = 1;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (const auto& d : dims_) {
    if (d.value != 0 && n > kMax / d.value) return kMax;
    n *= d.value;
  }
  return n;
}

std::vector<int64_t> Shape::static_dims() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const auto& d : dims_) out.push_back(d.value);
  return out;
}

std::string Shape::str() const {
  if (!known_) return "?";
  std::string s = "[";
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ',';
    if (dims_[i].is_static())
      s += std::to_string(dims_[i].value);
    else if (!dims_[i].symbol.empty())
      s += dims_[i].symbol;
    else
      s += '?';
  }
  return s + "]";
}

}  // namespace fx
