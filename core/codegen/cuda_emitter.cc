// SPDX-License-Identifier: Apache-2.0
#include "codegen/cuda_emitter.h"

#include <algorithm>
#include <sstream>

#include "codegen/op_exprs.h"
#include "util/error.h"

namespace fx {

namespace {

constexpr int kMaxInputs = 16, kMaxOutputs = 8, kMaxRank = 8;

bool is_reduction(const KOp& op) {
  return op.op.rfind("Reduce", 0) == 0;
}

// Pass of each var: row vars are computed in the pass after all their scalars are
// known; reductions finish their pass.
std::vector<int> passes_of(const LoweredGroup& g, std::vector<int>& ready, int& passes) {
  std::vector<int> phase(g.vars.size(), 0);
  ready.assign(g.vars.size(), -1);
  passes = 1;
  for (const KOp& op : g.ops) {
    int p = 0;
    for (int a : op.args) p = std::max(p, g.vars[a].row ? phase[a] : ready[a] + 1);
    if (is_reduction(op)) {
      if (!g.vars[op.args.at(0)].row)
        throw Error("codegen: '" + op.node + "' reduces a per-row scalar");
      phase[op.result] = ready[op.result] = p;
    } else if (g.vars[op.result].row) {
      phase[op.result] = p;
    } else {
      int r = -1;
      for (int a : op.args) r = std::max(r, ready[a]);
      ready[op.result] = r;
    }
    passes = std::max(passes, p + 1);
  }
  return phase;
}

// How the device code reads the group's values and writes its outputs.
struct CudaRefs {
  const LoweredGroup& g;
  std::vector<int> phase, ready;
  int passes = 1;

