// SPDX-License-Identifier: Apache-2.0
// Emission of one pass over the row (cpp_row_emitter.h): a prelude row primitive when
// the pass is exactly one, else a loop (in blocks with prefetches, or with lane
// accumulators for its reductions), then the reductions' results and the streaming
// stores of the outputs it computed.

#include <algorithm>

#include "codegen/cpp_row_emitter.h"
#include "codegen/op_exprs.h"

namespace fx {

namespace {

std::string var_comment(const KVar& v) {
  return v.comment.empty() ? "" : "  // " + v.comment;
}

// `text` with `pad` after each of its line breaks but a final one.
std::string indent_lines(const std::string& text, const std::string& pad) {
  std::string out;
  for (std::size_t q = 0; q < text.size(); ++q) {
    out += text[q];
    if (text[q] == '\n' && q + 1 < text.size()) out += pad;
  }
  return out;
}

}  // namespace

void CppRowEmitter::emit_pass(int p) {
  const LoweredGroup& g = g_;
  std::vector<const KOp*> reds;
  for (const KOp& op : g.ops)
    if (is_reduction(op) && s_.phase[op.result] == p) reds.push_back(&op);
  o_ << "      // pass " << p << "\n";
  const std::string special = row_primitive(p, reds);
  o_ << special;
  const std::string clauses = special.empty() ? declare_accumulators(reds) : "";
  const std::string body = pass_body(p, false);
  int scaled_out = -1;  // the output streamed by fx_store_stream_scaled in this pass
  // Elementwise chains stream through blocks of kBlock elements and prefetch their
  // inputs kAhead elements ahead (the hardware prefetcher stops at 4 KiB pages, and
  // the exp/erf polynomials leave the loads little room in the out-of-order window).
  // Row kernels: a later row, in the heaviest pass (see plan_prefetch).
  std::vector<std::size_t> streamed;
  if (!g.has_reduction)
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      if (g.vars[static_cast<std::size_t>(g.inputs[i].var)].row) streamed.push_back(i);
  if (p == pf_pass_) streamed = row_pf_;
  const bool reduces = !reds.empty() && g.has_reduction;
  if (!special.empty()) {
    // the row primitive above is the whole pass
  } else if (!streamed.empty()) {
    emit_block_loop(p, body, clauses, streamed, reduces);
  } else if (reduces) {
    emit_reduce_loop(body, clauses, "j0", "j1", "", p);
  } else {
    scaled_out = emit_row_loop(p, body, clauses);
  }
  if (special.empty()) {
    o_ << "      }\n";
    emit_lane_combine(reds);
  }
  emit_pass_end(p, reds, !streamed.empty() && !g.has_reduction, scaled_out);
}

// Each reduction's accumulator and lane accumulators; returns the loop's `omp simd`
// reduction clauses.
std::string CppRowEmitter::declare_accumulators(const std::vector<const KOp*>& reds) {
  std::string clauses;
  for (const KOp* r : reds) {
    std::string acc = "acc" + std::to_string(r->result);
    bool mx = r->op == "ReduceMax", mn = r->op == "ReduceMin";
    const char* init = mx ? "-INFINITY" : mn ? "INFINITY" : "0.f";
    o_ << "      float " << acc << " = " << init << ";\n";
    o_ << "      float la" << r->result << "[" << kLanes << "];  // lane accumulators\n";
    o_ << "      for (int l = 0; l < " << kLanes << "; ++l) la" << r->result << "[l] = " << init
       << ";\n";
    // The mean of an input (LayerNorm's mean) sums the deviations from the row's
    // first value: a row far from 0 (1e4 +- 1) keeps its digits, in float (a double
    // accumulator halves the vector width of a pass that should stream).
    if (r->mean && shifted(*r) >= 0)
      o_ << "      const float sh" << r->result << " = p" << shifted(*r)
         << "[j0];  // shift of the mean\n";
    clauses += std::string(" reduction(") + (mx ? "max" : mn ? "min" : "+") + ":" + acc + ")";
  }
  return clauses;
}

// The loop body of pass p, 8 spaces deep; `lanes`: reductions into the lane
// accumulators.
std::string CppRowEmitter::pass_body(int p, bool lanes) {
  const LoweredGroup& g = g_;
  std::ostringstream body;
  for (const KOp& op : g.ops) {
    const KVar& r = g.vars[static_cast<std::size_t>(op.result)];
    if (s_.phase[op.result] != p) continue;
    std::vector<std::string> args;
    for (int a : op.args) args.push_back(ref(a, p));
    if (is_reduction(op)) {
      std::string acc = (lanes ? "la" : "acc") + std::to_string(op.result) + (lanes ? "[l]" : "");
      if (op.op == "ReduceSum")
        body << "        " << acc << " += " << args[0]
             << (op.mean && shifted(op) >= 0 ? " - sh" + std::to_string(op.result) : "") << ";";
      else
        body << "        " << acc << " = " << acc << (op.op == "ReduceMax" ? " > " : " < ")
             << args[0] << " ? " << acc << " : " << args[0] << ";";
      body << "  // " << op.node << " (" << op.op << (op.mean ? ", mean" : "") << ")\n";
      continue;
    }
    if (!r.row) continue;
    // Division by a per-row scalar the group computes: one reciprocal per row
    // (hoisted out of the loop) and a multiply per element (inverted_divisor).
    const bool by_row_scalar = op.op == "Div" && inverted_divisor(op.args.back());
    body << "        const float " << r.c_name << " = "
         << (by_row_scalar ? "(" + args[0] + ") * (1.f / " + args[1] + ")" : c_expression(op, args))
         << ";  // " << op.node << " (" << op.op << ")" << var_comment(r) << "\n";
    if (slot_[op.result] >= 0) body << "        b" << op.result << "[j] = " << r.c_name << ";\n";
    if (alias_[op.result] >= 0)
      body << "        d" << alias_[op.result] << "[j - j0] = " << r.c_name << ";  // in place\n";
    if (int k = output_index(op.result); k >= 0)
      body << "        d" << k << "[j - j0] = " << r.c_name << ";\n";
  }
  return body.str();
}

// A reduction pass of a row kernel over [a, b): FX_LANES independent accumulators
// (four AVX-512 or AVX2 registers) over FX_LANES-element steps, then the rest of the
// range into the scalar accumulator. One `omp simd reduction` accumulator is one vector
// register: every add waits for the previous one (4 cycles), which bounded a
// 1024-float row's reduction pass below the speed of L2. Leaves the last loop open.
void CppRowEmitter::emit_reduce_loop(const std::string& body, const std::string& clauses,
                                     const std::string& a, const std::string& b,
                                     const std::string& ind, int p) {
  const std::string li = indent_lines(pass_body(p, true), ind + "    ");
  o_ << ind << "      for (int64_t jv = " << a << "; jv + " << kLanes << " <= " << b
     << "; jv += " << kLanes << ") {\n";
  o_ << "#pragma omp simd\n";
  o_ << ind << "        for (int64_t l = 0; l < " << kLanes << "; ++l) {\n";
  o_ << ind << "          const int64_t j = jv + l;\n  " << ind << "    " << li << ind
     << "        }\n";
  o_ << ind << "      }\n";
  // The rest of the range into the scalar accumulators. (Into the first lanes
  // instead, with the lanes combined by fx_lanes_sum, LayerNorm streamed slower,
  // though it was faster in cache.)
  o_ << "#pragma omp simd" << clauses << "\n";
  o_ << ind << "      for (int64_t j = " << a << " + ((" << b << " - " << a << ") & ~int64_t("
     << kLanes << " - 1)); j < " << b << "; ++j) {\n"
     << ind << indent_lines(body, ind);
}

// Pass p in blocks of kBlock elements, prefetching the `streamed` inputs (a later row
// in the prefetch pass, else kAhead elements ahead). Leaves the block loop open.
void CppRowEmitter::emit_block_loop(int p, const std::string& body, const std::string& clauses,
                                    const std::vector<std::size_t>& streamed, bool reduces) {
  const LoweredGroup& g = g_;
  auto& o = o_;
  o << "      for (int64_t jb = j0; jb < j1; jb += " << kBlock << ") {\n";
  o << "        const int64_t jb1 = std::min(j1, jb + " << kBlock << ");\n";
  if (p == pf_pass_) {
    o << "        if (pf)\n          for (int64_t k = jb; k < jb1; k += 16) {  // a later "
         "row\n";
    for (std::size_t i : streamed)
      o << "            __builtin_prefetch(p" << i << " + " << kPrefetchRows << " * row + k);\n";
    o << "          }\n";
  } else {
    o << "        for (int64_t k = jb; k < jb1; k += 16) {  // one cache line per input\n";
    for (std::size_t i : streamed)
      o << "          __builtin_prefetch(p" << i << " + k + " << kAhead << ");\n";
    o << "        }\n";
  }
  if (reduces) {
    emit_reduce_loop(body, clauses, "jb", "jb1", "  ", p);
    o << "        }\n";
  } else {
    o << "#pragma omp simd" << clauses << "\n";
    o << "        for (int64_t j = jb; j < jb1; ++j) {\n  " << indent_lines(body, "  ")
      << "        }\n";
  }
  // Elementwise chains stream each block out as soon as it is computed, so that the
  // stores interleave with the next blocks' loads instead of leaving as one 16 KiB
  // burst per chunk while no load is issued.
  if (!g.has_reduction)
    for (std::size_t k = 0; k < g.outputs.size(); ++k)
      if (computed_in(g.outputs[k].var, p))
        o << "        if (nt) fx_store_stream(q" << k << " + jb, d" << k
          << " + (jb - j0), jb1 - jb);\n";
}

// Pass p as one loop over [j0, j1) (left open). A pass that only divides a value kept
// in its output row by a row scalar (Softmax's normalization, see plan_buffers), or
// LayerNorm's output pass, is done while streaming the row out when the stores stream:
// one pass over the row instead of two. Returns the output so streamed, or -1.
int CppRowEmitter::emit_row_loop(int p, const std::string& body, const std::string& clauses) {
  const LoweredGroup& g = g_;
  int scaled_out = -1;
  int only = -1, nrow = 0;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const KOp& op = g.ops[i];
    if (s_.phase[op.result] != p || is_reduction(op) || !g.vars[op.result].row) continue;
    ++nrow;
    only = static_cast<int>(i);
  }
  if (const std::string ln = norm_affine_stream(p); !ln.empty()) {
    o_ << "      if (nt) {\n        " << ln << "      } else {\n";
    scaled_out = output_index(g.ops[static_cast<std::size_t>(only)].result);
  } else if (nrow == 1) {
    const KOp& op = g.ops[static_cast<std::size_t>(only)];
    const int k = output_index(op.result);
    const KVar& dv = g.vars[static_cast<std::size_t>(op.args.back())];
    if (op.op == "Div" && k >= 0 && alias_[op.args[0]] == k && inverted_divisor(op.args.back())) {
      o_ << "      if (nt) {\n        fx_store_stream_scaled(q" << k << " + j0, d" << k
         << ", j1 - j0, 1.f / " << dv.c_name << ");\n      } else {\n";
      scaled_out = k;
    }
  }
  o_ << "#pragma omp simd" << clauses << "\n";
  o_ << "      for (int64_t j = j0; j < j1; ++j) {\n" << body;
  if (scaled_out >= 0) o_ << "      }\n";  // the loop; the else's brace follows
  return scaled_out;
}

