// SPDX-License-Identifier: Apache-2.0
// Kernels that rearrange data of any dtype (moved as bytes): Transpose, Concat,
// Split, Slice, Gather, Tile.

#include <cstring>
#include <numeric>

#include "runtime/half.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernel_util.h"
#include "runtime/parallel.h"
#include "runtime/strided_copy.h"
#include "runtime/tiled_transpose.h"

namespace fx {
namespace {

using Bytes = std::byte;

const Bytes* bytes_of(const Tensor& t) {
  return static_cast<const Bytes*>(t.raw());
}
Bytes* bytes_of(Tensor& t) {
  return static_cast<Bytes*>(t.raw());
}

void transpose_kernel(KernelContext& ctx, const std::vector<int64_t>& perm_attr) {
  const Tensor& x = ctx.in(0);
  const std::size_t r = x.rank();
  std::vector<int64_t> perm = perm_attr;
  if (perm.empty()) {
    perm.resize(r);
    for (std::size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(r - 1 - i);
  }
  if (perm.size() != r) throw Error("Transpose: perm " + dims_str(perm) + " for " + x.str());
  auto xs = contiguous_strides(x.dims());
  std::vector<int64_t> out_dims(r), in_strides(r);
  for (std::size_t i = 0; i < r; ++i) {
    int64_t p = normalize_axis(perm[i], static_cast<int64_t>(r));
    out_dims[i] = x.dims()[p];
    in_strides[i] = xs[p];
  }
  Tensor& y = ctx.output(0, x.dtype(), out_dims);
  // Output dims that stay adjacent in the input merged (fewer, longer inner runs).
  const CopyRuns runs = merge_copy_dims(out_dims, in_strides);
  const std::vector<int64_t>& md = runs.dims;
  const std::vector<int64_t>& ms = runs.strides;
  // out[o][m][n] = in[o * S + m + n * Sn]: a 2-D transpose per o (NCHW <-> NHWC). The
  // strided copy below reads one cache line per n for each output row; with more than
  // 256 n those lines leave L1 before the next row reuses them (NHWC -> NCHW of
  // ConvNeXt's 56x56 planes: 15 GB/s), so register tiles take over (25 GB/s on one
  // core). With fewer, the lines stay in L1 and the plain copy is as fast or faster.
  const std::size_t k = md.size();
  if (dtype_size(x.dtype()) == 4 && k >= 2 && k <= 3 && ms[k - 2] == 1 && md[k - 2] >= 8 &&
      md[k - 1] > 256) {
    transpose_4byte(static_cast<const uint32_t*>(x.raw()), static_cast<uint32_t*>(y.raw()),
                    k == 3 ? md[0] : 1, k == 3 ? ms[0] : 0, md[k - 2], md[k - 1], ms[k - 1]);
    return;
  }
  strided_copy(bytes_of(x), bytes_of(y), md, ms, dtype_size(x.dtype()));
}

void concat_kernel(KernelContext& ctx, int64_t axis_attr) {
  const Tensor& first = ctx.in(0);
  const int64_t r = static_cast<int64_t>(first.rank());
  const int64_t axis = normalize_axis(axis_attr, r);
  std::vector<int64_t> out = first.dims();
  out[axis] = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.in(i);
    if (t.rank() != first.rank() || t.dtype() != first.dtype()) {
      throw Error("Concat: inputs " + first.str() + " and " + t.str() + " differ");
    }
    for (int64_t d = 0; d < r; ++d) {
      if (d != axis && t.dims()[d] != first.dims()[d]) {
        throw Error("Concat: inputs " + first.str() + " and " + t.str() + " differ off the axis");
      }
    }
    out[axis] += t.dims()[axis];
  }
  Tensor& y = ctx.output(0, first.dtype(), out);
  const std::size_t es = dtype_size(first.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= out[d];
  const int64_t out_row = out[axis] * inner * static_cast<int64_t>(es);
  int64_t at = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.in(i);
    const int64_t chunk = t.dims()[axis] * inner * static_cast<int64_t>(es);
    const Bytes* src = bytes_of(t);
    Bytes* dst = bytes_of(y) + at;
    if (chunk > 0) {
      parallel_for(outer, chunk / 4 + 1, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          std::memcpy(dst + o * out_row, src + o * chunk, static_cast<std::size_t>(chunk));
        }
      });
    }
    at += chunk;
  }
}