  int out_of(int v) const {
    for (std::size_t k = 0; k < g.outputs.size(); ++k)
      if (g.outputs[k].var == v) return static_cast<int>(k);
    return -1;
  }
  std::string ref(int v) const {
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      if (g.inputs[i].var == v && g.vars[v].row) return "p" + std::to_string(i) + "[j]";
    return g.vars[v].c_name;
  }
  // The per-row scalars known after pass r (-1: before the first).
  void scalars(std::ostream& o, int r) const {
    for (const KOp& op : g.ops) {
      if (g.vars[op.result].row || is_reduction(op) || ready[op.result] != r) continue;
      std::vector<std::string> args;
      for (int x : op.args) args.push_back(ref(x));
      o << "  const float " << g.vars[op.result].c_name << " = " << c_expression(op, args)
        << ";  // " << op.node << "\n";
      if (int k = out_of(op.result); k >= 0)
        o << "  if (threadIdx.x == 0) a.out[" << k << "][o] = " << g.vars[op.result].c_name
          << ";\n";
    }
  }
};

// The kernel's head: a block per row (row kernels) or a grid-stride loop over elements,
// the row's input offsets and pointers.
void kernel_head(std::ostream& o, const LoweredGroup& g) {
  const int K = g.row_begin;
  o << "\n// ---- fused group " << g.group_id << "\n";
  for (const auto& n : g.node_names) o << "//   node " << n << "\n";
  o << "__global__ void " << g.entry << "_kernel(FxArgs a) {\n";
  if (g.has_reduction) {
    o << "  const int64_t o = blockIdx.x;\n  if (o >= a.outer) return;\n";
  } else {
    o << "  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < a.outer * a.row;"
         " t += (int64_t)gridDim.x * blockDim.x) {\n"
         "  // One row (no broadcast along the outer axes, the usual chain): no 64-bit\n"
         "  // division per element.\n"
         "  const int64_t o = a.outer == 1 ? 0 : t / a.row, jj = a.outer == 1 ? t : t % a.row;\n";
  }
  for (std::size_t i = 0; i < g.inputs.size(); ++i) o << "  int64_t off" << i << " = 0;\n";
  if (K > 0 && !g.inputs.empty()) {
    o << "  for (int64_t d = " << K - 1 << ", rem = o; d >= 0; --d) {\n"
      << "    const int64_t idx = rem % a.dims[d];\n    rem /= a.dims[d];\n";
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      o << "    off" << i << " += idx * a.st[" << i << "][d];\n";
    o << "  }\n";
  }
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    if (g.inputs[i].mask)  // a bool tensor (Where's condition): bytes
      o << "  const unsigned char* __restrict__ p" << i << " = (const unsigned char*)a.in[" << i
        << "] + off" << i << ";\n";
    else
      o << "  const float* __restrict__ p" << i << " = a.in[" << i << "] + off" << i << ";\n";
    if (!g.vars[g.inputs[i].var].row)
      o << "  const float " << g.vars[g.inputs[i].var].c_name << " = p" << i << "[0];\n";
  }
}

// Pass p: the row loop (strided over the block's threads), then the block-wide
// reductions and the scalars known after it.
void kernel_pass(std::ostream& o, const CudaRefs& c, int p) {
  const LoweredGroup& g = c.g;
  std::vector<const KOp*> reds;
  for (const KOp& op : g.ops)
    if (is_reduction(op) && c.phase[op.result] == p) reds.push_back(&op);
  for (const KOp* r : reds)
    o << "  float acc" << r->result << " = "
      << (r->op == "ReduceMax"   ? "-INFINITY"
          : r->op == "ReduceMin" ? "INFINITY"
                                 : "0.f")
      << ";\n";
  if (g.has_reduction)
    o << "  for (int64_t j = threadIdx.x; j < a.row; j += blockDim.x) {\n";
  else
    o << "  { const int64_t j = jj;\n";
  // Recompute every row value of passes <= p that this pass needs (all of them, simply).
  for (const KOp& op : g.ops) {
    if (c.phase[op.result] > p || (!g.vars[op.result].row && !is_reduction(op))) continue;
    std::vector<std::string> args;
    for (int x : op.args) args.push_back(c.ref(x));
    if (is_reduction(op)) {
      if (c.phase[op.result] != p) continue;
      std::string acc = "acc" + std::to_string(op.result);
      if (op.op == "ReduceSum")
        o << "    " << acc << " += " << args[0] << ";\n";
      else
        o << "    " << acc << " = " << (op.op == "ReduceMax" ? "fmaxf(" : "fminf(") << acc << ", "
          << args[0] << ");\n";
      continue;
    }
    o << "    const float " << g.vars[op.result].c_name << " = " << c_expression(op, args)
      << ";  // " << op.node << "\n";
    if (c.phase[op.result] == p)
      if (int k = c.out_of(op.result); k >= 0)
        o << "    a.out[" << k << "][o * a.row + j] = " << g.vars[op.result].c_name << ";\n";
  }
  o << "  }\n";
  for (const KOp* r : reds) {
    const char* f = r->op == "ReduceMax"   ? "fx_block_max"
                    : r->op == "ReduceMin" ? "fx_block_min"
                                           : "fx_block_sum";
    o << "  const float " << g.vars[r->result].c_name << " = " << f << "(acc" << r->result << ")"
      << (r->mean ? " / (float)a.row" : "") << ";  // " << r->node << "\n";
    if (int k = c.out_of(r->result); k >= 0)
      o << "  if (threadIdx.x == 0) a.out[" << k << "][o] = " << g.vars[r->result].c_name << ";\n";
  }
  c.scalars(o, p);
}

// Host side: strides, launch.
void host_launcher(std::ostream& o, const LoweredGroup& g) {
  const int K = g.row_begin;
  o << "extern \"C\" int " << g.entry
    << "_cuda(const float* const* in, float* const* out, const int64_t* dims, void* stream) {\n";
  o << "  FxArgs a{};\n  a.outer = 1; a.row = 1;\n";
  o << "  for (int d = 0; d < " << g.rank << "; ++d) { a.dims[d] = dims[d]; if (d < " << K
    << ") a.outer *= dims[d]; else a.row *= dims[d]; }\n";
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    o << "  { static const unsigned char bc[] = {";
    for (int d = 0; d < g.rank; ++d) o << (d ? ", " : "") << (g.inputs[i].bcast[d] ? 1 : 0);
    o << "};\n    int64_t acc = 1;\n    for (int d = " << g.rank - 1 << "; d >= 0; --d) { a.st["
      << i << "][d] = bc[d] ? 0 : acc; acc *= bc[d] ? 1 : dims[d]; }\n    a.in[" << i << "] = in["
      << i << "]; }\n";
  }
  for (std::size_t k = 0; k < g.outputs.size(); ++k)
    o << "  a.out[" << k << "] = out[" << k << "];\n";
  if (g.has_reduction) {
    o << "  if (a.outer > 0) " << g.entry
      << "_kernel<<<(unsigned)a.outer, 256, 0, (cudaStream_t)stream>>>(a);\n";
  } else {
    o << "  const int64_t n = a.outer * a.row;\n  const int64_t blocks = std::min<int64_t>((n + "
         "255) / 256, 65535 * 8);\n";
    o << "  if (n > 0) " << g.entry
      << "_kernel<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>(a);\n";
  }
  o << "  return (int)cudaGetLastError();\n}\n";
}

