// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/conv_post_op_plan.h"

#include <algorithm>
#include <cfloat>
#include <set>

#include "ir/graph_queries.h"
#include "onnx/bn_fold.h"

namespace fx {

namespace {

std::optional<float> scalar_const(const Graph& g, ValueId v) {
  auto d = constant_data(g, v);
  if (!d || d->numel() != 1) return {};
  return d->to_floats().at(0);
}

bool same_shape(const Shape& a, const Shape& b) {
  if (!a.rank_known() || !b.rank_known() || a.rank() != b.rank()) return false;
  for (std::size_t i = 0; i < a.rank(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

// A float32 constant that is a scalar or varies only along the output's channel axis
// (axis 1 of `out`, right-aligned broadcasting), so it can go into weights and bias.
bool per_channel_constant(const Graph& g, ValueId v, const Shape& out) {
  auto data = constant_data(g, v);
  if (!data || data->dtype() != DType::Float32 || !out.rank_known()) return false;
  const auto& d = data->dims();
  if (d.size() > out.rank()) return false;
  for (std::size_t a = 0; a < d.size(); ++a) {
    const std::size_t oa = out.rank() - d.size() + a;
    if (d[a] != 1 && oa != 1) return false;
  }
  return true;
}

// Add/Sub/Mul/Div `n` on the chain value `cur` as a post-op: its second operand must
// broadcast to the output; it is folded into the weights where only folds precede it
// and it is a per-channel constant, oneDNN's sum for the first residual Add of the
// output's shape, else a binary post-op (whose operand becomes a step input of `p`).
// Returns why not, or "".
std::string binary_post_op(const Graph& g, const Node& n, ValueId cur,
                           const std::set<NodeId>& members, int rank, ConvPostOpPlan& p,
                           bool* has_sum, ConvPostOp& po) {
  const std::string& op = n.op_type;
  if (n.inputs.size() != 2) return "node '" + n.name + "' is not binary";
  ValueId other = n.inputs[0] == cur ? n.inputs[1] : n.inputs[0];
  if (n.inputs[0] == n.inputs[1]) return "node '" + n.name + "' squares the chain";
  if ((op == "Sub" || op == "Div") && n.inputs[0] != cur)
    return "node '" + n.name + "' has the Conv result as its second operand";
  if (members.count(g.value(other).producer)) return "node '" + n.name + "' reads another member";
  const Shape& s = g.value(other).shape;
  const Shape& out = g.value(cur).shape;
  if (!s.rank_known() || static_cast<int>(s.rank()) > rank || !out.rank_known())
    return "operand of '" + n.name + "' does not broadcast to the Conv output";
  for (std::size_t a = 0; a < s.rank(); ++a) {
    const Dim& d = s[a];
    const Dim& o = out[out.rank() - s.rank() + a];
    if (!(d.is_static() && d.value == 1) && !(d == o))
      return "operand of '" + n.name + "' does not broadcast to the Conv output";
  }
  po.alg = op == "Add" ? "add" : op == "Sub" ? "sub" : op == "Mul" ? "mul" : "div";
  po.operand = other;
  const bool linear_so_far =
      std::all_of(p.post_ops.begin(), p.post_ops.end(),
                  [](const ConvPostOp& q) { return q.kind == ConvPostOp::Kind::Fold; });
  if (linear_so_far && per_channel_constant(g, other, out))
    po.kind = ConvPostOp::Kind::Fold;
  else if (op == "Add" && !*has_sum && same_shape(s, out)) {
    po.kind = ConvPostOp::Kind::Sum;
    *has_sum = true;
  } else {
    po.kind = ConvPostOp::Kind::Binary;
  }
  if (po.kind != ConvPostOp::Kind::Fold) p.step_inputs.push_back(other);
  return "";
}

}  // namespace

std::optional<ConvPostOpPlan> plan_conv_post_ops(const Graph& g, const std::vector<NodeId>& nodes,
                                                 std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return std::nullopt;
  };
  if (nodes.empty() || g.node(nodes[0]).op_type != "Conv")
    return fail("the group has no leading Conv");
  ConvPostOpPlan p;
  p.conv = nodes[0];
  const Node& conv = g.node(p.conv);
  const int rank = static_cast<int>(g.value(conv.inputs[0]).shape.rank());
  std::set<NodeId> members(nodes.begin(), nodes.end());
  if (group_external_outputs(g, nodes).size() != 1) return fail("the group has several outputs");
  ValueId cur = conv.outputs[0];
  p.step_inputs.push_back(conv.inputs[0]);
  bool has_sum = false;
  std::size_t i = 1;
  if (i < nodes.size() && g.node(nodes[i]).op_type == "BatchNormalization") {
    std::string b = conv_bn_fold_blocker(g, p.conv, nodes[i]);
    if (!b.empty()) return fail("BatchNormalization cannot fold: " + b);
    p.bn = nodes[i];
    cur = g.node(nodes[i]).outputs[0];
    ++i;
  } else if (g.node(p.conv).inputs.size() < 2 || !g.value(conv.inputs[1]).is_constant()) {
    return fail("Conv weights are not constant");
  }
  for (; i < nodes.size(); ++i) {
    const Node& n = g.node(nodes[i]);
    ConvPostOp po;
    po.node = n.name;
    const std::string& op = n.op_type;
    if (n.inputs.empty() || std::find(n.inputs.begin(), n.inputs.end(), cur) == n.inputs.end())
      return fail("node '" + n.name + "' does not continue the Conv's chain");
    if (op == "Relu")
      po.alg = "relu";
    else if (op == "LeakyRelu") {
      po.alg = "relu";
      po.alpha = n.attrs.get_float("alpha", 0.01f);
    } else if (op == "Tanh")
      po.alg = "tanh";
    else if (op == "HardSwish") {
      po.alg = "hardswish";
      po.alpha = 1.f / 6.f;
      po.beta = 0.5f;
    } else if (op == "Elu") {
      po.alg = "elu";
      po.alpha = n.attrs.get_float("alpha", 1.f);
    } else if (op == "Gelu" && n.attrs.get_string("approximate", "none") == "none")
      po.alg = "gelu_erf";
    else if (op == "Clip") {
      po.alg = "clip";
      po.alpha = n.attrs.get_float("min", -FLT_MAX);
      po.beta = n.attrs.get_float("max", FLT_MAX);
      for (std::size_t k = 1; k < n.inputs.size() && k < 3; ++k) {
        if (n.inputs[k] == kNoValue) continue;
        auto c = scalar_const(g, n.inputs[k]);
        if (!c) return fail("Clip '" + n.name + "' has non-constant bounds");
        (k == 1 ? po.alpha : po.beta) = *c;
      }
    } else if (op == "Sigmoid") {
      // x * Sigmoid(x) is swish; a lone Sigmoid is logistic.
      const Value& sv = g.value(n.outputs[0]);
      if (i + 1 < nodes.size() && g.node(nodes[i + 1]).op_type == "Mul" &&
          sv.consumers.size() == 1 && sv.consumers[0] == nodes[i + 1]) {
        const Node& m = g.node(nodes[i + 1]);
        if (m.inputs.size() == 2 && ((m.inputs[0] == cur && m.inputs[1] == n.outputs[0]) ||
                                     (m.inputs[1] == cur && m.inputs[0] == n.outputs[0]))) {
          po.alg = "swish";
          po.alpha = 1.f;
          po.node += "+" + m.name;
          p.post_ops.push_back(po);
          cur = m.outputs[0];
          ++i;
          continue;
        }
      }
      po.alg = "logistic";
    } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      const std::string w = binary_post_op(g, n, cur, members, rank, p, &has_sum, po);
      if (!w.empty()) return fail(w);
    } else {
      return fail("op " + op + " (node '" + n.name + "') has no oneDNN post-op");
    }
    p.post_ops.push_back(po);
    cur = n.outputs[0];
  }
  p.output = cur;
  return p;
}

}  // namespace fx
