// SPDX-License-Identifier: Apache-2.0
#include "analysis/cost_model.h"

#include <algorithm>

namespace fx {
namespace {

int64_t prod(const std::vector<int64_t>& d, std::size_t from = 0, std::size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (std::size_t i = from; i < std::min(to, d.size()); ++i) p *= d[i];
  return p;
}

std::vector<int64_t> dims_of(const Graph& g, ValueId v) {
  if (v == kNoValue) return {};
  const Shape& s = g.value(v).shape;
  return s.is_static() ? s.static_dims() : std::vector<int64_t>{};
}

int64_t numel_of(const Graph& g, ValueId v) {
  if (v == kNoValue) return 0;
  return g.value(v).shape.numel().value_or(0);
}

ValueId input(const Node& n, std::size_t i) {
  return i < n.inputs.size() ? n.inputs[i] : kNoValue;
}
ValueId output0(const Node& n) {
  return n.outputs.empty() ? kNoValue : n.outputs[0];
}

int64_t elem_size(const Graph& g, const Node& n) {
  ValueId o = output0(n);
  std::size_t s = o == kNoValue ? 0 : dtype_size(g.value(o).dtype);
  return s ? static_cast<int64_t>(s) : 4;
}

std::size_t norm_axis(int64_t axis, std::size_t rank) {
  if (axis < 0) axis += static_cast<int64_t>(rank);
  return static_cast<std::size_t>(std::clamp<int64_t>(axis, 0, rank ? int64_t(rank) - 1 : 0));
}

// Elements of the rows a reduction needs whole in one tile.
int64_t reduced_row(const Graph& g, const Node& n) {
  auto in = dims_of(g, input(n, 0));
  if (in.empty()) return 1;
  const std::string& op = n.op_type;
  const std::size_t r = in.size();
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax" || op == "ArgMax" ||
      op == "ArgMin" || op == "CumSum" || op == "LpNormalization")
    return in[norm_axis(n.attrs.get_int("axis", -1), r)];
  if (op == "LayerNormalization") return prod(in, norm_axis(n.attrs.get_int("axis", -1), r));
  if (op == "InstanceNormalization" || op.rfind("Global", 0) == 0) return prod(in, 2);
  if (op == "GroupNormalization") {
    int64_t groups = std::max<int64_t>(1, n.attrs.get_int("num_groups", 1));
    return (r > 1 ? in[1] / groups : 1) * prod(in, 2);
  }
  // Reduce* ops: axes from the attribute, or from a constant second input (opset 18).
  std::vector<int64_t> axes = n.attrs.get_ints("axes");
  ValueId ax = input(n, 1);
  if (axes.empty() && ax != kNoValue && g.value(ax).is_constant())
    axes = g.value(ax).data->to_int64s();
  if (op == "MeanVarianceNormalization" && axes.empty()) axes = {0, 2, 3};
  if (axes.empty()) return prod(in);  // reduce everything
  int64_t row = 1;
  for (int64_t a : axes) row *= in[norm_axis(a, r)];
  return row;
}

// Operations per counted FLOP in the runtime's unfused kernel of `n`: Where runs the
// ternary loop (runtime/elementwise_ops.h: ternary_map), which reads its three
// operands through run-time strides one element at a time (no vector loop, unlike the
// binary kernels' contiguous and scalar cases): a load per operand and the select per
// output element, against one vector op for the others. (GPT-2's masked Where: 1.6 MB
// in 109 us, against 21 us for the Div before it on the same bytes.)
double unfused_ops_per_flop(const Node& n) {
  return n.op_type == "Where" ? 4.0 : 1.0;
}

}  // namespace

