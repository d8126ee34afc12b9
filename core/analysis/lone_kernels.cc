// SPDX-License-Identifier: Apache-2.0
#include "analysis/lone_kernels.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/op_kind.h"
#include "ir/graph_queries.h"

namespace fx {
namespace {

bool float_rank4(const Value& v) {
  return v.kind == ValueKind::Tensor && v.dtype == DType::Float32 && v.shape.rank() == 4;
}

ValueId in(const Node& n, std::size_t i) {
  return i < n.inputs.size() ? n.inputs[i] : kNoValue;
}

// A 2-D Conv with constant weights on a float32 tensor: what the layout plan turns into a
// fused conv kernel (conv_layout_plan.cc: find_candidates).
bool conv_2d(const Graph& g, const Node& n) {
  if (n.op_type != "Conv" || !n.domain.empty() || n.outputs.size() != 1) return false;
  const ValueId x = in(n, 0), w = in(n, 1), b = in(n, 2);
  if (x == kNoValue || w == kNoValue || !float_rank4(g.value(x))) return false;
  if (!g.value(w).is_constant() || g.value(w).shape.rank() != 4) return false;
  return b == kNoValue || g.value(b).is_constant();
}

// pool_pad_fold.cc: a constant zero Pad of a rank-4 float32 tensor on its last two axes
// only, by non-negative amounts; the spatial pads (begin h, w, end h, w).
std::optional<std::vector<int64_t>> zero_spatial_pads(const Graph& g, const Node& pad) {
  if (pad.op_type != "Pad" || !pad.domain.empty() || pad.inputs.empty() ||
      pad.outputs.size() != 1 || pad.attrs.get_string("mode", "constant") != "constant")
    return std::nullopt;
  if (!float_rank4(g.value(pad.inputs[0])) || in(pad, 3) != kNoValue) return std::nullopt;
  std::vector<int64_t> pads;
  if (pad.attrs.has("pads")) {
    pads = pad.attrs.get_ints("pads");
    if (pad.attrs.get_float("value", 0.0f) != 0.0f) return std::nullopt;
  } else {
    auto data = in(pad, 1) == kNoValue ? nullptr : constant_data(g, pad.inputs[1]);
    if (!data || data->dtype() != DType::Int64) return std::nullopt;
    pads = data->to_int64s();
    if (in(pad, 2) != kNoValue) {
      auto value = constant_data(g, pad.inputs[2]);
      if (!value || value->numel() != 1 || value->dtype() != DType::Float32 ||
          value->to_floats()[0] != 0.0f)
        return std::nullopt;
    }
  }
  if (pads.size() != 8 || pads[0] || pads[1] || pads[4] || pads[5]) return std::nullopt;
  std::vector<int64_t> spatial{pads[2], pads[3], pads[6], pads[7]};
  if (std::any_of(spatial.begin(), spatial.end(), [](int64_t p) { return p < 0; }))
    return std::nullopt;
  return spatial;
}

// The AveragePool that alone reads a foldable Pad, when the two compute the same merged
// (pool_pad_fold.cc: merge); kNoNode otherwise.
NodeId pool_of_pad(const Graph& g, const Node& pad) {
  const auto add = zero_spatial_pads(g, pad);
  if (!add) return kNoNode;
  const Value& padded = g.value(pad.outputs[0]);
  if (padded.is_graph_output || padded.consumers.size() != 1) return kNoNode;
  const NodeId id = padded.consumers[0];
  const Node& pool = g.node(id);
  if (pool.op_type != "AveragePool" || !pool.domain.empty() || pool.inputs.size() != 1 ||
      pool.outputs.size() != 1 || pool.attrs.get_ints("kernel_shape").size() != 2 ||
      pool.attrs.get_string("auto_pad", "NOTSET") != "NOTSET")
    return kNoNode;
  for (int64_t d : pool.attrs.get_ints("dilations"))
    if (d != 1) return kNoNode;
  if (std::none_of(add->begin(), add->end(), [](int64_t p) { return p; })) return id;
  std::vector<int64_t> own = pool.attrs.get_ints("pads");
  if (own.empty()) own.assign(4, 0);
  const bool own_pads = std::any_of(own.begin(), own.end(), [](int64_t p) { return p; });
  if (own.size() != 4 || pool.attrs.get_int("ceil_mode", 0) != 0 ||
      (own_pads && pool.attrs.get_int("count_include_pad", 0) == 0))
    return kNoNode;
  return id;
}

// What a node is to the layout plan (conv_layout_plan.cc: find_candidates, nhwc_values):
// a Conv reads its x and writes its output NHWC each on its own; a joined node keeps the
// listed inputs and its output in one layout (pools, channel Concats, BatchNormalizations,
// elementwise ops whose inputs have the output's shape or broadcast a scalar or, for a
// Mul, a per-channel scale); a reader reads input 0 NHWC (GlobalAveragePool).
struct Role {
  enum { None, Conv, Joined, Reader } kind = None;
  std::vector<std::size_t> joined;
};

bool per_channel(const Value& v, const Value& out) {
  const auto d = v.shape.static_dims();
  const auto o = out.shape.static_dims();
  if (d.size() < 3 || d.size() > 4 || o.size() != 4) return false;
  const std::size_t c = d.size() - 3;
  return d[c] == o[1] && d[c + 1] == 1 && d[c + 2] == 1 && (c == 0 || d[0] == 1 || d[0] == o[0]);
}

Role role_of(const Graph& g, const Node& n, bool merged_pad) {
  Role r;
  if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] == kNoValue) return r;
  const Value& out = g.value(n.outputs[0]);
  if (conv_2d(g, n)) {
    r.kind = Role::Conv;
    return r;
  }
  if (!n.domain.empty()) return r;
  const std::string& op = n.op_type;
  if (op == "GlobalAveragePool" && float_rank4(g.value(n.inputs[0]))) {
    r.kind = Role::Reader;
    return r;
  }
  if (!float_rank4(out) || !out.shape.is_static()) return r;
  if (op == "MaxPool" || op == "AveragePool" || op == "BatchNormalization" || merged_pad) {
    r.kind = Role::Joined;
    r.joined = {0};
    return r;
  }
  if (op == "Concat") {
    const int64_t axis = n.attrs.get_int("axis", 0);
    if (axis != 1 && axis != -3) return r;
    r.kind = Role::Joined;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) r.joined.push_back(i);
    return r;
  }
  const OpClass k = classify_op(n.domain, op);
  if (!k.known || (k.kind != OpKind::Elementwise && k.kind != OpKind::Broadcast) || op == "Cast" ||
      op == "CastLike")
    return r;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] == kNoValue) continue;
    const Value& v = g.value(n.inputs[i]);
    if (v.shape == out.shape && v.dtype == DType::Float32) {
      r.joined.push_back(i);
      continue;
    }
    const auto numel = v.shape.numel();
    if ((numel && *numel == 1) || (op == "Mul" && per_channel(v, out))) continue;
    return Role{};
  }
  if (!r.joined.empty()) r.kind = Role::Joined;
  return r;
}

