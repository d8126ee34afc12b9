// SPDX-License-Identifier: Apache-2.0
// Lowering of a fusion group to a row kernel (see kernel_ir.h). The checks run in the
// order a user would want to read them: unsupported op, dtype, shape, broadcasting.

#include "codegen/kernel_ir.h"

#include <algorithm>
#include <cfloat>
#include <set>
#include <unordered_map>

#include "codegen/op_exprs.h"

namespace fx {

std::string c_identifier(const std::string& name) {
  std::string s = "fx_";
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return s;
}

int add_var(LoweredGroup& g, bool row, const std::string& comment) {
  KVar v;
  v.row = row;
  v.c_name = "v" + std::to_string(g.vars.size());
  v.comment = comment;
  g.vars.push_back(v);
  return static_cast<int>(g.vars.size()) - 1;
}

namespace {

constexpr int kFull = 0, kBcast = 1, kUnit = 2;

bool is_reduce(const std::string& op) {
  return op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin";
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.rank(); ++i) {
    if (i) r += ",";
    r += s[i].is_static() ? std::to_string(s[i].value) : (s[i].symbol.empty() ? "?" : s[i].symbol);
  }
  return r + "]";
}

bool fixed_one(const Dim& d) {
  return d.is_static() && d.value == 1;
}

class Lowerer {
 public:
  Lowerer(const Graph& g, const std::vector<NodeId>& nodes) : g_(g), nodes_(nodes) {}

  LowerResult run(const std::string& id, const std::string& entry) {
    LowerResult r;
    r.reason = check_ops();
    if (r.reason.empty()) r.reason = compute_ref();
    if (r.reason.empty()) r.reason = choose_row();
    if (r.reason.empty()) r.reason = build();
    if (!r.reason.empty()) return r;
    lg_.group_id = id;
    lg_.entry = entry;
    for (NodeId n : nodes_) lg_.node_names.push_back(g_.node(n).name);
    lg_.ref_shape = shape_str(Shape(ref_));
    lg_.rank = static_cast<int>(ref_.size());
    lg_.row_begin = row_begin_;
    r.group = std::move(lg_);
    return r;
  }

 private:
  std::string where(NodeId n) const {
    return g_.node(n).op_type + " node '" + g_.node(n).name + "'";
  }

  std::optional<float> scalar_constant(ValueId v) const {
    auto d = constant_data(g_, v);
    if (!d || d->numel() != 1) return std::nullopt;
    return d->to_floats().at(0);
  }

  std::string check_ops() {
    for (NodeId n : nodes_) {
      const Node& node = g_.node(n);
      const std::string& op = node.op_type;
      if (!node.domain.empty()) return "op " + node.qualified_op() + " is not emitted";
      bool known = elementwise_arity(op) || is_reduce(op) || op == "Softmax" ||
                   op == "LogSoftmax" || op == "LayerNormalization";
      if (!known) return "op " + op + " (node '" + node.name + "') has no C++ emitter";
      for (ValueId v : node.outputs) {
        if (v == kNoValue) continue;
        if (g_.value(v).dtype != DType::Float32) {
          return "value '" + g_.value(v).name + "' of " + where(n) + " is not float32";
        }
        if (!g_.value(v).shape.rank_known()) {
          return "value '" + g_.value(v).name + "' of " + where(n) + " has no known shape";
        }
      }
      if (op == "LayerNormalization") {
        for (std::size_t i = 1; i < node.outputs.size(); ++i)
          if (node.outputs[i] != kNoValue && !g_.value(node.outputs[i]).consumers.empty())
            return where(n) + " uses its Mean/InvStdDev outputs";
      }
    }
    return {};
  }

  // The inputs that are tensors (not axes, Clip bounds or scalar literals).
  std::vector<ValueId> tensor_inputs(const Node& node) const {
    std::vector<ValueId> v;
    if (is_reduce(node.op_type) || node.op_type == "Clip" || node.op_type == "Softmax" ||
        node.op_type == "LogSoftmax") {
      v.push_back(node.inputs.at(0));
    } else {
      for (ValueId x : node.inputs)
        if (x != kNoValue && !scalar_constant(x)) v.push_back(x);
    }
    return v;
  }

  bool merge(const Shape& s) {
    if (s.rank() > ref_.size()) ref_.insert(ref_.begin(), s.rank() - ref_.size(), Dim::fixed(1));
    std::size_t off = ref_.size() - s.rank();
    for (std::size_t i = 0; i < s.rank(); ++i) {
      Dim& r = ref_[off + i];
      const Dim& d = s[i];
      if (!d.is_static() && d.symbol.empty()) return false;  // an anonymous unknown dim
      if (fixed_one(d) || d == r) continue;
      if (fixed_one(r))
        r = d;
      else
        return false;
    }
    return true;
  }

