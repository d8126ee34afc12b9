// SPDX-License-Identifier: Apache-2.0
#include "runtime/tensor_slices.h"

#include <cstring>

#include "util/error.h"

namespace fx {

namespace {

std::size_t element_bytes(const Tensor& t) {
  const std::size_t es = dtype_size(t.dtype());
  if (es == 0) throw Error("cannot slice a tensor of type " + std::string(dtype_name(t.dtype())));
  return es;
}

// Product of dims[from, to).
int64_t span(const std::vector<int64_t>& dims, std::size_t from, std::size_t to) {
  int64_t n = 1;
  for (std::size_t i = from; i < to; ++i) n *= dims[i];
  return n;
}

}  // namespace

int normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    throw Error(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Tensor range_along(const Tensor& t, int axis, int64_t begin, int64_t end) {
  const auto& dims = t.dims();
  const auto a = static_cast<std::size_t>(axis);
  if (a >= dims.size() || begin < 0 || end < begin || end > dims[a])
    throw Error("slice [" + std::to_string(begin) + ", " + std::to_string(end) + ") of axis " +
                std::to_string(axis) + " is out of range for " + t.str());
  std::vector<int64_t> out_dims = dims;
  out_dims[a] = end - begin;
  Tensor out(t.dtype(), out_dims);
  const std::size_t inner =
      static_cast<std::size_t>(span(dims, a + 1, dims.size())) * element_bytes(t);
  const int64_t outer = span(dims, 0, a);
  const std::size_t run = static_cast<std::size_t>(end - begin) * inner;
  if (run == 0) return out;
  const auto* src = static_cast<const char*>(t.raw());
  auto* dst = static_cast<char*>(out.raw());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + static_cast<std::size_t>(o) * run,
                src + (static_cast<std::size_t>(o * dims[a] + begin)) * inner, run);
  return out;
}

Tensor take_along(const Tensor& t, int axis, int64_t i) {
  std::vector<int64_t> dims = t.dims();
  Tensor slice = range_along(t, axis, i, i + 1);
  dims.erase(dims.begin() + axis);
  return slice.reshaped(dims);
}

Tensor concat_along(const std::vector<Tensor>& parts, int axis) {
  if (parts.empty()) throw Error("nothing to concatenate");
  const Tensor& first = parts.front();
  const auto a = static_cast<std::size_t>(axis);
  if (a >= first.rank()) throw Error("concat axis out of range for " + first.str());
  std::vector<int64_t> out_dims = first.dims();
  out_dims[a] = 0;
  for (const Tensor& p : parts) {
    bool same = p.dtype() == first.dtype() && p.rank() == first.rank();
    for (std::size_t d = 0; same && d < p.rank(); ++d)
      same = d == a || p.dims()[d] == first.dims()[d];
    if (!same) throw Error("cannot concatenate " + p.str() + " with " + first.str());
    out_dims[a] += p.dims()[a];
  }
  Tensor out(first.dtype(), out_dims);
  const std::size_t inner =
      static_cast<std::size_t>(span(out_dims, a + 1, out_dims.size())) * element_bytes(first);
  const int64_t outer = span(out_dims, 0, a);
  auto* dst = static_cast<char*>(out.raw());
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor& p : parts) {
      const std::size_t run = static_cast<std::size_t>(p.dims()[a]) * inner;
      if (run == 0) continue;
      std::memcpy(dst, static_cast<const char*>(p.raw()) + static_cast<std::size_t>(o) * run, run);
      dst += run;
    }
  }
  return out;
}

Tensor stack_along(const std::vector<Tensor>& parts, int axis) {
  if (parts.empty()) throw Error("nothing to stack");
  std::vector<Tensor> expanded;
  expanded.reserve(parts.size());
  for (const Tensor& p : parts) {
    if (p.dims() != parts.front().dims())
      throw Error("cannot stack " + p.str() + " with " + parts.front().str());
    std::vector<int64_t> dims = p.dims();
    if (axis < 0 || static_cast<std::size_t>(axis) > dims.size())
      throw Error("stack axis " + std::to_string(axis) + " out of range for " + p.str());
    dims.insert(dims.begin() + axis, 1);
    expanded.push_back(p.reshaped(dims));
  }
  return concat_along(expanded, axis);
}

}  // namespace fx
