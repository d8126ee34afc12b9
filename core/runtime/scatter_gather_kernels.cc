// SPDX-License-Identifier: Apache-2.0
// Kernels that move elements by index or by mask: GatherND, ScatterND,
// ScatterElements (and the deprecated Scatter), OneHot, Compress, NonZero, Unique,
// EyeLike and ReverseSequence. Plain loops over any element type: none is in a
// corpus model's hot path (detection heads run them on a few hundred boxes). The
// outputs of Compress, NonZero and Unique are sized by the data.

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>

#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"

namespace fx {
namespace {

int64_t prod(const std::vector<int64_t>& d, std::size_t from, std::size_t to) {
  int64_t p = 1;
  for (std::size_t i = from; i < to && i < d.size(); ++i) p *= d[i];
  return p;
}

// Index `v` into a dim of size `dim`, negative counting from the end.
int64_t checked_index(int64_t v, int64_t dim, const char* op) {
  const int64_t i = v < 0 ? v + dim : v;
  if (i < 0 || i >= dim)
    throw Error(std::string(op) + ": index " + std::to_string(v) +
                " is out of range for a dim of " + std::to_string(dim));
  return i;
}

enum class Reduction { None, Add, Mul, Max, Min };

Reduction parse_reduction(const Node& n) {
  const std::string r = n.attrs.get_string("reduction", "none");
  if (r == "none") return Reduction::None;
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  if (r == "max") return Reduction::Max;
  if (r == "min") return Reduction::Min;
  throw Error("unknown reduction '" + r + "'");
}

template <class T>
void combine(T& dst, T v, Reduction r) {
  switch (r) {
    case Reduction::None: dst = v; break;
    case Reduction::Add: dst = static_cast<T>(dst + v); break;
    case Reduction::Mul: dst = static_cast<T>(dst * v); break;
    case Reduction::Max: dst = std::max(dst, v); break;
    case Reduction::Min: dst = std::min(dst, v); break;
  }
}

// ---- GatherND / ScatterND ------------------------------------------------------

// Element offsets into `data` of the slices that the last dim of `indices` names,
// one per index tuple, with `batch_dims` leading dims shared by both.
struct NdIndex {
  std::vector<int64_t> offsets;
  int64_t slice = 1;  // elements per slice
};

NdIndex nd_offsets(const Tensor& data, const Tensor& indices, int64_t batch_dims, const char* op) {
  if (indices.rank() < 1) throw Error(std::string(op) + ": indices must have rank >= 1");
  const auto& dd = data.dims();
  const auto& id = indices.dims();
  const int64_t k = id.back();
  const std::size_t b = static_cast<std::size_t>(batch_dims);
  if (batch_dims < 0 || b >= id.size() || b > dd.size() || k < 0 ||
      b + static_cast<std::size_t>(k) > dd.size())
    throw Error(std::string(op) + ": indices " + indices.str() + " do not fit data " + data.str() +
                " with batch_dims " + std::to_string(batch_dims));
  for (std::size_t i = 0; i < b; ++i)
    if (dd[i] != id[i])
      throw Error(std::string(op) + ": batch dims of indices " + indices.str() + " and data " +
                  data.str() + " differ");
  NdIndex r;
  r.slice = prod(dd, b + static_cast<std::size_t>(k), dd.size());
  const auto strides = contiguous_strides(dd);
  const int64_t batches = prod(dd, 0, b);
  const int64_t per_batch = prod(id, b, id.size() - 1);
  const int64_t batch_stride = prod(dd, b, dd.size());
  const auto idx = indices.to_int64s();
  r.offsets.resize(static_cast<std::size_t>(batches * per_batch));
  for (int64_t bt = 0; bt < batches; ++bt)
    for (int64_t t = 0; t < per_batch; ++t) {
      const int64_t* tuple = idx.data() + (bt * per_batch + t) * k;
      int64_t off = bt * batch_stride;
      for (int64_t j = 0; j < k; ++j)
        off += checked_index(tuple[j], dd[b + j], op) * strides[b + j];
      r.offsets[static_cast<std::size_t>(bt * per_batch + t)] = off;
    }
  return r;
}

void gather_nd(KernelContext& ctx, int64_t batch_dims) {
  const Tensor& data = ctx.in(0);
  const Tensor& indices = ctx.in(1);
  const NdIndex ix = nd_offsets(data, indices, batch_dims, "GatherND");
  std::vector<int64_t> od(indices.dims().begin(), indices.dims().end() - 1);
  const std::size_t tail = static_cast<std::size_t>(batch_dims + indices.dims().back());
  od.insert(od.end(), data.dims().begin() + static_cast<std::ptrdiff_t>(tail), data.dims().end());
  Tensor& y = ctx.output(0, data.dtype(), od);
  const std::size_t es = dtype_size(data.dtype());
  const auto* src = static_cast<const uint8_t*>(data.raw());
  auto* dst = static_cast<uint8_t*>(y.raw());
  const std::size_t bytes = static_cast<std::size_t>(ix.slice) * es;
  for (std::size_t i = 0; i < ix.offsets.size(); ++i)
    std::memcpy(dst + i * bytes, src + static_cast<std::size_t>(ix.offsets[i]) * es, bytes);
}

void scatter_nd(KernelContext& ctx, Reduction red) {
  const Tensor& data = ctx.in(0);
  const Tensor& indices = ctx.in(1);
  const Tensor& updates = ctx.in(2);
  const NdIndex ix = nd_offsets(data, indices, 0, "ScatterND");
  if (updates.numel() != static_cast<int64_t>(ix.offsets.size()) * ix.slice ||
      updates.dtype() != data.dtype())
    throw Error("ScatterND: updates " + updates.str() + " do not match indices " + indices.str() +
                " into data " + data.str());
  Tensor& y = ctx.output(0, data.dtype(), data.dims());
  std::memcpy(y.raw(), data.raw(), data.byte_size());
  dispatch_all(data.dtype(), "ScatterND", [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data<T>();
    const T* up = updates.data<T>();
    for (std::size_t i = 0; i < ix.offsets.size(); ++i)
      for (int64_t j = 0; j < ix.slice; ++j)
        combine(out[ix.offsets[i] + j], up[static_cast<int64_t>(i) * ix.slice + j], red);
  });
}

// ---- ScatterElements ---------------------------------------------------------------

void scatter_elements(KernelContext& ctx, int64_t axis_attr, Reduction red) {
  const Tensor& data = ctx.in(0);
  const Tensor& indices = ctx.in(1);
  const Tensor& updates = ctx.in(2);
  if (indices.rank() != data.rank() || updates.dims() != indices.dims() ||
      updates.dtype() != data.dtype())
    throw Error("ScatterElements: indices " + indices.str() + " and updates " + updates.str() +
                " must have one shape and data " + data.str() + "'s rank");
  const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(data.rank()));
  Tensor& y = ctx.output(0, data.dtype(), data.dims());
  std::memcpy(y.raw(), data.raw(), data.byte_size());
  const auto ds = contiguous_strides(data.dims());
  const auto& id = indices.dims();
  const auto& dd = data.dims();
  const auto idx = indices.to_int64s();
  const int64_t n = indices.numel();
  if (n == 0) return;
  // Row by row of the indices' last axis: the other coordinates (all but the axis's,
  // which each element's index gives) are worked out once per row, not with a
  // division per axis per element.
  const int64_t r = static_cast<int64_t>(id.size());
  const int64_t last = r - 1;
  const int64_t inner = r > 0 ? id[static_cast<std::size_t>(last)] : 1;
  if (r > 0 && last != axis && inner > dd[static_cast<std::size_t>(last)])
    throw Error("ScatterElements: indices " + indices.str() + " exceed data " + data.str());
  const int64_t step = r > 0 && last != axis ? ds[static_cast<std::size_t>(last)] : 0;
  const int64_t axis_stride = r > 0 ? ds[static_cast<std::size_t>(axis)] : 0;
  const int64_t axis_dim = r > 0 ? dd[static_cast<std::size_t>(axis)] : 1;
  dispatch_all(data.dtype(), "ScatterElements", [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data<T>();
    const T* up = updates.data<T>();
    for (int64_t row = 0; row < n / inner; ++row) {
      int64_t rem = row, base = 0;
      for (int64_t d = last - 1; d >= 0; --d) {
        const auto du = static_cast<std::size_t>(d);
        const int64_t c = rem % id[du];
        rem /= id[du];
        if (d == axis) continue;
        if (c >= dd[du])
          throw Error("ScatterElements: indices " + indices.str() + " exceed data " + data.str());
        base += c * ds[du];
      }
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t i = row * inner + j;
        const int64_t c =
            checked_index(idx[static_cast<std::size_t>(i)], axis_dim, "ScatterElements");
        combine(out[base + j * step + c * axis_stride], up[i], red);
      }
    }
  });
}

