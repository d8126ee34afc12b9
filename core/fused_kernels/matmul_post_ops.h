// SPDX-License-Identifier: Apache-2.0
#pragma once
// MatMul + elementwise epilogue as one oneDNN matmul primitive with post-ops: the
// epilogue is applied by oneDNN to each output block while it is still in registers,
// so the fused group costs what the MatMul alone costs. Parts are cut as the runtime's
// MatMul cuts them (runtime/matmul_kernels.cc: columns of constant 2-D weights, each
// part its slice of the reordered weights; the batch of a batched MatMul), so that the
// matmul itself is never slower than unfused, except that rows are cut where oneDNN
// then applies the epilogue in registers and the weights stay in each core's cache
// (matmul_post_ops_split_rows).
//
// plan_matmul_post_ops() says whether a group's epilogue is expressible, a chain on
// the MatMul's output of:
//   bias      Add of a constant [N] vector first: the matmul's own bias
//   linear    Add/Sub/Mul/Div by a constant scalar (attention's 1/sqrt(d)):
//             eltwise_linear
//   eltwise   Relu, LeakyRelu, Tanh, Sigmoid, Gelu, Clip (constant bounds), GELU
//             written out (erf or tanh form, as ViT and GPT-2 export it)
//   binary    Add/Sub/Mul/Div with a tensor of the output's shape (residual), a [N]
//             vector or a one-element tensor (oneDNN binary post-op)
// and a single output (no intermediate value read outside the group).
//
//   if (auto mp = plan_matmul_post_ops(g, nodes, &why))
//     step.kernel = make_matmul_post_op_kernel(g, *mp);  // step inputs mp->step_inputs

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace fx {

struct MatMulPostOp {
  enum class Kind { Linear, Eltwise, Binary } kind = Kind::Eltwise;
  // Eltwise: "relu", "tanh", "logistic", "gelu_erf", "gelu_tanh", "clip";
  // Binary: "add", "sub", "mul", "div".
  std::string alg;
  float alpha = 0, beta = 0;   // Linear: y = alpha x + beta; Relu slope; Clip bounds
  ValueId operand = kNoValue;  // Binary: the second operand (a step input)
  std::string node;            // the node(s) it comes from
};

struct MatMulPostOpPlan {
  NodeId matmul = kNoNode;
  bool batched = false;     // weights are an input of the same batch dims (rank >= 3)
  ValueId bias = kNoValue;  // a constant [N] vector added first, as the matmul's bias
  std::vector<MatMulPostOp> post_ops;
  std::vector<ValueId> step_inputs;  // [A, B, Binary operands in post-op order...]
  ValueId output = kNoValue;
};

// `nodes` in topological order, the MatMul first. nullopt with `why` set when the
// group is not a float MatMul ([..., M, K] x constant [K, N], or two inputs of the same
// rank >= 3) followed by an expressible epilogue with a single output.
std::optional<MatMulPostOpPlan> plan_matmul_post_ops(const Graph& g,
                                                     const std::vector<NodeId>& nodes,
                                                     std::string* why);

// Why fusing a group with a MatMul on constant weights [K, N] is expected to cost more
// than it saves on `threads` threads, or empty. Unfused, the runtime splits such a
// MatMul's columns: each thread reads its slice of the weights. With an epilogue that
// reads a tensor (a bias row, a residual), the fused kernels split its M rows instead
// (oneDNN's fast matmul needs a dense output for binary post-ops; the generated
// epilogue runs on whole rows), so every thread reads all the weights: (threads - 1)
// K N floats more. Each epilogue op saves about one write and one read of the M x N
// output. On ViT-B/16 and GPT-2 (M 128-197, K 768-3072, 2 threads) the projections
// with a bias or residual measured 0.1-0.25 ms slower fused; the MLP's MatMul + GELU
// (ten ops) gains. build_fused_program applies it to a group and to each generated part
// of a group that is not generated whole.
std::string matmul_fusion_loss(const Graph& g, const std::vector<NodeId>& nodes, int threads);

// Whether the fused kernel splits the M rows of [M, K] x constant [K, N] weights over
// `threads` (each part a dense output block: oneDNN's brgemm matmul, which applies the
// bias and eltwise post-ops in registers) rather than the N columns (a strided output
// block: oneDNN's gemm-based matmul, which applies them in a second pass over the
// output). Rows when the epilogue reads a tensor (binary post-ops need a dense output),
// or when the weights, which every row part then reads, fit in one core's L2 cache
// (`l2_bytes`, 0 when unknown: columns) and rows give as many parts as columns. The
// kernel then asks oneDNN which implementation it picked for the row parts: rows
// where it applies the epilogue in registers (brgemm), else the columns after all
// (below AVX-512 oneDNN's matmul is gemm-based, and rows only re-read the weights).
bool matmul_post_ops_split_rows(int64_t m, int64_t k, int64_t n, int threads, bool reads_tensor,
                                int64_t l2_bytes);
// This machine's L2 cache per core in bytes (sysconf), 0 when the system does not say.
int64_t l2_cache_bytes();

// The kernel of a plan: step inputs plan.step_inputs, output {plan.output}.
std::shared_ptr<Kernel> make_matmul_post_op_kernel(const Graph& g, const MatMulPostOpPlan& plan);

}  // namespace fx
