// SPDX-License-Identifier: Apache-2.0
#pragma once
// The elementwise epilogue of a fused Conv, applied in place to the convolution's
// output right after it is written (while it is still in cache), by vectorized loops
// over blocks of the output. Used instead of oneDNN post-ops where those are slow:
// oneDNN 2.x's gemm convolution on plain (NCHW) layouts applies eltwise and sum
// post-ops element by element, several times the cost of this pass.
//
//   ConvEpilogue ep({{EpilogueOp::Relu}});
//   ep.apply(y, n, c, h * w, bias, {}, threads);

#include <cstdint>
#include <string>
#include <vector>

namespace fx {

struct EpilogueOp {
  enum Kind { Relu, Clip, Logistic, Swish, Tanh, HardSwish, Elu, GeluErf, AddResidual };
  Kind kind = Relu;
  float alpha = 0, beta = 0;  // LeakyRelu slope (Relu), Clip bounds, Swish/Elu alpha
};

// The op for a ConvPostOp algorithm name ("relu", "clip", ..., "add" for a residual
// of the output's shape); false when there is none.
bool epilogue_op_for(const std::string& alg, float alpha, float beta, EpilogueOp* op);

class ConvEpilogue {
 public:
  explicit ConvEpilogue(std::vector<EpilogueOp> ops) : ops_(std::move(ops)) {}
  // y = [N, C, spatial] in place: first + bias[c] when bias is given (oneDNN's gemm
  // convolution adds a bias in a slow separate loop), then the ops; residuals[k] is
  // the operand of the k-th AddResidual (same shape as y).
  void apply(float* y, int64_t n, int64_t c, int64_t spatial, const float* bias,
             const std::vector<const float*>& residuals, int threads) const;
  // The ops (no bias) over `len` contiguous floats on the calling thread; residuals[k]
  // points at the elements of the k-th AddResidual's operand that match y[0..len).
  // For channels-last outputs, whose bias is added by the convolution itself.
  void apply_span(float* y, int64_t len, const float* const* residuals) const;
  bool empty() const { return ops_.empty(); }
  const std::vector<EpilogueOp>& ops() const { return ops_; }

 private:
  std::vector<EpilogueOp> ops_;
};

}  // namespace fx