// ---- OneHot ----------------------------------------------------------------------

void one_hot(KernelContext& ctx, int64_t axis_attr) {
  const Tensor& indices = ctx.in(0);
  const auto depth_v = ctx.in(1).to_floats();
  const Tensor& values = ctx.in(2);
  if (depth_v.size() != 1) throw Error("OneHot: depth must be a scalar, got " + ctx.in(1).str());
  if (values.numel() != 2) throw Error("OneHot: values must hold [off, on], got " + values.str());
  const int64_t depth = static_cast<int64_t>(depth_v[0]);
  if (depth < 1) throw Error("OneHot: depth must be positive, got " + std::to_string(depth));
  const int64_t rank = static_cast<int64_t>(indices.rank()) + 1;
  const int64_t axis = normalize_axis(axis_attr, rank);
  auto od = indices.dims();
  od.insert(od.begin() + axis, depth);
  Tensor& y = ctx.output(0, values.dtype(), od);
  const int64_t outer = prod(indices.dims(), 0, static_cast<std::size_t>(axis));
  const int64_t inner = prod(indices.dims(), static_cast<std::size_t>(axis), indices.rank());
  const auto idx = indices.to_floats();  // float indices are allowed; exact for |i| < 2^24
  dispatch_all(values.dtype(), "OneHot", [&](auto tag) {
    using T = decltype(tag);
    const T off = values.data<T>()[0], on = values.data<T>()[1];
    T* out = y.data<T>();
    std::fill(out, out + y.numel(), off);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t v = static_cast<int64_t>(idx[static_cast<std::size_t>(o * inner + i)]);
        if (v < 0) v += depth;
        if (v >= 0 && v < depth) out[(o * depth + v) * inner + i] = on;
      }
  });
}