  std::string compute_ref() {
    for (NodeId n : nodes_) {
      const Node& node = g_.node(n);
      for (ValueId v : tensor_inputs(node)) {
        const Shape& s = g_.value(v).shape;
        if (!s.rank_known()) return "input '" + g_.value(v).name + "' has no known shape";
        if (!merge(s)) return "shapes do not broadcast statically at " + where(n);
      }
      bool drops = is_reduce(node.op_type) && node.attrs.get_int("keepdims", 1) == 0;
      if (!drops && !merge(g_.value(node.outputs[0]).shape))
        return "shapes do not broadcast statically at " + where(n);
    }
    if (ref_.empty()) return "the group computes scalars only";
    return {};
  }

  std::vector<int> mask_of(const Shape& s) const {
    std::vector<int> m(ref_.size(), kUnit);
    std::size_t off = ref_.size() - s.rank();
    for (std::size_t a = 0; a < ref_.size(); ++a) {
      if (fixed_one(ref_[a])) continue;
      if (a < off || fixed_one(s[a - off]))
        m[a] = kBcast;
      else
        m[a] = kFull;
    }
    return m;
  }

  bool uniform(const std::vector<int>& m, int from) const {
    int seen = kUnit;
    for (std::size_t a = static_cast<std::size_t>(from); a < m.size(); ++a) {
      if (m[a] == kUnit) continue;
      if (seen != kUnit && m[a] != seen) return false;
      seen = m[a];
    }
    return true;
  }

  std::string choose_row() {
    const int rank = static_cast<int>(ref_.size());
    int k = -1;
    for (NodeId n : nodes_) {
      const Node& node = g_.node(n);
      int kn = -1;
      const int in_rank = static_cast<int>(g_.value(node.inputs[0]).shape.rank());
      if (is_reduce(node.op_type)) {
        std::vector<int64_t> axes = node.attrs.get_ints("axes");
        if (node.inputs.size() > 1 && node.inputs[1] != kNoValue) {
          auto av = constant_data(g_, node.inputs[1]);
          if (!av) return where(n) + " has non-constant axes";
          axes = av->to_int64s();
        }
        if (in_rank != rank) return where(n) + " reduces a tensor of lower rank";
        if (axes.empty()) return where(n) + " reduces all axes";
        for (auto& a : axes) a = a < 0 ? a + rank : a;
        std::sort(axes.begin(), axes.end());
        for (std::size_t i = 0; i < axes.size(); ++i)
          if (axes[i] != rank - static_cast<int64_t>(axes.size() - i))
            return where(n) + " does not reduce trailing axes";
        kn = static_cast<int>(axes.front());
      } else if (node.op_type == "Softmax" || node.op_type == "LogSoftmax" ||
                 node.op_type == "LayerNormalization") {
        if (in_rank != rank) return where(n) + " has an input of lower rank";
        int64_t axis = node.attrs.get_int("axis", -1);
        kn = static_cast<int>(axis < 0 ? axis + rank : axis);
        // Softmax from opset 13 normalizes one axis; only the last one is a row here.
        if (node.op_type != "LayerNormalization" && kn != rank - 1) {
          return where(n) + " normalizes axis " + std::to_string(axis) + ", not the last";
        }
      }
      if (kn < 0) continue;
      if (k >= 0 && k != kn) return "reductions over different axes in one group";
      k = kn;
    }
    std::vector<std::vector<int>> masks;
    for (ValueId v : tensor_externals()) masks.push_back(mask_of(g_.value(v).shape));
    if (k >= 0) {
      lg_.has_reduction = true;
      for (const auto& m : masks)
        if (!uniform(m, k)) return "an input is broadcast along part of the reduced axes";
    } else {
      k = rank - 1;
      while (k > 0 && std::all_of(masks.begin(), masks.end(),
                                  [&](const auto& m) { return uniform(m, k - 1); }))
        --k;
      if (!std::all_of(masks.begin(), masks.end(), [&](const auto& m) { return uniform(m, k); }))
        return "inputs broadcast along the innermost axis in different ways";
    }
    row_begin_ = k;
    return {};
  }

  int new_var(bool row, const std::string& comment) { return add_var(lg_, row, comment); }