void split_kernel(KernelContext& ctx, int64_t axis_attr, const std::vector<int64_t>& split_attr) {
  const Tensor& x = ctx.in(0);
  const int64_t r = static_cast<int64_t>(x.rank());
  const int64_t axis = normalize_axis(axis_attr, r);
  const int n = ctx.num_outputs();
  std::vector<int64_t> sizes = ctx.input(1) ? ints_of(ctx.input(1)) : split_attr;
  const int64_t len = x.dims()[axis];
  if (sizes.empty()) {  // equal parts; the last one smaller when it does not divide
    int64_t part = (len + n - 1) / n;
    for (int i = 0; i < n; ++i) sizes.push_back(std::min(part, len - part * i));
  }
  if (static_cast<int>(sizes.size()) != n ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != len) {
    throw Error("Split: sizes " + dims_str(sizes) + " do not split " + x.str());
  }
  const std::size_t es = dtype_size(x.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims()[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.dims()[d];
  const int64_t in_row = len * inner * static_cast<int64_t>(es);
  int64_t at = 0;
  for (int i = 0; i < n; ++i) {
    auto dims = x.dims();
    dims[axis] = sizes[i];
    Tensor& y = ctx.output(i, x.dtype(), dims);
    const int64_t chunk = sizes[i] * inner * static_cast<int64_t>(es);
    const Bytes* src = bytes_of(x) + at;
    Bytes* dst = bytes_of(y);
    for (int64_t o = 0; o < outer && chunk > 0; ++o) {
      std::memcpy(dst + o * chunk, src + o * in_row, static_cast<std::size_t>(chunk));
    }
    at += chunk;
  }
}

// Slice's parameters (attributes before opset 10, inputs 1-4 after).
struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
};

// The part of a tensor of dims `x` that a Slice takes: output dims, the element offset
// of its first element and the input element stride of each output dim.
struct SliceWindow {
  std::vector<int64_t> count, strides;
  int64_t offset = 0;
  // True when the part is one contiguous run of the input (a view can stand for it).
  bool contiguous() const {
    const CopyRuns runs = merge_copy_dims(count, strides);
    return runs.dims.empty() || (runs.dims.size() == 1 && runs.strides[0] == 1);
  }
};

SliceWindow slice_window(const std::vector<int64_t>& x, SliceParams p) {
  const int64_t r = static_cast<int64_t>(x.size());
  if (p.axes.empty()) {
    for (std::size_t i = 0; i < p.starts.size(); ++i) p.axes.push_back(static_cast<int64_t>(i));
  }
  if (p.steps.empty()) p.steps.assign(p.starts.size(), 1);
  if (p.ends.size() != p.starts.size() || p.axes.size() != p.starts.size() ||
      p.steps.size() != p.starts.size()) {
    throw Error("Slice: starts/ends/axes/steps lengths differ");
  }
  std::vector<int64_t> begin(x.size(), 0), step(x.size(), 1);
  SliceWindow w;
  w.count = x;
  for (std::size_t i = 0; i < p.starts.size(); ++i) {
    int64_t a = normalize_axis(p.axes[i], r), d = x[a], s = p.steps[i];
    if (s == 0) throw Error("Slice: step 0");
    int64_t b = p.starts[i], e = p.ends[i];
    if (b < 0) b += d;
    if (e < 0) e += d;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      w.count[a] = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      w.count[a] = b > e ? (b - e + (-s) - 1) / (-s) : 0;
    }
    begin[a] = b;
    step[a] = s;
  }
  auto xs = contiguous_strides(x);
  w.strides.resize(x.size());
  for (std::size_t d = 0; d < x.size(); ++d) {
    w.offset += begin[d] * xs[d];
    w.strides[d] = step[d] * xs[d];
  }
  return w;
}

// `as_view`: the kernel was built as a view of its input (Kernel::aliases_input), which
// it is whenever the part is contiguous; a part that is not (dims other than the
// graph's static ones) is copied into a buffer of its own.
void slice_kernel(KernelContext& ctx, const SliceParams& attrs, bool as_view) {
  const Tensor& x = ctx.in(0);
  SliceParams p = attrs;
  if (p.starts.empty() && ctx.num_inputs() > 1) {
    p.starts = ints_of(ctx.input(1));
    p.ends = ints_of(ctx.input(2));
    p.axes = ints_of(ctx.input(3));
    p.steps = ints_of(ctx.input(4));
  }
  const SliceWindow w = slice_window(x.dims(), std::move(p));
  const std::size_t es = dtype_size(x.dtype());
  if (as_view && !x.is_string() && w.contiguous()) {
    const Bytes* at = bytes_of(x) + (dims_numel(w.count) ? w.offset * static_cast<int64_t>(es) : 0);
    ctx.alias_output(0, Tensor::view(x.dtype(), w.count, at), w.count);
    return;
  }
  Tensor& y = ctx.output(0, x.dtype(), w.count);
  if (y.numel() == 0) return;
  strided_copy(bytes_of(x) + w.offset * static_cast<int64_t>(es), bytes_of(y), w.count, w.strides,
               es);
}

