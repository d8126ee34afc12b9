// SPDX-License-Identifier: Apache-2.0
#include "cuda_plan/copy_plan.h"

#include <algorithm>
#include <cstring>

#include "ir/graph_queries.h"
#include "runtime/tensor.h"
#include "util/error.h"

namespace fx::cuda {

namespace {

std::vector<int64_t> dims_of(const Graph& g, const Node& n, ValueId v) {
  const Value& val = g.value(v);
  if (!val.shape.is_static())
    throw Error("CUDA: " + n.op_type + " node '" + n.name + "': '" + val.name +
                "' has no static shape (" + val.shape.str() + ")");
  return val.shape.static_dims();
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d)
    s[static_cast<std::size_t>(d)] =
        s[static_cast<std::size_t>(d) + 1] * dims[static_cast<std::size_t>(d) + 1];
  return s;
}

int64_t axis_of(const Node& n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw Error("CUDA: " + n.op_type + " node '" + n.name + "': axis " + std::to_string(axis) +
                " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// Integer operand i (starts, ends, ...): must be known before running. Empty if absent.
std::vector<int64_t> const_ints(const Graph& g, const Node& n, std::size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return {};
  auto td = constant_data(g, n.inputs[i]);
  if (!td)
    throw Error("CUDA: " + n.op_type + " node '" + n.name + "': operand '" +
                g.value(n.inputs[i]).name +
                "' is computed at run time (only constants are supported)");
  return Tensor::from_data(td).to_int64s();
}

int elem_bytes_of(const Graph& g, ValueId v) {
  return static_cast<int>(dtype_size(g.value(v).dtype));
}

StridedCopy contiguous_copy(const Graph& g, ValueId src, ValueId dst, std::vector<int64_t> dims) {
  StridedCopy c;
  c.src = src;
  c.dst = dst;
  c.src_strides = strides_of(dims);
  c.dst_strides = strides_of(dims);
  c.dims = std::move(dims);
  c.elem_bytes = elem_bytes_of(g, src);
  return c;
}

}  // namespace

int64_t StridedCopy::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<StridedCopy> copy_plan(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  const std::string& op = n.op_type;
  std::vector<StridedCopy> out;
  const ValueId x = n.inputs.at(0);
  const auto xd = dims_of(g, n, x);
  const auto xs = strides_of(xd);
  const auto r = static_cast<int64_t>(xd.size());
  if (op == "Transpose") {
    std::vector<int64_t> perm = n.attrs.get_ints("perm", {});
    if (perm.empty())
      for (int64_t d = r - 1; d >= 0; --d) perm.push_back(d);
    if (static_cast<int64_t>(perm.size()) != r)
      throw Error("CUDA: Transpose node '" + n.name + "': perm has the wrong length");
    StridedCopy c = contiguous_copy(g, x, n.outputs.at(0), dims_of(g, n, n.outputs.at(0)));
    for (int64_t d = 0; d < r; ++d)
      c.src_strides[static_cast<std::size_t>(d)] =
          xs[static_cast<std::size_t>(axis_of(n, perm[static_cast<std::size_t>(d)], r))];
    out.push_back(c);
  } else if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps;
    if (n.attrs.has("starts")) {
      starts = n.attrs.get_ints("starts");
      ends = n.attrs.get_ints("ends");
      axes = n.attrs.get_ints("axes", {});
    } else {
      starts = const_ints(g, n, 1);
      ends = const_ints(g, n, 2);
      axes = const_ints(g, n, 3);
      steps = const_ints(g, n, 4);
    }
    if (axes.empty())
      for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
      throw Error("CUDA: Slice node '" + n.name + "': starts/ends/axes/steps lengths differ");
    StridedCopy c = contiguous_copy(g, x, n.outputs.at(0), xd);
    c.src_strides = xs;
    for (std::size_t i = 0; i < starts.size(); ++i) {
      const auto a = static_cast<std::size_t>(axis_of(n, axes[i], r));
      const int64_t d = xd[a], s = steps[i];
      if (s == 0) throw Error("CUDA: Slice node '" + n.name + "': step 0");
      int64_t b = starts[i], e = ends[i];
      if (b < 0) b += d;
      if (e < 0) e += d;
      int64_t count;
      if (s > 0) {
        b = std::clamp<int64_t>(b, 0, d);
        e = std::clamp<int64_t>(e, 0, d);
        count = e > b ? (e - b + s - 1) / s : 0;
      } else {
        b = std::clamp<int64_t>(b, 0, d - 1);
        e = std::clamp<int64_t>(e, -1, d - 1);
        count = b > e ? (b - e + (-s) - 1) / (-s) : 0;
      }
      c.dims[a] = count;
      c.src_offset += b * xs[a];
      c.src_strides[a] = s * xs[a];
    }
    c.dst_strides = strides_of(c.dims);
    out.push_back(c);
  } else if (op == "Concat") {
    const ValueId y = n.outputs.at(0);
    const auto yd = dims_of(g, n, y);
    const auto ys = strides_of(yd);
    const auto axis = static_cast<std::size_t>(
        axis_of(n, n.attrs.get_int("axis", 0), static_cast<int64_t>(yd.size())));
    int64_t at = 0;
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      StridedCopy c = contiguous_copy(g, in, y, dims_of(g, n, in));
      c.dst_strides = ys;
      c.dst_offset = at * ys[axis];
      at += c.dims[axis];
      if (c.numel() > 0) out.push_back(c);
    }
  } else if (op == "Split") {
    const auto axis = static_cast<std::size_t>(axis_of(n, n.attrs.get_int("axis", 0), r));
    int64_t at = 0;
    for (ValueId o : n.outputs) {
      if (o == kNoValue) continue;
      StridedCopy c = contiguous_copy(g, x, o, dims_of(g, n, o));
      c.src_strides = xs;
      c.src_offset = at * xs[axis];
      at += c.dims[axis];
      out.push_back(c);
    }
  } else if (op == "Expand") {
    const ValueId y = n.outputs.at(0);
    const auto yd = dims_of(g, n, y);
    StridedCopy c = contiguous_copy(g, x, y, yd);
    const std::size_t lead = yd.size() - xd.size();
    for (std::size_t d = 0; d < yd.size(); ++d)
      c.src_strides[d] = d < lead || xd[d - lead] == 1 ? 0 : xs[d - lead];
    out.push_back(c);
  } else {
    throw Error("CUDA: no strided copy for op '" + op + "' (node '" + n.name + "')");
  }
  for (const auto& c : out)
    if (c.dims.size() > static_cast<std::size_t>(kMaxCopyRank))
      throw Error("CUDA: " + op + " node '" + n.name + "' has rank " +
                  std::to_string(c.dims.size()) + ", the copy kernel takes at most 8");
  return out;
}