// ---- Compress, NonZero -------------------------------------------------------------

void compress(KernelContext& ctx, bool has_axis, int64_t axis_attr) {
  const Tensor& x = ctx.in(0);
  const auto cond = ctx.in(1).to_int64s();
  std::vector<int64_t> dims = has_axis ? x.dims() : std::vector<int64_t>{x.numel()};
  const int64_t axis = has_axis ? normalize_axis(axis_attr, static_cast<int64_t>(x.rank())) : 0;
  const int64_t len = dims[static_cast<std::size_t>(axis)];
  if (static_cast<int64_t>(cond.size()) > len)
    throw Error("Compress: condition " + ctx.in(1).str() + " is longer than the axis of " +
                x.str());
  std::vector<int64_t> keep;
  for (std::size_t i = 0; i < cond.size(); ++i)
    if (cond[i]) keep.push_back(static_cast<int64_t>(i));
  const int64_t outer = prod(dims, 0, static_cast<std::size_t>(axis));
  const int64_t inner = prod(dims, static_cast<std::size_t>(axis) + 1, dims.size());
  dims[static_cast<std::size_t>(axis)] = static_cast<int64_t>(keep.size());
  Tensor& y = ctx.output(0, x.dtype(), dims);
  const std::size_t es = dtype_size(x.dtype()), row = static_cast<std::size_t>(inner) * es;
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(y.raw());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k : keep) {
      std::memcpy(dst, src + static_cast<std::size_t>(o * len + k) * row, row);
      dst += row;
    }
}

void non_zero(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  std::vector<int64_t> hits;
  dispatch_all(x.dtype(), "NonZero", [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i)
      if (p[i] != T(0)) hits.push_back(i);
  });
  const int64_t rank = static_cast<int64_t>(x.rank()), n = static_cast<int64_t>(hits.size());
  Tensor& y = ctx.output(0, DType::Int64, {rank, n});
  int64_t* out = y.data<int64_t>();
  for (int64_t j = 0; j < n; ++j) {
    int64_t rem = hits[static_cast<std::size_t>(j)];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out[d * n + j] = rem % x.dims()[d];
      rem /= x.dims()[d];
    }
  }
}

// ---- Unique --------------------------------------------------------------------------