  int literal(float x) {
    KVar v;
    v.row = false;
    v.literal = true;
    v.c_name = c_float_literal(x);
    lg_.vars.push_back(v);
    return static_cast<int>(lg_.vars.size()) - 1;
  }

  int var_of(ValueId v) {
    auto it = var_.find(v);
    if (it != var_.end()) return it->second;
    if (auto c = scalar_constant(v)) return var_[v] = literal(*c);
    return -1;
  }

  int emit(const std::string& node, const std::string& op, std::vector<int> args, bool row,
           const std::string& comment = {}, float alpha = 0, float beta = 0, bool mean = false) {
    KOp k;
    k.node = node;
    k.op = op;
    k.args = std::move(args);
    k.alpha = alpha;
    k.beta = beta;
    k.mean = mean;
    k.result = new_var(row, comment);
    lg_.ops.push_back(k);
    return k.result;
  }

  // Whether every reader of v in the group reads it as Where's condition (only).
  bool only_where_condition(ValueId v) const {
    for (NodeId n : nodes_) {
      const Node& node = g_.node(n);
      for (std::size_t i = 0; i < node.inputs.size(); ++i)
        if (node.inputs[i] == v && (node.op_type != "Where" || i != 0)) return false;
    }
    return true;
  }

  // External inputs read as tensors (not axes, bounds or scalar literals).
  std::vector<ValueId> tensor_externals() const {
    std::set<ValueId> used;
    for (NodeId n : nodes_)
      for (ValueId v : tensor_inputs(g_.node(n))) used.insert(v);
    std::vector<ValueId> out;
    for (ValueId v : group_external_inputs(g_, nodes_))
      if (used.count(v)) out.push_back(v);
    return out;
  }

  std::string build() {
    // Rows of one element (Softmax over an axis of 1): every row axis is 1, so no input
    // is "full" along the row, yet each input's element is its own row; read as row
    // values (p[j], j = 0), the reductions see them as they should.
    bool unit_row = true;
    for (std::size_t a = static_cast<std::size_t>(row_begin_); a < ref_.size(); ++a)
      unit_row = unit_row && fixed_one(ref_[a]);
    for (ValueId v : tensor_externals()) {
      const bool mask = g_.value(v).dtype == DType::Bool && only_where_condition(v);
      if (g_.value(v).dtype != DType::Float32 && !mask)
        return "input '" + g_.value(v).name + "' is not float32";
      KInput in;
      in.mask = mask;
      in.value = v;
      in.name = g_.value(v).name;
      in.rank = static_cast<int>(g_.value(v).shape.rank());
      auto m = mask_of(g_.value(v).shape);
      bool row = unit_row && lg_.has_reduction;
      for (std::size_t a = 0; a < m.size(); ++a) {
        in.bcast.push_back(m[a] == kBcast);
        if (static_cast<int>(a) >= row_begin_ && m[a] == kFull) row = true;
      }
      in.var = var_[v] = new_var(row, in.name);
      lg_.inputs.push_back(in);
    }
    for (NodeId n : nodes_) {
      std::string why = lower_node(g_.node(n));
      if (!why.empty()) return why;
    }
    for (ValueId v : group_external_outputs(g_, nodes_)) {
      KOutput o;
      o.value = v;
      o.name = g_.value(v).name;
      o.var = var_.at(v);
      const KVar& kv = lg_.vars[static_cast<std::size_t>(o.var)];
      if (!kv.row && !lg_.has_reduction) return "output '" + o.name + "' is broadcast";
      if (!kv.row)
        o.drop_row_axes = static_cast<int>(g_.value(v).shape.rank()) <= row_begin_;
      else if (g_.value(v).shape.rank() != ref_.size())
        return "output '" + o.name + "' has a lower rank than the group's rows";
      // The kernel writes every row output over the whole iteration space; an
      // intermediate read outside the group that is broadcast along some axis (an
      // attention mask before it meets the scores) would be written at the wrong shape.
      if (kv.row) {
        const std::vector<int> m = mask_of(g_.value(v).shape);
        if (std::find(m.begin(), m.end(), kBcast) != m.end())
          return "output '" + o.name + "' is broadcast along an axis of the group's rows";
      }
      lg_.vars[static_cast<std::size_t>(o.var)].comment = o.name;
      lg_.outputs.push_back(o);
    }
    return {};
  }