GatherCopy gather_plan(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  GatherCopy c;
  c.data = n.inputs.at(0);
  c.indices = n.inputs.at(1);
  c.out = n.outputs.at(0);
  const auto xd = dims_of(g, n, c.data);
  const auto id_dims = dims_of(g, n, c.indices);
  const auto axis = static_cast<std::size_t>(
      axis_of(n, n.attrs.get_int("axis", 0), static_cast<int64_t>(xd.size())));
  for (std::size_t d = 0; d < axis; ++d) c.outer *= xd[d];
  c.axis_len = xd[axis];
  for (std::size_t d = axis + 1; d < xd.size(); ++d) c.inner *= xd[d];
  c.count = 1;
  for (int64_t d : id_dims) c.count *= d;
  c.elem_bytes = elem_bytes_of(g, c.data);
  const DType t = g.value(c.indices).dtype;
  if (t != DType::Int64 && t != DType::Int32)
    throw Error("CUDA: Gather node '" + n.name + "': indices must be int32 or int64");
  c.indices64 = t == DType::Int64;
  return c;
}

bool is_comparison(const std::string& op) {
  return op == "Less" || op == "LessOrEqual" || op == "Greater" || op == "GreaterOrEqual" ||
         op == "Equal";
}

CompareOp compare_plan(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  CompareOp c;
  const std::string& op = n.op_type;
  c.kind = op == "Less"             ? CompareOp::Less
           : op == "LessOrEqual"    ? CompareOp::LessOrEqual
           : op == "Greater"        ? CompareOp::Greater
           : op == "GreaterOrEqual" ? CompareOp::GreaterOrEqual
                                    : CompareOp::Equal;
  if (!is_comparison(op))
    throw Error("CUDA: '" + op + "' (node '" + n.name + "') is no comparison");
  c.a = n.inputs.at(0);
  c.b = n.inputs.at(1);
  c.out = n.outputs.at(0);
  const DType t = g.value(c.a).dtype;
  if (t != g.value(c.b).dtype || (t != DType::Float32 && t != DType::Int64 && t != DType::Int32))
    throw Error("CUDA: " + op + " node '" + n.name +
                "': operands must both be float32, int64 or int32");
  c.type = t == DType::Float32 ? 0 : t == DType::Int64 ? 1 : 2;
  c.dims = dims_of(g, n, c.out);
  if (c.dims.size() > static_cast<std::size_t>(kMaxCopyRank))
    throw Error("CUDA: " + op + " node '" + n.name + "' has rank over 8");
  auto strides = [&](ValueId v) {
    const auto d = dims_of(g, n, v);
    const auto s = strides_of(d);
    std::vector<int64_t> out(c.dims.size(), 0);
    const std::size_t lead = c.dims.size() - d.size();
    for (std::size_t k = lead; k < c.dims.size(); ++k) out[k] = d[k - lead] == 1 ? 0 : s[k - lead];
    return out;
  };
  c.a_strides = strides(c.a);
  c.b_strides = strides(c.b);
  return c;
}

