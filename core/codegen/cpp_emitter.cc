// SPDX-License-Identifier: Apache-2.0
// Emission of a row kernel (cpp_row_emitter.h): planning, the function's skeleton, and
// the queries of where a value is read from. The passes are in cpp_emitter_pass.cc.

#include "codegen/cpp_emitter.h"

#include <algorithm>

#include "codegen/cpp_row_emitter.h"
#include "codegen/op_exprs.h"
#include "codegen/row_rewrite.h"

namespace fx {

namespace {

// Replaced by the carried max's state, if any (finish()).
const char* const kCarryMark = "@FX_CARRY@";

}  // namespace

CppRowEmitter::CppRowEmitter(const LoweredGroup& lowered)
    : g_(lowered.has_reduction ? one_pass_variance(lowered) : lowered),
      s_(schedule_passes(g_)),
      R_(g_.rank),
      K_(g_.row_begin) {}

std::string CppRowEmitter::emit() {
  plan_buffers();
  emit_signature();
  emit_thread_loop_head();
  emit_row_offsets();
  emit_row_pointers();
  plan_prefetch();
  for (int v = 0; v < static_cast<int>(g_.vars.size()); ++v)
    if (slot_[v] >= 0)
      o_ << "      float* __restrict b" << v << " = scratch.data() + " << slot_[v] << " * row;\n";
  emit_scalars(-1);
  for (int p = 0; p < s_.passes; ++p) emit_pass(p);
  return finish();
}

// Which row vars are read in a later pass than the one computing them: buffered.
// A buffered var whose only later reader computes a row output (Softmax's exp, read
// by the division) is kept in that output's own row instead, and the reader
// rewrites it in place: the output's lines are fetched for ownership while the
// earlier pass computes (Softmax's exp pass, bound by its FMAs) rather than in a
// pass that does nothing else, and the buffer's traffic goes.
void CppRowEmitter::plan_buffers() {
  const LoweredGroup& g = g_;
  const Schedule& s = s_;
  slot_.assign(g.vars.size(), -1);
  is_input_.assign(g.vars.size(), false);
  for (const auto& in : g.inputs) is_input_[static_cast<std::size_t>(in.var)] = true;
  alias_.assign(g.vars.size(), -1);
  for (std::size_t k = 0; k < g.outputs.size(); ++k) {
    const int out = g.outputs[k].var;
    if (!g.has_reduction || !g.vars[static_cast<std::size_t>(out)].row) continue;
    for (const KOp& op : g.ops) {
      if (op.result != out || is_reduction(op)) continue;
      for (int v : op.args) {
        if (!g.vars[static_cast<std::size_t>(v)].row || is_input_[v] ||
            s.last_use[v] <= s.phase[v] || s.phase[v] >= s.phase[out] || alias_[v] >= 0)
          continue;
        int later = 0, outputs = 0;
        for (const KOp& r : g.ops)
          if (s.phase[r.result] > s.phase[v])
            later += static_cast<int>(std::count(r.args.begin(), r.args.end(), v));
        for (const KOutput& x : g.outputs) outputs += x.var == v ? 1 : 0;
        if (later == 1 && outputs == 0) {
          alias_[v] = static_cast<int>(k);
          break;
        }
      }
    }
  }
  for (std::size_t v = 0; v < g.vars.size(); ++v)
    if (g.vars[v].row && !is_input_[v] && s.last_use[v] > s.phase[v] && alias_[v] < 0)
      slot_[v] = nslots_++;
  // Row outputs written through a streaming buffer when the tensor is large.
  stream_slot_.assign(g.outputs.size(), -1);
  for (std::size_t k = 0; k < g.outputs.size(); ++k)
    if (g.vars[static_cast<std::size_t>(g.outputs[k].var)].row) stream_slot_[k] = nstream_++;
}

void CppRowEmitter::emit_signature() {
  const LoweredGroup& g = g_;
  auto& o = o_;
  const int R = R_, K = K_;
  o << "\n// ---- fused group " << g.group_id << ": " << g.ops.size() << " ops from "
    << g.node_names.size() << " nodes\n";
  for (const auto& n : g.node_names) o << "//   node " << n << "\n";
  o << "// Reference shape " << g.ref_shape << "; a row is axes [" << K << ", " << R << ")"
    << (g.has_reduction ? ", reduced in " + std::to_string(s_.passes) + " passes" : "") << ".\n";
  o << "extern \"C\" void " << g.entry
    << "(const float* const* in, float* const* out, const int64_t* dims, int threads) {\n";
  o << "  int64_t outer = 1, row = 1;\n";
  o << "  for (int a = 0; a < " << K << "; ++a) outer *= dims[a];\n";
  o << "  for (int a = " << K << "; a < " << R << "; ++a) row *= dims[a];\n";
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    o << "  // input " << i << ": " << g.inputs[i].name << "\n";
    o << "  static const unsigned char bc" << i << "[" << R << "] = {";
    for (int a = 0; a < R; ++a) o << (a ? ", " : "") << (g.inputs[i].bcast[a] ? 1 : 0);
    o << "};\n  int64_t st" << i << "[" << R << "];\n  fx_strides(dims, " << R << ", bc" << i
      << ", st" << i << ");\n";
  }
  o << "  const int64_t chunk = "
    << (g.has_reduction
            ? "std::max<int64_t>(1, row)"
            : "std::max<int64_t>(1, std::min<int64_t>(row, " + std::to_string(kChunk) + "))")
    << ";\n";
  o << "  const int64_t nchunks = (row + chunk - 1) / chunk;\n";
}