// A Slice whose part is contiguous for the graph's static dims and constant parameters
// runs as a view: ShuffleNet's channel split of one image then copies nothing.
bool slice_is_static_view(const Graph& g, const Node& n, const SliceParams& attrs) {
  if (n.inputs.empty() || n.inputs[0] == kNoValue) return false;
  // Only dtypes the kernel sees as they are: the string and half adapters hand it
  // converted copies.
  const Value& x = g.value(n.inputs[0]);
  if (x.kind != ValueKind::Tensor || !x.shape.is_static() || x.dtype == DType::String ||
      x.dtype == DType::Undefined || dtype_is_half(x.dtype))
    return false;
  SliceParams p = attrs;
  if (p.starts.empty()) {
    std::vector<int64_t>* into[] = {&p.starts, &p.ends, &p.axes, &p.steps};
    for (std::size_t i = 1; i < n.inputs.size() && i <= 4; ++i) {
      if (n.inputs[i] == kNoValue) continue;
      auto c = constant_input(g, n, i);
      if (!c) return false;
      *into[i - 1] = c->to_int64s();
    }
  }
  try {
    return slice_window(x.shape.static_dims(), std::move(p)).contiguous();
  } catch (const Error&) {
    return false;  // the run reports it
  }
}

void gather_kernel(KernelContext& ctx, int64_t axis_attr) {
  const Tensor& x = ctx.in(0);
  const Tensor& idx = ctx.in(1);
  const int64_t r = static_cast<int64_t>(x.rank());
  const int64_t axis = normalize_axis(axis_attr, r);
  std::vector<int64_t> out(x.dims().begin(), x.dims().begin() + axis);
  out.insert(out.end(), idx.dims().begin(), idx.dims().end());
  out.insert(out.end(), x.dims().begin() + axis + 1, x.dims().end());
  Tensor& y = ctx.output(0, x.dtype(), out);
  std::vector<int64_t> ind = idx.to_int64s();
  const int64_t len = x.dims()[axis];
  for (auto& i : ind) {
    if (i < -len || i >= len)
      throw Error("Gather: index " + std::to_string(i) + " out of range for " + x.str());
    if (i < 0) i += len;
  }
  const std::size_t es = dtype_size(x.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims()[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.dims()[d];
  const int64_t chunk = inner * static_cast<int64_t>(es), k = static_cast<int64_t>(ind.size());
  const Bytes* src = bytes_of(x);
  Bytes* dst = bytes_of(y);
  parallel_for(outer * k, inner, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) {
      int64_t o = j / k, i = j % k;
      std::memcpy(dst + j * chunk, src + (o * len + ind[i]) * chunk,
                  static_cast<std::size_t>(chunk));
    }
  });
}

void tile_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  auto reps = ints_of(ctx.input(1));
  if (reps.size() != x.rank()) throw Error("Tile: repeats " + dims_str(reps) + " for " + x.str());
  std::vector<int64_t> out(x.rank());
  for (std::size_t d = 0; d < x.rank(); ++d) out[d] = x.dims()[d] * reps[d];
  Tensor& y = ctx.output(0, x.dtype(), out);
  // View the output as [reps0, d0, reps1, d1, ...] read from x with stride 0 on reps.
  auto xs = contiguous_strides(x.dims());
  std::vector<int64_t> dims, strides;
  for (std::size_t d = 0; d < x.rank(); ++d) {
    dims.insert(dims.end(), {reps[d], x.dims()[d]});
    strides.insert(strides.end(), {0, xs[d]});
  }
  if (y.numel()) strided_copy(bytes_of(x), bytes_of(y), dims, strides, dtype_size(x.dtype()));
}

}  // namespace

void register_data_kernels(KernelTable& t) {
  t["Transpose"] = [](const Graph&, const Node& n) {
    auto perm = n.attrs.get_ints("perm");
    return fn_kernel([perm](KernelContext& ctx) { transpose_kernel(ctx, perm); });
  };
  t["Concat"] = [](const Graph&, const Node& n) {
    int64_t axis = n.attrs.get_int("axis", 0);
    return fn_kernel([axis](KernelContext& ctx) { concat_kernel(ctx, axis); });
  };
  t["Split"] = [](const Graph&, const Node& n) {
    int64_t axis = n.attrs.get_int("axis", 0);
    auto split = n.attrs.get_ints("split");
    return fn_kernel([axis, split](KernelContext& ctx) { split_kernel(ctx, axis, split); });
  };
  t["Slice"] = [](const Graph& g, const Node& n) {
    SliceParams attrs;
    if (n.attrs.has("starts")) {  // opset < 10
      attrs.starts = n.attrs.get_ints("starts");
      attrs.ends = n.attrs.get_ints("ends");
      attrs.axes = n.attrs.get_ints("axes");
    }
    const bool view = slice_is_static_view(g, n, attrs);
    return fn_kernel([attrs, view](KernelContext& ctx) { slice_kernel(ctx, attrs, view); }, view);
  };
  t["Gather"] = [](const Graph&, const Node& n) {
    int64_t axis = n.attrs.get_int("axis", 0);
    return fn_kernel([axis](KernelContext& ctx) { gather_kernel(ctx, axis); });
  };
  t["Tile"] = [](const Graph&, const Node&) { return fn_kernel(tile_kernel); };
}

}  // namespace fx