// The lane accumulators of each reduction into its scalar one, as a vectorized
// combination (as a serial cmov chain it took 40% of Softmax).
void CppRowEmitter::emit_lane_combine(const std::vector<const KOp*>& reds) {
  for (const KOp* r : reds) {
    const std::string acc = "acc" + std::to_string(r->result),
                      la = "la" + std::to_string(r->result) + "[l]";
    if (r->op == "ReduceSum") {
      o_ << "#pragma omp simd reduction(+:" << acc << ")\n";
      o_ << "      for (int l = 0; l < " << kLanes << "; ++l) " << acc << " += " << la << ";\n";
    } else {
      o_ << "#pragma omp simd reduction(" << (r->op == "ReduceMax" ? "max" : "min") << ":" << acc
         << ")\n";
      o_ << "      for (int l = 0; l < " << kLanes << "; ++l) " << acc << " = " << acc
         << (r->op == "ReduceMax" ? " > " : " < ") << la << " ? " << acc << " : " << la << ";\n";
    }
  }
}

// After pass p: the streaming stores of the row outputs it computed (unless its blocks
// or its streaming stores already wrote them), the reductions' results, and the per-row
// scalars that are known now.
void CppRowEmitter::emit_pass_end(int p, const std::vector<const KOp*>& reds, bool stored_by_block,
                                  int scaled_out) {
  for (const KOp* op : row_ops_in(p)) {
    if (int k = output_index(op->result); k >= 0 && !stored_by_block && k != scaled_out)
      o_ << "      if (nt) fx_store_stream(q" << k << " + j0, d" << k << ", j1 - j0);\n";
  }
  for (const KOp* r : reds) {
    const KVar& v = g_.vars[static_cast<std::size_t>(r->result)];
    o_ << "      const float " << v.c_name << " = "
       << (r->mean && shifted(*r) >= 0 ? "sh" + std::to_string(r->result) + " + " : "")
       << "acc" + std::to_string(r->result) << (r->mean ? " / (float)row" : "") << ";"
       << var_comment(v) << "\n";
    if (int k = output_index(r->result); k >= 0)
      o_ << "      q" << k << "[0] = " << v.c_name << ";\n";
  }
  emit_scalars(p);
}

}  // namespace fx