double CostModel::node_flops(const Graph& g, const Node& n, OpKind kind) {
  const std::string& op = n.op_type;
  const double out = static_cast<double>(numel_of(g, output0(n)));
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    auto w = dims_of(g, input(n, op == "QLinearConv" ? 3 : 1));
    double macs = out * static_cast<double>(w.size() > 1 ? prod(w, 1) : 1);
    return 2 * macs + (input(n, 2) != kNoValue && op == "Conv" ? out : 0);
  }
  if (op == "ConvTranspose") {
    auto w = dims_of(g, input(n, 1));
    return 2.0 * double(numel_of(g, input(n, 0))) * double(w.size() > 1 ? prod(w, 1) : 1);
  }
  if (op == "MatMul" || op == "MatMulInteger" || op == "Gemm" || op == "QLinearMatMul") {
    auto a = dims_of(g, input(n, 0));
    if (a.empty()) return 0;
    int64_t k = a.back();
    if (op == "Gemm" && n.attrs.get_int("transA", 0) != 0 && a.size() == 2) k = a[0];
    double f = 2.0 * out * double(k);
    if (op == "Gemm" && input(n, 2) != kNoValue) f += out;
    return f;
  }
  if (op == "AveragePool" || op == "MaxPool" || op == "LpPool")
    return out * double(prod(n.attrs.get_ints("kernel_shape", {1})));
  if (op == "Softmax" || op == "LogSoftmax") return 5 * out;  // max, sub, exp, sum, div
  if (op == "LayerNormalization" || op == "InstanceNormalization" || op == "GroupNormalization" ||
      op == "MeanVarianceNormalization")
    return 8 * out;  // mean, centre, square, mean, rsqrt, scale, shift
  if (op == "BatchNormalization") return 2 * out;  // folded scale and shift
  switch (kind) {
    case OpKind::Elementwise:
    case OpKind::Broadcast: return out;
    case OpKind::Reduction: return double(numel_of(g, input(n, 0)));
    case OpKind::Anchor: return out;  // Einsum, RoiAlign, ...: at least one op per output
    default: return 0;                // injective ops move data only
  }
}

namespace {

// True when a group's anchor multiplies 8-bit values: its data and weights are
// DequantizeLinear results of uint8/int8 tensors computed in the group (the QDQ form).
template <class Inside>
bool int8_anchor(const Graph& g, NodeId anchor, const Inside& inside) {
  const Node& a = g.node(anchor);
  if (a.op_type != "Conv" && a.op_type != "MatMul" && a.op_type != "Gemm") return false;
  if (a.inputs.size() < 2) return false;
  for (std::size_t i = 0; i < 2; ++i) {
    const ValueId v = a.inputs[i];
    if (v == kNoValue) return false;
    const NodeId p = g.value(v).producer;
    if (p == kNoNode || !inside(p) || g.node(p).op_type != "DequantizeLinear") return false;
    const ValueId q = g.node(p).inputs.empty() ? kNoValue : g.node(p).inputs[0];
    if (q == kNoValue) return false;
    const DType t = g.value(q).dtype;
    if (t != DType::UInt8 && t != DType::Int8) return false;
  }
  return true;
}

}  // namespace

KernelClass CostModel::node_class(const Graph& g, const Node& n, OpKind kind) {
  const std::string& op = n.op_type;
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv" || op == "ConvTranspose") {
    const int64_t groups = n.attrs.get_int("group", 1);
    auto x = dims_of(g, input(n, 0));
    if (groups > 1 && x.size() > 1 && groups == x[1]) return KernelClass::Depthwise;
    return KernelClass::Conv;
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") return KernelClass::Pooling;
  if (op == "BatchNormalization") return KernelClass::Elementwise;
  switch (kind) {
    case OpKind::Anchor: return KernelClass::MatMul;
    case OpKind::Reduction: return KernelClass::Reduction;
    case OpKind::Injective: return KernelClass::DataMovement;
    case OpKind::Opaque:
      return node_flops(g, n, kind) > 0 ? KernelClass::Elementwise : KernelClass::DataMovement;
    default: return KernelClass::Elementwise;
  }
}

int64_t CostModel::node_relayout_bytes(const Graph& g, const Node& n, const Cost& c) {
  if (n.op_type != "Conv" || n.attrs.get_int("group", 1) != 1) return 0;
  auto w = dims_of(g, input(n, 1));
  if (w.size() < 3) return 0;
  int64_t window = 1;
  for (std::size_t i = 2; i < w.size(); ++i) window *= w[i];
  return window > 1 ? std::max<int64_t>(0, c.bytes() - c.constant_bytes) : 0;
}

int64_t CostModel::node_planes(const Graph& g, const Node& n) {
  if (n.op_type != "Conv") return 0;
  auto x = dims_of(g, input(n, 0));
  const int64_t groups = n.attrs.get_int("group", 1);
  if (x.size() < 3 || groups <= 1 || groups != x[1]) return 0;
  return x[0] * x[1];
}