// Unique elements (no axis) or slices along `axis`, in sorted order or in order of
// first occurrence, with the first index of each, the inverse map and the counts.
void unique(KernelContext& ctx, bool has_axis, int64_t axis_attr, bool sorted,
            const bool present[4]) {
  const Tensor& x = ctx.in(0);
  std::vector<int64_t> dims = has_axis ? x.dims() : std::vector<int64_t>{x.numel()};
  const int64_t axis = has_axis ? normalize_axis(axis_attr, static_cast<int64_t>(x.rank())) : 0;
  const int64_t len = dims[static_cast<std::size_t>(axis)];
  const int64_t outer = prod(dims, 0, static_cast<std::size_t>(axis));
  const int64_t inner = prod(dims, static_cast<std::size_t>(axis) + 1, dims.size());
  dispatch_all(x.dtype(), "Unique", [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    // Item i as numpy sees it with the axis moved first: elements (o, i, j) in (o, j) order.
    auto at = [&](int64_t i, int64_t e) { return p[((e / inner) * len + i) * inner + e % inner]; };
    const int64_t m = outer * inner;
    auto less = [&](int64_t a, int64_t b) {
      for (int64_t e = 0; e < m; ++e)
        if (at(a, e) != at(b, e)) return at(a, e) < at(b, e);
      return false;
    };
    std::vector<int64_t> order(static_cast<std::size_t>(len));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), less);
    // Groups of equal items in sorted order; the first of each is its lowest index.
    std::vector<int64_t> first, count, group_of(static_cast<std::size_t>(len));
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i == 0 || less(order[i - 1], order[i])) {
        first.push_back(order[i]);
        count.push_back(0);
      }
      group_of[static_cast<std::size_t>(order[i])] = static_cast<int64_t>(first.size()) - 1;
      ++count.back();
    }
    const int64_t u = static_cast<int64_t>(first.size());
    std::vector<int64_t> rank(static_cast<std::size_t>(u));  // output position of each group
    std::iota(rank.begin(), rank.end(), int64_t{0});
    if (!sorted) {
      std::vector<int64_t> by_first(rank);
      std::sort(by_first.begin(), by_first.end(),
                [&](int64_t a, int64_t b) { return first[a] < first[b]; });
      for (int64_t k = 0; k < u; ++k) rank[static_cast<std::size_t>(by_first[k])] = k;
    }
    std::vector<int64_t> yd = dims;
    yd[static_cast<std::size_t>(axis)] = u;
    T* y = ctx.output(0, x.dtype(), yd).template data<T>();
    for (int64_t g = 0; g < u; ++g)
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j)
          y[(o * u + rank[g]) * inner + j] = p[(o * len + first[g]) * inner + j];
    if (present[1]) {
      int64_t* out = ctx.output(1, DType::Int64, {u}).data<int64_t>();
      for (int64_t g = 0; g < u; ++g) out[rank[g]] = first[g];
    }
    if (present[2]) {
      int64_t* out = ctx.output(2, DType::Int64, {len}).data<int64_t>();
      for (int64_t i = 0; i < len; ++i) out[i] = rank[group_of[i]];
    }
    if (present[3]) {
      int64_t* out = ctx.output(3, DType::Int64, {u}).data<int64_t>();
      for (int64_t g = 0; g < u; ++g) out[rank[g]] = count[g];
    }
  });
}

// ---- EyeLike, ReverseSequence -------------------------------------------------------------

void eye_like(KernelContext& ctx, int64_t dtype_attr, int64_t k) {
  const Tensor& x = ctx.in(0);
  if (x.rank() != 2) throw Error("EyeLike: input must be 2-D, got " + x.str());
  const DType dt = dtype_attr != 0 ? static_cast<DType>(dtype_attr) : x.dtype();
  if (!dtype_is_valid(static_cast<int32_t>(dt)) || dtype_size(dt) == 0)
    throw Error("EyeLike: unsupported dtype " + std::to_string(dtype_attr));
  Tensor& y = ctx.output(0, dt, x.dims());
  const int64_t rows = x.dims()[0], cols = x.dims()[1];
  dispatch_all(dt, "EyeLike", [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data<T>();
    std::fill(out, out + y.numel(), T(0));
    for (int64_t i = 0; i < rows; ++i)
      if (i + k >= 0 && i + k < cols) out[i * cols + i + k] = T(1);
  });
}