// The parallel region, its buffers, and the head of the loop over work items (a row, or
// a chunk of one). Row kernels walk the outer index one by one on each thread (a static
// schedule of consecutive rows): the operands' offsets follow an odometer over the
// outer axes instead of a division and a remainder per axis and row.
void CppRowEmitter::emit_thread_loop_head() {
  const LoweredGroup& g = g_;
  auto& o = o_;
  const int K = K_;
  if (nstream_ > 0)
    o << "  const bool nt = outer * row * (int64_t)sizeof(float) >= fx_stream_bytes;  // "
         "streaming stores\n";
  // The region's body is a lambda: run by every thread of an OpenMP team when threads > 1
  // and called directly otherwise, where its orphaned `omp for` runs the whole range. An
  // OpenMP region of one thread still starts and ends a team, microseconds per call,
  // more than a small kernel's work, and the runtime calls the function with one thread
  // on each slice (generated_kernel.cc).
  o << "  auto region = [&]() {\n";
  if (nslots_ > 0)
    o << "    std::vector<float> scratch(" << nslots_ << " * row);  // row buffers\n";
  if (nstream_ > 0)
    o << "    std::vector<float> stream_buf(nt ? " << nstream_
      << " * chunk : 0);  // output blocks before streaming\n";
  o << kCarryMark;
  odometer_ = g.has_reduction && K > 0 && !g.inputs.empty();
  if (odometer_) {
    o << "    int64_t prev_o = -2, idx[" << K << "] = {0};  // the odometer of the outer axes\n";
    for (std::size_t i = 0; i < g.inputs.size(); ++i) o << "    int64_t off" << i << " = 0;\n";
  }
  o << "#pragma omp for schedule(static)\n";
  o << "    for (int64_t t = 0; t < outer * nchunks; ++t) {\n";
  if (g.has_reduction)  // one chunk per row (chunk = row): no division per row
    o << "      const int64_t o = t, j0 = 0;\n";
  else
    o << "      const int64_t o = t / nchunks, j0 = (t % nchunks) * chunk;\n";
  o << "      const int64_t j1 = std::min(row, j0 + chunk);\n";
  o << "      (void)j0; (void)j1;\n";
}

// The offsets of this row into each input.
void CppRowEmitter::emit_row_offsets() {
  const LoweredGroup& g = g_;
  auto& o = o_;
  const int K = K_;
  if (odometer_) {
    o << "      if (o == prev_o + 1) {  // the next row: step the odometer\n";
    o << "        for (int64_t a = " << K - 1 << "; a >= 0; --a) {\n";
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      o << "          off" << i << " += st" << i << "[a];\n";
    o << "          if (++idx[a] < dims[a]) break;\n";
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      o << "          off" << i << " -= idx[a] * st" << i << "[a];\n";
    o << "          idx[a] = 0;\n        }\n";
    o << "      } else {\n";
    for (std::size_t i = 0; i < g.inputs.size(); ++i) o << "        off" << i << " = 0;\n";
    o << "        for (int64_t a = " << K - 1 << ", rem = o; a >= 0; --a) {\n";
    o << "          idx[a] = rem % dims[a];\n          rem /= dims[a];\n";
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      o << "          off" << i << " += idx[a] * st" << i << "[a];\n";
    o << "        }\n      }\n      prev_o = o;\n";
    return;
  }
  for (std::size_t i = 0; i < g.inputs.size(); ++i) o << "      int64_t off" << i << " = 0;\n";
  if (K > 0 && !g.inputs.empty()) {
    o << "      for (int64_t a = " << K - 1 << ", rem = o; a >= 0; --a) {\n";
    o << "        const int64_t idx = rem % dims[a];\n        rem /= dims[a];\n";
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      o << "        off" << i << " += idx * st" << i << "[a];\n";
    o << "      }\n";
  }
}