std::optional<WinogradShape> CostModel::node_winograd_shape(const Graph& g, const Node& n) {
  if (n.op_type != "Conv") return std::nullopt;
  auto x = dims_of(g, input(n, 0));
  auto w = dims_of(g, input(n, 1));
  auto y = dims_of(g, output0(n));
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return std::nullopt;
  // As the runtime's Conv kernel (runtime/dnnl_kernels.cc): constant weights and bias.
  if (!g.value(input(n, 1)).is_constant()) return std::nullopt;
  if (ValueId b = input(n, 2); b != kNoValue && !g.value(b).is_constant()) return std::nullopt;
  auto ones = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 1; });
  };
  if (x[0] != 1 || n.attrs.get_int("group", 1) != 1 || w[2] != 3 || w[3] != 3 ||
      !ones(n.attrs.get_ints("strides")) || !ones(n.attrs.get_ints("dilations")))
    return std::nullopt;
  WinogradShape s;
  s.ic = x[1], s.ih = x[2], s.iw = x[3];
  s.oc = y[1], s.oh = y[2], s.ow = y[3];
  // Explicit pads, else what the output's size implies (SAME: the extra one at the end).
  auto pads = n.attrs.get_ints("pads");
  if (pads.size() == 4) {
    s.pad_top = pads[0], s.pad_left = pads[1], s.pad_bottom = pads[2], s.pad_right = pads[3];
  } else {
    const int64_t ph = std::max<int64_t>(0, s.oh + 2 - s.ih),
                  pw = std::max<int64_t>(0, s.ow + 2 - s.iw);
    s.pad_top = ph / 2, s.pad_bottom = ph - ph / 2, s.pad_left = pw / 2, s.pad_right = pw - pw / 2;
  }
  return s;
}

bool CostModel::node_winograd(const Graph& g, const Node& n, const DeviceProfile& p) {
  auto s = node_winograd_shape(g, n);
  return s && p.winograd.runs(*s);
}

int64_t CostModel::node_tile_bytes(const Graph& g, const Node& n, OpKind kind) {
  const int64_t es = elem_size(g, n);
  const std::string& op = n.op_type;
  if (op == "Conv" || op == "ConvTranspose" || op == "MatMul" || op == "Gemm") {
    auto out = dims_of(g, output0(n));
    auto w = dims_of(g, input(n, 1));
    auto a = dims_of(g, input(n, 0));
    int64_t m = 1, nn = 1, k = 1;
    if (op == "MatMul" || op == "Gemm") {
      if (out.size() >= 2) m = out[out.size() - 2];
      if (!out.empty()) nn = out.back();
      if (!a.empty()) k = a.back();
    } else if (out.size() >= 2) {
      m = out[0] * prod(out, 2);  // output pixels
      nn = out[1];                // output channels
      k = w.size() > 1 ? prod(w, 1) : 1;
    }
    m = std::min(m, kAnchorTile), nn = std::min(nn, kAnchorTile), k = std::min(k, kAnchorDepth);
    return (m * k + k * nn + m * nn) * es;  // two input panels and the output tile
  }
  if (kind == OpKind::Reduction) {
    int64_t row = std::max<int64_t>(1, reduced_row(g, n));
    return std::max(row, kElementTile) * es * 2;  // input rows and their result
  }
  int64_t operands = 0;
  for (ValueId v : n.inputs) operands += v != kNoValue;
  for (ValueId v : n.outputs) operands += v != kNoValue;
  return kElementTile * es * std::max<int64_t>(1, operands);
}