  std::string lower_node(const Node& node) {
    const std::string& op = node.op_type;
    const std::string out_name = g_.value(node.outputs[0]).name;
    std::vector<int> args;
    for (ValueId v : tensor_inputs(node)) {
      int a = var_of(v);
      if (a < 0) return "input '" + g_.value(v).name + "' of node '" + node.name + "' is unknown";
      args.push_back(a);
    }
    // Scalar literals keep their operand position (e.g. Sub(1, x)).
    if (elementwise_arity(op) && op != "Clip") {
      args.clear();
      for (ValueId v : node.inputs)
        if (v != kNoValue) args.push_back(var_of(v));
    }
    auto any_row = [&](const std::vector<int>& a) {
      return std::any_of(a.begin(), a.end(), [&](int i) { return lg_.vars[i].row; });
    };
    int result = -1;
    if (op == "Clip") {
      float lo = node.attrs.get_float("min", -FLT_MAX), hi = node.attrs.get_float("max", FLT_MAX);
      for (std::size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
        if (node.inputs[i] == kNoValue) continue;
        auto c = scalar_constant(node.inputs[i]);
        if (!c) return "Clip node '" + node.name + "' has non-constant bounds";
        (i == 1 ? lo : hi) = *c;
      }
      result = emit(node.name, op, args, any_row(args), out_name, lo, hi);
    } else if (auto ar = elementwise_arity(op)) {
      if (static_cast<int>(args.size()) != *ar) return "node '" + node.name + "' has extra inputs";
      float alpha = node.attrs.get_float("alpha", op == "LeakyRelu"     ? 0.01f
                                                  : op == "HardSigmoid" ? 0.2f
                                                                        : 1.f);
      float beta = node.attrs.get_float("beta", 0.5f);
      std::string o = op;
      if (op == "Gelu" && node.attrs.get_string("approximate", "none") == "tanh") o = "GeluTanh";
      result = emit(node.name, o, args, any_row(args), out_name, alpha, beta);
    } else if (is_reduce(op)) {
      bool mean = op == "ReduceMean";
      std::string k = op == "ReduceMax"   ? "ReduceMax"
                      : op == "ReduceMin" ? "ReduceMin"
                                          : "ReduceSum";
      result = emit(node.name, k, {args[0]}, false, out_name, 0, 0, mean);
    } else if (op == "Softmax" || op == "LogSoftmax") {
      int x = args[0];
      int m = emit(node.name, "ReduceMax", {x}, false, "row max");
      int d = emit(node.name, "Sub", {x, m}, true);
      int e = emit(node.name, "Exp", {d}, true);
      lg_.ops.back().nonpositive = true;  // x - rowmax <= 0 (or NaN)
      int s = emit(node.name, "ReduceSum", {e}, false, "row sum of exp");
      if (op == "Softmax")
        result = emit(node.name, "Div", {e, s}, true, out_name);
      else
        result = emit(node.name, "Sub", {d, emit(node.name, "Log", {s}, false)}, true, out_name);
    } else if (op == "LayerNormalization") {
      int x = var_of(node.inputs[0]);
      int mu = emit(node.name, "ReduceSum", {x}, false, "mean", 0, 0, true);
      int d = emit(node.name, "Sub", {x, mu}, true);
      int sq = emit(node.name, "Mul", {d, d}, true);
      int var = emit(node.name, "ReduceSum", {sq}, false, "variance", 0, 0, true);
      float eps = node.attrs.get_float("epsilon", 1e-5f);
      int ve = emit(node.name, "Add", {var, literal(eps)}, false);
      int inv =
          emit(node.name, "Reciprocal", {emit(node.name, "Sqrt", {ve}, false)}, false, "1/std");
      int y = emit(node.name, "Mul", {d, inv}, true);
      int sc = var_of(node.inputs.at(1));
      if (sc < 0) return "LayerNormalization node '" + node.name + "' has an unknown scale";
      y = emit(node.name, "Mul", {y, sc}, true);
      if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
        y = emit(node.name, "Add", {y, var_of(node.inputs[2])}, true);
      }
      lg_.vars[static_cast<std::size_t>(y)].comment = out_name;
      result = y;
    }
    var_[node.outputs[0]] = result;
    return {};
  }

  const Graph& g_;
  const std::vector<NodeId>& nodes_;
  std::vector<Dim> ref_;
  int row_begin_ = 0;
  LoweredGroup lg_;
  std::unordered_map<ValueId, int> var_;
};

}  // namespace

LowerResult lower_group(const Graph& g, const std::vector<NodeId>& nodes, const std::string& id,
                        const std::string& entry) {
  if (nodes.empty()) return {std::nullopt, "empty group"};
  return Lowerer(g, nodes).run(id, entry);
}

}  // namespace fx