std::string group_kernel(const LoweredGroup& g) {
  if (g.inputs.size() > kMaxInputs || g.outputs.size() > kMaxOutputs || g.rank > kMaxRank)
    throw Error("codegen: group " + g.group_id + " has too many operands for the CUDA backend");
  CudaRefs c{g, {}, {}, 1};
  c.phase = passes_of(g, c.ready, c.passes);
  std::ostringstream o;
  kernel_head(o, g);
  c.scalars(o, -1);
  for (int p = 0; p < c.passes; ++p) kernel_pass(o, c, p);
  if (!g.has_reduction) o << "  }\n";
  o << "}\n\n";
  host_launcher(o, g);
  return o.str();
}

}  // namespace

std::string emit_cuda_source(const std::vector<LoweredGroup>& groups) {
  std::ostringstream o;
  o << "// Generated by Fusion Explorer (CUDA backend). Depends only on the CUDA runtime.\n"
       "#include <cuda_runtime.h>\n#include <stdint.h>\n#include <math.h>\n#include <algorithm>\n\n"
    << "struct FxArgs {\n  const float* in[" << kMaxInputs << "];\n  float* out[" << kMaxOutputs
    << "];\n  int64_t st[" << kMaxInputs << "][" << kMaxRank << "];\n  int64_t dims[" << kMaxRank
    << "];\n  int64_t outer, row;\n};\n\n"
    << R"(__device__ inline float fx_expf(float x) { return expf(x); }
__device__ inline float fx_expf_le0(float x) { return expf(x); }
__device__ inline float fx_erff(float x) { return erff(x); }
__device__ inline float fx_tanhf(float x) { return tanhf(x); }
__device__ inline float fx_max(float a, float b) { return fmaxf(a, b); }
__device__ inline float fx_min(float a, float b) { return fminf(a, b); }

// Block-wide reductions (blockDim.x a multiple of 32, at most 1024); every thread
// gets the result.
template <class F>
__device__ float fx_block_reduce(float v, F f, float identity) {
  __shared__ float part[32];
  for (int s = 16; s > 0; s >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, s));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < warps ? part[lane] : identity;
  for (int s = 16; s > 0; s >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, s));
  return v;
}
struct FxSum { __device__ float operator()(float a, float b) const { return a + b; } };
struct FxMax { __device__ float operator()(float a, float b) const { return fmaxf(a, b); } };
struct FxMin { __device__ float operator()(float a, float b) const { return fminf(a, b); } };
__device__ float fx_block_sum(float v) { return fx_block_reduce(v, FxSum{}, 0.f); }
__device__ float fx_block_max(float v) { return fx_block_reduce(v, FxMax{}, -INFINITY); }
__device__ float fx_block_min(float v) { return fx_block_reduce(v, FxMin{}, INFINITY); }
)";
  for (const auto& g : groups) o << group_kernel(g);
  return o.str();
}

}  // namespace fx
