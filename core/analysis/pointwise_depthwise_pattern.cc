// SPDX-License-Identifier: Apache-2.0
// Pointwise Conv (+ Relu/Clip) -> depthwise Conv (+ Relu/Clip) as one group: the
// expanded tensor between the two never leaves the kernel (analysis/pointwise_depthwise.h).
// It runs before conv_bias_act, which would otherwise split the chain in two groups.
#include <algorithm>
#include <cmath>

#include "analysis/fusion_pattern.h"
#include "analysis/pointwise_depthwise.h"

namespace fx {
namespace {

// The only reader of v (one use), or kNoNode; kNoNode when v is a graph output.
NodeId only_reader(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  if (val.is_graph_output || val.consumers.size() != 1) return kNoNode;
  return val.consumers[0];
}

std::shared_ptr<TensorData> const_data(const Graph& g, ValueId v) {
  if (v == kNoValue) return nullptr;
  if (g.value(v).data) return g.value(v).data;
  NodeId p = g.value(v).producer;
  if (p != kNoNode && g.node(p).op_type == "Constant" && g.node(p).domain.empty())
    return g.node(p).attrs.get_tensor("value");
  return nullptr;
}

bool const_f32(const Graph& g, ValueId v) {
  auto d = const_data(g, v);
  return d && d->dtype() == DType::Float32;
}

// A Relu or Clip (constant bounds) node as bounds; false for anything else.
bool activation_bounds(const Graph& g, NodeId n, float* lo, float* hi) {
  const Node& a = g.node(n);
  if (!a.domain.empty() || a.outputs.size() != 1) return false;
  if (a.op_type == "Relu") {
    *lo = 0.f;
    *hi = std::numeric_limits<float>::infinity();
    return true;
  }
  if (a.op_type != "Clip") return false;
  *lo = a.attrs.get_float("min", -std::numeric_limits<float>::infinity());
  *hi = a.attrs.get_float("max", std::numeric_limits<float>::infinity());
  for (std::size_t i = 1; i < 3 && i < a.inputs.size(); ++i) {
    if (a.inputs[i] == kNoValue) continue;
    auto d = const_data(g, a.inputs[i]);
    if (!d || d->numel() != 1) return false;
    (i == 1 ? *lo : *hi) = d->to_floats().at(0);
  }
  return *lo <= *hi;
}

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == x; });
}

// Weights (and bias, when given) constant float32; the weight dims.
std::optional<std::vector<int64_t>> conv_weights(const Graph& g, const Node& c) {
  if (c.op_type != "Conv" || !c.domain.empty() || c.inputs.size() < 2 || c.outputs.size() != 1)
    return std::nullopt;
  if (!const_f32(g, c.inputs[1])) return std::nullopt;
  if (c.inputs.size() > 2 && c.inputs[2] != kNoValue && !const_f32(g, c.inputs[2]))
    return std::nullopt;
  return const_data(g, c.inputs[1])->dims();
}

}  // namespace

std::vector<NodeId> PointwiseDepthwise::nodes() const {
  std::vector<NodeId> n{pw};
  if (pw_act != kNoNode) n.push_back(pw_act);
  n.push_back(dw);
  if (dw_act != kNoNode) n.push_back(dw_act);
  return n;
}

std::optional<PointwiseDepthwise> match_pointwise_depthwise(const Graph& g, NodeId pw) {
  PointwiseDepthwise m;
  m.pw = pw;
  const Node& p = g.node(pw);
  auto pwd = conv_weights(g, p);
  if (!pwd || pwd->size() != 4 || (*pwd)[2] != 1 || (*pwd)[3] != 1) return std::nullopt;
  if (p.attrs.get_int("group", 1) != 1 || !all_equal(p.attrs.get_ints("strides"), 1) ||
      !all_equal(p.attrs.get_ints("pads"), 0) || !all_equal(p.attrs.get_ints("dilations"), 1))
    return std::nullopt;
  const std::string ap = p.attrs.get_string("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID") return std::nullopt;
  m.x = p.inputs[0];
  ValueId v = p.outputs[0];
  NodeId next = only_reader(g, v);
  if (next == kNoNode) return std::nullopt;
  if (activation_bounds(g, next, &m.pw_lo, &m.pw_hi)) {
    m.pw_act = next;
    v = g.node(next).outputs[0];
    next = only_reader(g, v);
    if (next == kNoNode) return std::nullopt;
  }
  const Node& d = g.node(next);
  auto dwd = conv_weights(g, d);
  const int64_t ce = (*pwd)[0];
  if (!dwd || dwd->size() != 4 || (*dwd)[0] != ce || (*dwd)[1] != 1 || d.inputs[0] != v ||
      d.attrs.get_int("group", 1) != ce || !all_equal(d.attrs.get_ints("dilations"), 1) ||
      d.attrs.get_string("auto_pad", "NOTSET") != "NOTSET")
    return std::nullopt;
  const auto st = d.attrs.get_ints("strides");
  if (!st.empty() && (st.size() != 2 || st[0] < 1 || st[1] < 1)) return std::nullopt;
  m.dw = next;
  v = d.outputs[0];
  NodeId after = only_reader(g, v);
  if (after != kNoNode && activation_bounds(g, after, &m.dw_lo, &m.dw_hi)) {
    m.dw_act = after;
    v = g.node(after).outputs[0];
  }
  m.out = v;
  return m;
}

namespace {

// The expanded tensor's size from which the group pays. Below it the tensor stays in
// the cores' L2 between the two kernels anyway (1 MiB per core on the bench machine),
// and the banded kernel only adds the halo rows each band expands again and its
// shorter GEMMs: on MobileNetV2 the 56x56x144 expansions (1.8 MB) ran slower fused,
// the 112x112x96 one (4.8 MB) faster.
constexpr int64_t kMinExpandedBytes = int64_t{2} << 20;

class PointwiseDepthwisePattern : public FusionPattern {
 public:
  std::string_view name() const override { return "pointwise_depthwise"; }
  std::vector<std::string_view> target_ops() const override { return {"Conv"}; }
  std::optional<PatternMatch> match(const PatternContext& ctx, NodeId conv) const override {
    auto pd = match_pointwise_depthwise(ctx.graph(), conv);
    if (!pd) return std::nullopt;
    auto bytes = ctx.graph().value(ctx.output(conv)).byte_size();
    if (!bytes || *bytes < kMinExpandedBytes) return std::nullopt;
    PatternMatch m;
    m.pattern = "pointwise_depthwise";
    m.nodes = pd->nodes();
    m.escaping = ctx.escaping_values(m.nodes, {m.nodes.back()});
    return m;
  }
};

}  // namespace

std::unique_ptr<FusionPattern> make_pointwise_depthwise_pattern() {
  return std::make_unique<PointwiseDepthwisePattern>();
}

}  // namespace fx