void reverse_sequence(KernelContext& ctx, int64_t batch_axis, int64_t time_axis) {
  const Tensor& x = ctx.in(0);
  const auto lens = ctx.in(1).to_int64s();
  if (x.rank() < 2 || batch_axis == time_axis || std::min(batch_axis, time_axis) < 0 ||
      std::max(batch_axis, time_axis) > 1)
    throw Error("ReverseSequence: batch_axis and time_axis must be 0 and 1 of a rank >= 2 input");
  const int64_t nb = x.dims()[batch_axis], nt = x.dims()[time_axis];
  if (static_cast<int64_t>(lens.size()) != nb)
    throw Error("ReverseSequence: sequence_lens " + ctx.in(1).str() + " for batch " +
                std::to_string(nb));
  Tensor& y = ctx.output(0, x.dtype(), x.dims());
  const int64_t inner = prod(x.dims(), 2, x.rank());
  const std::size_t es = dtype_size(x.dtype()), row = static_cast<std::size_t>(inner) * es;
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(y.raw());
  auto at = [&](int64_t b, int64_t t) {
    return static_cast<std::size_t>(batch_axis == 0 ? b * nt + t : t * nb + b) * row;
  };
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t l = lens[static_cast<std::size_t>(b)];
    if (l < 0 || l > nt)
      throw Error("ReverseSequence: length " + std::to_string(l) + " outside [0, " +
                  std::to_string(nt) + "]");
    for (int64_t t = 0; t < nt; ++t)
      std::memcpy(dst + at(b, t), src + at(b, t < l ? l - 1 - t : t), row);
  }
}

}  // namespace

void register_scatter_gather_kernels(KernelTable& t) {
  t["GatherND"] = [](const Graph&, const Node& n) {
    const int64_t b = n.attrs.get_int("batch_dims", 0);
    return fn_kernel([b](KernelContext& c) { gather_nd(c, b); });
  };
  t["ScatterND"] = [](const Graph&, const Node& n) {
    const Reduction r = parse_reduction(n);
    return fn_kernel([r](KernelContext& c) { scatter_nd(c, r); });
  };
  t["ScatterElements"] = [](const Graph&, const Node& n) {
    const int64_t axis = n.attrs.get_int("axis", 0);
    const Reduction r = parse_reduction(n);
    return fn_kernel([axis, r](KernelContext& c) { scatter_elements(c, axis, r); });
  };
  t["Scatter"] = [](const Graph&, const Node& n) {
    const int64_t axis = n.attrs.get_int("axis", 0);
    return fn_kernel([axis](KernelContext& c) { scatter_elements(c, axis, Reduction::None); });
  };
  t["OneHot"] = [](const Graph&, const Node& n) {
    const int64_t axis = n.attrs.get_int("axis", -1);
    return fn_kernel([axis](KernelContext& c) { one_hot(c, axis); });
  };
  t["Compress"] = [](const Graph&, const Node& n) {
    const bool has = n.attrs.has("axis");
    const int64_t axis = n.attrs.get_int("axis", 0);
    return fn_kernel([has, axis](KernelContext& c) { compress(c, has, axis); });
  };
  t["NonZero"] = [](const Graph&, const Node&) { return fn_kernel(non_zero); };
  t["Unique"] = [](const Graph&, const Node& n) {
    const bool has = n.attrs.has("axis");
    const int64_t axis = n.attrs.get_int("axis", 0);
    const bool sorted = n.attrs.get_int("sorted", 1) != 0;
    std::array<bool, 4> present{};
    for (std::size_t i = 0; i < 4 && i < n.outputs.size(); ++i)
      present[i] = n.outputs[i] != kNoValue;
    return fn_kernel([=](KernelContext& c) { unique(c, has, axis, sorted, present.data()); });
  };
  t["EyeLike"] = [](const Graph&, const Node& n) {
    const int64_t dt = n.attrs.get_int("dtype", 0), k = n.attrs.get_int("k", 0);
    return fn_kernel([dt, k](KernelContext& c) { eye_like(c, dt, k); });
  };
  t["ReverseSequence"] = [](const Graph&, const Node& n) {
    const int64_t b = n.attrs.get_int("batch_axis", 1), tm = n.attrs.get_int("time_axis", 0);
    return fn_kernel([b, tm](KernelContext& c) { reverse_sequence(c, b, tm); });
  };
}

}  // namespace fx