// Which values the layout plan keeps NHWC: a Conv's or joined node's output that every
// reader reads in its layout role, less those a joined node's other values rule out
// (until nothing changes).
std::vector<char> nhwc_values(const Graph& g, const std::vector<Role>& roles) {
  std::vector<char> nhwc(g.value_count(), 0);
  for (std::size_t i = 0; i < g.node_count(); ++i) {
    const Role& r = roles[i];
    if (r.kind != Role::Conv && r.kind != Role::Joined) continue;
    const ValueId o = g.node(NodeId(i)).outputs[0];
    const Value& v = g.value(o);
    if (v.is_graph_output || v.consumers.empty()) continue;
    bool ok = true;
    for (NodeId c : v.consumers) {
      const Node& n = g.node(c);
      const Role& cr = roles[std::size_t(c)];
      for (std::size_t j = 0; j < n.inputs.size() && ok; ++j) {
        if (n.inputs[j] != o) continue;
        const bool layout =
            ((cr.kind == Role::Conv || cr.kind == Role::Reader) && j == 0) ||
            (cr.kind == Role::Joined && std::count(cr.joined.begin(), cr.joined.end(), j));
        ok = layout;
      }
      if (!ok) break;
    }
    nhwc[std::size_t(o)] = ok;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < g.node_count(); ++i) {
      if (roles[i].kind != Role::Joined) continue;
      const Node& n = g.node(NodeId(i));
      std::vector<ValueId> vs{n.outputs[0]};
      for (std::size_t j : roles[i].joined) vs.push_back(n.inputs[j]);
      if (std::all_of(vs.begin(), vs.end(), [&](ValueId v) { return nhwc[std::size_t(v)]; }))
        continue;
      for (ValueId v : vs)
        if (nhwc[std::size_t(v)]) nhwc[std::size_t(v)] = 0, changed = true;
    }
  }
  return nhwc;
}

}  // namespace