// The row's input pointers (and per-row scalar inputs), output pointers, and where each
// row output's block is computed (in place, or the streaming buffer).
void CppRowEmitter::emit_row_pointers() {
  const LoweredGroup& g = g_;
  auto& o = o_;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const KInput& in = g.inputs[i];
    if (in.mask)  // a bool tensor: the ABI's float pointer is its first byte
      o << "      const unsigned char* __restrict p" << i << " = (const unsigned char*)in[" << i
        << "] + off" << i << ";\n";
    else
      o << "      const float* __restrict p" << i << " = in[" << i << "] + off" << i << ";\n";
    if (!g.vars[static_cast<std::size_t>(in.var)].row) {
      o << "      const float " << g.vars[in.var].c_name << " = p" << i << "[0];  // " << in.name
        << "\n";
    }
  }
  for (std::size_t k = 0; k < g.outputs.size(); ++k) {
    bool row = g.vars[static_cast<std::size_t>(g.outputs[k].var)].row;
    o << "      float* __restrict q" << k << " = out[" << k << "] + " << (row ? "o * row" : "o")
      << ";  // " << g.outputs[k].name << "\n";
    if (row)
      o << "      float* __restrict d" << k << " = nt ? stream_buf.data() + " << stream_slot_[k]
        << " * chunk : q" << k << " + j0;  // where q" << k << "[j0, j1) is computed\n";
  }
}

// Row kernels prefetch a later row of each row input while computing this one, spread
// over the blocks of the pass with the most work (Softmax's exp, LayerNorm's
// deviations), so that the loads overlap the arithmetic instead of arriving as one
// burst that fills the miss buffers while the core waits. A bool mask is not
// prefetched: a quarter of a float row's bytes, and broadcast over the heads (GPT-2's
// causal mask) it is read from cache; with one row input left the exp pass stays the
// fx_exp_sum primitive.
void CppRowEmitter::plan_prefetch() {
  const LoweredGroup& g = g_;
  if (!g.has_reduction || K_ <= 0) return;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const KInput& in = g.inputs[i];
    if (g.vars[static_cast<std::size_t>(in.var)].row && !in.mask &&
        !in.bcast[static_cast<std::size_t>(K_ - 1)])
      row_pf_.push_back(i);
  }
  if (row_pf_.empty()) return;
  pf_pass_ = heaviest_pass(g, s_);
  o_ << "      const bool pf = row <= " << kPrefetchRow << " && t + " << kPrefetchRows
     << " < outer;  // prefetch row t + " << kPrefetchRows << " in pass " << pf_pass_ << "\n";
}

// The per-row scalars that become known after pass `ready` (-1: before the first).
void CppRowEmitter::emit_scalars(int ready) {
  for (const KOp& op : g_.ops) {
    const KVar& r = g_.vars[static_cast<std::size_t>(op.result)];
    if (r.row || is_reduction(op) || s_.ready[op.result] != ready) continue;
    std::vector<std::string> args;
    for (int a : op.args) args.push_back(ref(a, -1));
    // RowHeadMean (row_rewrite.h): the mean of the first FX_HEAD elements of this row
    // of an input.
    std::string e = op.op == "RowHeadMean" ? "" : c_expression(op, args);
    if (op.op == "RowHeadMean") {
      const std::string& x = args.at(0);  // "p<i>[j]"
      e = "fx_head_mean(" + x.substr(0, x.size() - 3) + " + j0, j1 - j0)";
    }
    o_ << "      const float " << r.c_name << " = " << e << ";  // " << op.node << " (" << op.op
       << ")\n";
    if (int k = output_index(op.result); k >= 0)
      o_ << "      q" << k << "[0] = " << r.c_name << ";\n";
  }
}