CostModel::CostModel(const Graph& g, DeviceProfile profile) : g_(g), profile_(std::move(profile)) {
  value_bytes_.resize(g.value_count());
  for (std::size_t v = 0; v < g.value_count(); ++v)
    value_bytes_[v] = g.value(static_cast<ValueId>(v)).byte_size().value_or(0);
  nodes_.resize(g.node_count());
  classes_.resize(g.node_count());
  for (std::size_t i = 0; i < g.node_count(); ++i) {
    const Node& n = g.node(static_cast<NodeId>(i));
    OpClass c = classify_node(g, n);
    classes_[i] = c;
    Cost& cost = nodes_[i];
    cost.profile = profile_.label();
    cost.kernel_class = node_class(g, n, c.kind);
    if (c.no_kernel) {
      cost.launches = 0;
      continue;
    }
    // Shape and Size read only metadata, not the tensor.
    const bool metadata_only = n.op_type == "Shape" || n.op_type == "Size";
    // Each distinct input is read once (sorted copy: Concat may have thousands).
    std::vector<ValueId> distinct = n.inputs;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (ValueId v : distinct) {
      if (v == kNoValue || metadata_only) continue;
      auto b = g.value(v).byte_size();
      if (!b) {
        cost.known = false;
        cost.unknown_reason = "input '" + g.value(v).name + "' has shape " + g.value(v).shape.str();
        break;
      }
      cost.bytes_read += *b;
      if (g.value(v).is_constant()) cost.constant_bytes += *b;
    }
    for (ValueId v : n.outputs) {
      if (v == kNoValue || !cost.known) continue;
      auto b = g.value(v).byte_size();
      if (!b) {
        cost.known = false;
        cost.unknown_reason =
            "output '" + g.value(v).name + "' has shape " + g.value(v).shape.str();
        break;
      }
      cost.bytes_written += *b;
    }
    if (!cost.known) {
      cost.bytes_read = cost.bytes_written = cost.constant_bytes = 0;
      continue;
    }
    cost.flops = node_flops(g, n, c.kind) * unfused_ops_per_flop(n);
    cost.footprint_bytes = node_tile_bytes(g, n, c.kind);
    cost.relayout_bytes = node_relayout_bytes(g, n, cost);
    cost.planes = node_planes(g, n);
    cost.winograd = node_winograd(g, n, profile_);
    cost.time_s = kernel_time(profile_, terms_of(cost));
  }
}

double CostModel::time(const DeviceProfile& p, double bytes, double flops, int launches,
                       KernelClass c) {
  if (launches == 0 && bytes == 0 && flops == 0) return 0;
  return std::max(bytes / p.bandwidth(c, bytes), flops / p.flops(c)) +
         launches * p.launch_overhead_s;
}

double CostModel::time(double bytes, double flops, int launches, KernelClass c) const {
  return time(profile_, bytes, flops, launches, c);
}

Cost CostModel::unfused(std::span<const NodeId> members) const {
  Cost sum;
  sum.profile = profile_.label();
  sum.launches = 0;
  for (NodeId m : members) {
    const Cost& c = node(m);
    add_kernel_cost(sum, c);
    sum.relayout_bytes += c.relayout_bytes;
    sum.planes += c.planes;
  }
  return sum;
}