const char* lone_kind_name(LoneKind k) {
  switch (k) {
    case LoneKind::ClassShare: return "class_share";
    case LoneKind::SpatialConv: return "spatial_conv";
    case LoneKind::OtherConv: return "other_conv";
    case LoneKind::Unchanged: return "unchanged";
    case LoneKind::Merged: return "merged";
  }
  return "?";
}

std::vector<LoneKind> lone_kinds(const Graph& g, const CostModel& cost,
                                 const std::vector<char>& grouped) {
  const std::size_t n = g.node_count();
  std::vector<LoneKind> kinds(n, LoneKind::ClassShare);
  auto lone = [&](NodeId id) { return id != kNoNode && !grouped[std::size_t(id)]; };
  std::vector<char> merged_pad(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!lone(NodeId(i))) continue;
    const Node& node = g.node(NodeId(i));
    NodeId reader = kNoNode;
    if (node.op_type == "Pad") {
      reader = pool_of_pad(g, node);
      if (lone(reader)) merged_pad[i] = 1;
    }
    if (lone(reader)) kinds[i] = kinds[std::size_t(reader)] = LoneKind::Merged;
  }
  std::vector<Role> roles(n);
  for (std::size_t i = 0; i < n; ++i) roles[i] = role_of(g, g.node(NodeId(i)), merged_pad[i]);
  const std::vector<char> nhwc = nhwc_values(g, roles);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = g.node(NodeId(i));
    const Cost& c = cost.node(NodeId(i));
    if (kinds[i] == LoneKind::Merged) continue;
    if (c.kernel_class != KernelClass::Conv && c.kernel_class != KernelClass::Depthwise) continue;
    const bool chained = roles[i].kind == Role::Conv &&
                         (nhwc[std::size_t(node.inputs[0])] || nhwc[std::size_t(node.outputs[0])]);
    // A depthwise conv in a chain runs as the fused program's NHWC loop (its class's
    // share); outside every chain (ConvNeXt's, between the permutes of its LayerNorm) the
    // runtime's, as unfused.
    if (c.kernel_class == KernelClass::Depthwise) {
      if (!chained) kinds[i] = LoneKind::Unchanged;
      continue;
    }
    if (!chained || c.winograd)
      kinds[i] = LoneKind::Unchanged;
    else
      kinds[i] = c.relayout_bytes > 0 ? LoneKind::SpatialConv : LoneKind::OtherConv;
  }
  return kinds;
}

bool kind_fitted(const DeviceProfile& p, LoneKind k) {
  const LoneKernelSaving& l = p.lone_kernel_saving;
  switch (k) {
    case LoneKind::Merged: return std::isfinite(l.merged_share);
    case LoneKind::SpatialConv:
    case LoneKind::OtherConv:
    case LoneKind::Unchanged: return l.has_conv_kinds();
    case LoneKind::ClassShare: return false;
  }
  return false;
}

double lone_saving_s(const DeviceProfile& p, LoneKind k, const Cost& c) {
  if (!c.known) return 0;
  const LoneKernelSaving& l = p.lone_kernel_saving;
  const double share = p.lone_saving_share(c.kernel_class) * c.time_s;
  switch (k) {
    case LoneKind::ClassShare: return share;
    case LoneKind::Merged: return std::isfinite(l.merged_share) ? l.merged_share * c.time_s : share;
    case LoneKind::SpatialConv:
      // Never more than the kernel's own time.
      return l.has_conv_kinds()
                 ? std::min(l.spatial_conv_s_per_byte * double(c.relayout_bytes), c.time_s)
                 : share;
    case LoneKind::OtherConv: return l.has_conv_kinds() ? l.other_conv_share * c.time_s : share;
    case LoneKind::Unchanged: return l.has_conv_kinds() ? 0 : share;
  }
  return 0;
}

}  // namespace fx