// Closes the loop and the region, and settles the carried max: one no exp pass
// computes is not carried (its max pass reads its own row).
std::string CppRowEmitter::finish() {
  o_ << "    }\n";
  if (nstream_ > 0) o_ << "    if (nt) fx_fence();\n";
  o_ << "  };\n";
  o_ << "  if (threads > 1) {\n#pragma omp parallel num_threads(threads)\n    region();\n"
        "  } else {\n    region();\n  }\n}\n";
  std::string src = o_.str();
  if (carry_input_ >= 0 && !carried_) {
    const std::string c = "t == carried_t ? carried_max : ";
    for (std::size_t q; (q = src.find(c)) != std::string::npos;) src.erase(q, c.size());
    const std::string n = "; of row t + 1 computed in row t's exp pass";
    for (std::size_t q; (q = src.find(n)) != std::string::npos;) src.erase(q, n.size());
  }
  const std::string mark = kCarryMark;
  src.replace(src.find(mark), mark.size(),
              carried_ ? "    int64_t carried_t = -1;  // the row whose max carried_max holds\n"
                         "    float carried_max = 0.f;\n"
                       : "");
  return src;
}

// Expression for var v read inside pass p.
std::string CppRowEmitter::ref(int v, int p) const {
  const KVar& kv = g_.vars[static_cast<std::size_t>(v)];
  if (kv.literal || !kv.row) return kv.c_name;
  for (std::size_t i = 0; i < g_.inputs.size(); ++i)
    if (g_.inputs[i].var == v) return "p" + std::to_string(i) + "[j]";
  if (s_.phase[v] == p) return kv.c_name;
  if (alias_[v] >= 0) return "d" + std::to_string(alias_[v]) + "[j - j0]";
  return "b" + std::to_string(v) + "[j]";
}

// A mean reduction of an input row value: summed as deviations from the row's first.
// (The input's index, or -1.)
int CppRowEmitter::shifted(const KOp& op) const {
  for (std::size_t i = 0; i < g_.inputs.size(); ++i)
    if (g_.inputs[i].var == op.args.at(0) &&
        g_.vars[static_cast<std::size_t>(g_.inputs[i].var)].row)
      return static_cast<int>(i);
  return -1;
}

// Whether row var v is computed (by a row op) in pass p.
bool CppRowEmitter::computed_in(int v, int p) const {
  for (const KOp& op : g_.ops)
    if (op.result == v) return s_.phase[v] == p && !is_reduction(op) && g_.vars[v].row;
  return false;
}

// A divisor the group computes once per row (Softmax's sum, LayerNorm's deviation)
// is inverted once and multiplied by; one read from an input (a per-channel
// normalization constant) is divided by, as the Div apart does, so that fusing does
// not change the bits: a detector's TopK and NMS over nearly tied scores turn a
// one-ulp difference into other boxes.
bool CppRowEmitter::inverted_divisor(int v) const {
  const KVar& d = g_.vars[static_cast<std::size_t>(v)];
  return !d.row && !d.literal && !is_input_[static_cast<std::size_t>(v)];
}

int CppRowEmitter::output_index(int v) const {
  for (std::size_t k = 0; k < g_.outputs.size(); ++k)
    if (g_.outputs[k].var == v) return static_cast<int>(k);
  return -1;
}

// A pointer to row var v's values from j0 on (v at j is ptr[j - j0]): a row input, or
// a value kept from an earlier pass; "" otherwise.
std::string CppRowEmitter::row_ptr(int v) const {
  const KVar& kv = g_.vars[static_cast<std::size_t>(v)];
  if (kv.literal || !kv.row) return "";
  for (std::size_t i = 0; i < g_.inputs.size(); ++i)
    if (g_.inputs[i].var == v) return "p" + std::to_string(i) + " + j0";
  if (alias_[v] >= 0) return "d" + std::to_string(alias_[v]);
  if (slot_[v] >= 0) return "b" + std::to_string(v) + " + j0";
  return "";
}

// The row ops (not reductions) computed in pass p, in order.
std::vector<const KOp*> CppRowEmitter::row_ops_in(int p) const {
  std::vector<const KOp*> ops;
  for (const KOp& op : g_.ops)
    if (s_.phase[op.result] == p && !is_reduction(op) && g_.vars[op.result].row) ops.push_back(&op);
  return ops;
}

std::string emit_cpp_function(const LoweredGroup& g) {
  return CppRowEmitter(g).emit();
}

std::string emit_cpp_source(const std::vector<LoweredGroup>& groups) {
  std::string src = emit_cpp_prelude();
  for (const auto& g : groups) src += emit_cpp_function(g);
  return src;
}

}  // namespace fx