void run_strided_copy_host(const StridedCopy& c, const void* src, void* dst) {
  const int64_t total = c.numel();
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  const std::size_t r = c.dims.size();
  for (int64_t t = 0; t < total; ++t) {
    int64_t rem = t, so = c.src_offset, dof = c.dst_offset;
    for (std::size_t k = r; k-- > 0;) {
      const int64_t i = rem % c.dims[k];
      rem /= c.dims[k];
      so += i * c.src_strides[k];
      dof += i * c.dst_strides[k];
    }
    std::memcpy(d + dof * c.elem_bytes, s + so * c.elem_bytes,
                static_cast<std::size_t>(c.elem_bytes));
  }
}

void run_gather_host(const GatherCopy& g, const void* data, const void* indices, void* out) {
  const auto* s = static_cast<const unsigned char*>(data);
  auto* d = static_cast<unsigned char*>(out);
  const std::size_t row = static_cast<std::size_t>(g.inner * g.elem_bytes);
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t i = 0; i < g.count; ++i) {
      int64_t k = g.indices64 ? static_cast<const int64_t*>(indices)[i]
                              : static_cast<const int32_t*>(indices)[i];
      if (k < 0) k += g.axis_len;
      std::memcpy(d + ((o * g.count + i) * g.inner) * g.elem_bytes,
                  s + ((o * g.axis_len + k) * g.inner) * g.elem_bytes, row);
    }
}

void run_compare_host(const CompareOp& c, const void* a, const void* b, void* out) {
  int64_t total = 1;
  for (int64_t d : c.dims) total *= d;
  auto load = [&](const void* p, int64_t i) -> double {
    switch (c.type) {
      case 0: return static_cast<const float*>(p)[i];
      case 1: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
      default: return static_cast<const int32_t*>(p)[i];
    }
  };
  for (int64_t t = 0; t < total; ++t) {
    int64_t rem = t, ia = 0, ib = 0;
    for (std::size_t k = c.dims.size(); k-- > 0;) {
      const int64_t i = rem % c.dims[k];
      rem /= c.dims[k];
      ia += i * c.a_strides[k];
      ib += i * c.b_strides[k];
    }
    const double x = load(a, ia), y = load(b, ib);
    bool r = false;
    switch (c.kind) {
      case CompareOp::Less: r = x < y; break;
      case CompareOp::LessOrEqual: r = x <= y; break;
      case CompareOp::Greater: r = x > y; break;
      case CompareOp::GreaterOrEqual: r = x >= y; break;
      case CompareOp::Equal: r = x == y; break;
    }
    static_cast<unsigned char*>(out)[t] = r ? 1 : 0;
  }
}

}  // namespace fx::cuda