Cost CostModel::group(std::span<const NodeId> members) const {
  auto inside = [&](NodeId n) {
    return n != kNoNode && std::find(members.begin(), members.end(), n) != members.end();
  };
  Cost c;
  c.profile = profile_.label();
  c.launches = 0;
  // Walk the members' inputs once: external ones are read, internal ones are counted per
  // use, so a value leaves the group iff some use is outside. This never scans a value's
  // consumer list, which may hold thousands of nodes.
  std::vector<ValueId> inputs;
  std::vector<std::pair<ValueId, std::size_t>> internal_uses;
  int64_t tile = 0, es = 4;
  // The fused kernel's class: the anchor's (its epilogue rides along), else a row kernel
  // when a reduction is inside, else data movement when only copies are, else elementwise.
  double anchor_flops = 0, other_flops = 0;
  bool anchor = false, reduction = false, copies_only = true;
  NodeId anchor_node = kNoNode;
  int anchors = 0, kernels = 0;
  for (NodeId m : members) {
    const Cost& nc = node(m);
    if (!nc.known && c.known) c.known = false, c.unknown_reason = nc.unknown_reason;
    const OpClass& oc = classes_[static_cast<std::size_t>(m)];
    if (!oc.no_kernel) c.launches = 1, ++kernels;
    if (oc.no_kernel) {
    } else if (oc.kind == OpKind::Anchor || nc.kernel_class == KernelClass::Conv ||
               nc.kernel_class == KernelClass::Depthwise ||
               nc.kernel_class == KernelClass::Pooling || nc.kernel_class == KernelClass::MatMul) {
      if (!anchor || nc.flops > node(anchor_node).flops) {
        c.kernel_class = nc.kernel_class;
        anchor_node = m;
      }
      anchor = true;
      ++anchors;
      anchor_flops += nc.flops;
    } else {
      // The fused loop is generated (vectorized) whatever the runtime's kernel does.
      other_flops += nc.flops / unfused_ops_per_flop(g_.node(m));
      reduction = reduction || nc.kernel_class == KernelClass::Reduction;
      copies_only = copies_only && nc.kernel_class == KernelClass::DataMovement;
    }
    tile = std::max(tile, nc.footprint_bytes);
    const Node& n = g_.node(m);
    es = std::max(es, elem_size(g_, n));
    const bool metadata_only = n.op_type == "Shape" || n.op_type == "Size";
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      if (inside(g_.value(v).producer)) {
        auto it = std::find_if(internal_uses.begin(), internal_uses.end(),
                               [&](const auto& e) { return e.first == v; });
        if (it == internal_uses.end())
          internal_uses.emplace_back(v, 1);
        else
          ++it->second;
      } else if (!metadata_only && std::find(inputs.begin(), inputs.end(), v) == inputs.end()) {
        inputs.push_back(v);
      }
    }
  }
  int64_t internal = 0;
  for (NodeId m : members)
    for (ValueId v : g_.node(m).outputs) {
      if (v == kNoValue) continue;
      const Value& val = g_.value(v);
      std::size_t uses = 0;
      for (const auto& [iv, k] : internal_uses)
        if (iv == v) uses = k;
      if (val.is_graph_output || uses < val.consumers.size())
        c.bytes_written += value_bytes_[static_cast<std::size_t>(v)];
      else if (!val.consumers.empty())
        ++internal;  // kept on chip, one tile
    }
  for (ValueId v : inputs) {
    c.bytes_read += value_bytes_[static_cast<std::size_t>(v)];
    if (g_.value(v).is_constant()) c.constant_bytes += value_bytes_[static_cast<std::size_t>(v)];
  }
  if (anchor) {
    c.flops = anchor_flops;
  } else {
    c.flops = other_flops;
    // A fused row kernel (a reduction with its prologue/epilogue) keeps its rows in cache
    // and streams them once: the reduction class with the fused scale, which
    // calibration fits to such kernels (their own reductions pass several times).
    c.kernel_class = reduction     ? KernelClass::Reduction
                     : copies_only ? KernelClass::DataMovement
                                   : KernelClass::Elementwise;
  }
  c.fused = kernels > 1;
  if (!c.known) {
    c.bytes_read = c.bytes_written = c.constant_bytes = 0;
    return c;
  }
  c.footprint_bytes = tile + internal * kElementTile * es;
  if (anchors == 1) {
    // The anchor's own kernel, plus its epilogue applied to each output tile while it is
    // in cache: the epilogue costs only what it moves beyond the anchor's inputs (its
    // output, a residual, folded parameters), at the elementwise bandwidth.
    const Cost& a = node(anchor_node);
    c.anchor_bytes = a.bytes();
    // The fused conv takes Winograd where the unfused one does
    // (fused_kernels/conv_path_winograd.cc, its eltwise and sum post-ops).
    c.winograd = a.winograd;
    c.epilogue_bytes = c.fused ? std::max<int64_t>(0, c.bytes() - a.bytes_read) : 0;
    if (!c.fused) {
      c.relayout_bytes = a.relayout_bytes;
      c.planes = a.planes;
      c.time_s = a.time_s;
      return c;
    }
  }
  c.time_s = kernel_time(profile_, terms_of(c));
  if (anchors == 1 && profile_.int8_speedup > 0 && int8_anchor(g_, anchor_node, inside)) {
    // A QDQ group runs as one int8 kernel (fused_kernels/qdq_int8_kernel.h): its
    // multiply-adds go at the int8 rate this machine measured against the float one.
    Cost at_int8 = c;
    at_int8.flops = c.flops / profile_.int8_speedup;
    c.time_s = kernel_time(profile_, terms_of(at_int8));
  }
  return c;
}

}  // namespace fx
