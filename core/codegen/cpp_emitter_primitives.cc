// SPDX-License-Identifier: Apache-2.0
// Passes that are one call of a prelude primitive (cpp_row_emitter.h): a row max
// (fx_row_max), Softmax's exp pass, e = exp(x - max) kept for a later pass and summed
// (fx_exp_sum), and LayerNorm's output pass while streaming it out
// (fx_store_stream_norm). With AVX-512 the first two are written with intrinsics, their
// exp in fewer multiply-adds per 16 floats (the pass's bound), and without the generic
// loop's per-row overheads.

#include <algorithm>

#include "codegen/cpp_row_emitter.h"

namespace fx {

// Pass p as one call of a row primitive, when it is exactly one (else "").
std::string CppRowEmitter::row_primitive(int p, const std::vector<const KOp*>& reds) {
  if (reds.size() != 1) return "";
  const KOp& r = *reds[0];
  const std::vector<const KOp*> row_ops = row_ops_in(p);
  if (row_ops.empty() && r.op == "ReduceMax" && p != pf_pass_) return row_max_primitive(r);
  if (row_ops.size() != 2 || r.op != "ReduceSum" || r.mean) return "";
  return exp_sum_primitive(p, r, row_ops);
}

// The max of an input read whole (row t + 1 is p + row) may come from the previous
// row's exp pass (fx_exp_sum_max), with the static schedule's rows consecutive on each
// thread: the first such max is marked as carried (finish() unmarks it when no exp pass
// computes it).
std::string CppRowEmitter::row_max_primitive(const KOp& r) {
  const std::string acc = "      const float acc" + std::to_string(r.result) + " = ";
  const std::string note = ";  // " + r.node + " (";
  const std::string x = row_ptr(r.args.at(0));
  if (x.empty()) return "";
  for (std::size_t i = 0; i < g_.inputs.size(); ++i)
    if (g_.inputs[i].var == r.args[0] && carry_input_ < 0 &&
        std::none_of(g_.inputs[i].bcast.begin(), g_.inputs[i].bcast.end(),
                     [](bool b) { return b; })) {
      carry_input_ = static_cast<int>(i);
      return acc + "t == carried_t ? carried_max : fx_row_max(" + x + ", j1 - j0)" + note +
             "ReduceMax; of row t + 1 computed in row t's exp pass)\n";
    }
  return acc + "fx_row_max(" + x + ", j1 - j0)" + note + "ReduceMax)\n";
}

// Sub(x, max), Exp (never positive) and their ReduceSum as fx_exp_sum; the first such
// pass after a carried max also computes the next row's max (fx_exp_sum_max).
std::string CppRowEmitter::exp_sum_primitive(int p, const KOp& r,
                                             const std::vector<const KOp*>& row_ops) {
  const LoweredGroup& g = g_;
  const KOp &sub = *row_ops[0], &ex = *row_ops[1];
  if (sub.op != "Sub" || ex.op != "Exp" || !ex.nonpositive || ex.args.at(0) != sub.result ||
      r.args.at(0) != ex.result || g.vars[static_cast<std::size_t>(sub.args.at(1))].row)
    return "";
  int sub_readers = 0;  // the Exp only, and no group output
  for (const KOp& op : g.ops)
    sub_readers += static_cast<int>(std::count(op.args.begin(), op.args.end(), sub.result));
  if (sub_readers != 1 || output_index(sub.result) >= 0) return "";
  const std::string x = row_ptr(sub.args[0]);
  std::vector<std::string> dst;  // where e is kept: exactly one place
  if (alias_[ex.result] >= 0) dst.push_back("d" + std::to_string(alias_[ex.result]));
  if (slot_[ex.result] >= 0) dst.push_back("b" + std::to_string(ex.result) + " + j0");
  if (int k = output_index(ex.result); k >= 0) dst.push_back("d" + std::to_string(k));
  if (x.empty() || dst.size() != 1) return "";
  std::string pf = "nullptr";
  if (p == pf_pass_) {
    if (row_pf_.size() != 1) return "";
    pf = "pf ? p" + std::to_string(row_pf_[0]) + " + " + std::to_string(kPrefetchRows) +
         " * row + j0 : nullptr";
  }
  const std::string acc = "      const float acc" + std::to_string(r.result) + " = ";
  const std::string note = ";  // " + r.node + " (";
  const std::string args = x + ", " + ref(sub.args[1], p) + ", " + dst[0] + ", j1 - j0, " + pf;
  if (carry_input_ < 0 || carried_)
    return acc + "fx_exp_sum(" + args + ")" + note + "Sub, Exp, ReduceSum)\n";
  carried_ = true;
  const std::string a = "acc" + std::to_string(r.result);
  return "      float " + a + ";  // " + r.node + " (Sub, Exp, ReduceSum; the next row's max)\n" +
         "      if (t + 1 < outer * nchunks) {\n        " + a + " = fx_exp_sum_max(" + args +
         ", p" + std::to_string(carry_input_) + " + row + j0, &carried_max);\n" +
         "        carried_t = t + 1;\n      } else {\n        " + a + " = fx_exp_sum(" + args +
         ");\n      }\n";
}

// LayerNorm's output pass, exactly (x - mu) * s (or / s) * g + b with x, g, b row
// inputs and mu, s per-row scalars, the result a row output and nothing else computed
// in the pass: the call computing it while streaming it out (fx_store_stream_norm), or
// "". Its ops are the last four of the pass, in this order.
std::string CppRowEmitter::norm_affine_stream(int p) {
  const LoweredGroup& g = g_;
  const std::vector<const KOp*> ops = row_ops_in(p);
  for (const KOp& op : g.ops)
    if (s_.phase[op.result] == p && is_reduction(op)) return "";
  if (ops.size() != 4) return "";
  auto input_ptr = [&](int v) -> std::string {
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      if (g.inputs[i].var == v && g.vars[static_cast<std::size_t>(v)].row)
        return "p" + std::to_string(i) + " + j0";
    return "";
  };
  auto scalar = [&](int v) {
    const KVar& kv = g.vars[static_cast<std::size_t>(v)];
    return !kv.row && !kv.literal;
  };
  auto only_reader = [&](int v, const KOp* r) {
    int n = 0;
    for (const KOp& op : g.ops)
      n += static_cast<int>(std::count(op.args.begin(), op.args.end(), v));
    return n == 1 && output_index(v) < 0 && std::count(r->args.begin(), r->args.end(), v) == 1;
  };
  // The other operand of a binary op whose one operand is v, or -1.
  auto other = [](const KOp* op, int v) {
    if (op->args.size() != 2) return -1;
    return op->args[0] == v ? op->args[1] : op->args[1] == v ? op->args[0] : -1;
  };
  const KOp *sub = ops[0], *sc = ops[1], *mg = ops[2], *ab = ops[3];
  if (sub->op != "Sub" || sub->args.size() != 2 || !scalar(sub->args[1])) return "";
  const std::string x = input_ptr(sub->args[0]);
  if (x.empty() || !only_reader(sub->result, sc) || !only_reader(sc->result, mg) ||
      !only_reader(mg->result, ab))
    return "";
  std::string sv;
  if (sc->op == "Mul" && other(sc, sub->result) >= 0 && scalar(other(sc, sub->result)))
    sv = g.vars[static_cast<std::size_t>(other(sc, sub->result))].c_name;
  else if (sc->op == "Div" && sc->args.size() == 2 && sc->args[0] == sub->result &&
           scalar(sc->args[1]))
    sv = "1.f / " + g.vars[static_cast<std::size_t>(sc->args[1])].c_name;
  if (sv.empty() || mg->op != "Mul" || ab->op != "Add") return "";
  const int gv = other(mg, sc->result), bv = other(ab, mg->result);
  const int k = output_index(ab->result);
  if (gv < 0 || bv < 0 || k < 0 || input_ptr(gv).empty() || input_ptr(bv).empty()) return "";
  return "fx_store_stream_norm(q" + std::to_string(k) + " + j0, " + x + ", " +
         g.vars[static_cast<std::size_t>(sub->args[1])].c_name + ", " + sv + ", " + input_ptr(gv) +
         ", " + input_ptr(bv) + ", j1 - j0);  // " + ab->node + " (Sub, Mul, Mul, Add)\n";
}

}  // namespace fx
