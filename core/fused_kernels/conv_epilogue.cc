// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/conv_epilogue.h"

#include <algorithm>

#include "runtime/fast_math.h"
#include "runtime/parallel.h"

namespace fx {

bool epilogue_op_for(const std::string& alg, float alpha, float beta, EpilogueOp* op) {
  using K = EpilogueOp::Kind;
  static const std::pair<const char*, K> table[] = {
      {"relu", K::Relu},   {"clip", K::Clip},        {"logistic", K::Logistic},
      {"swish", K::Swish}, {"tanh", K::Tanh},        {"hardswish", K::HardSwish},
      {"elu", K::Elu},     {"gelu_erf", K::GeluErf}, {"add", K::AddResidual}};
  for (const auto& [name, kind] : table) {
    if (alg != name) continue;
    *op = {kind, alpha, beta};
    return true;
  }
  return false;
}

namespace {

// Clones by instruction set (FX_VECTOR_CLONES' "arch=haswell" clone runs only on CPUs
// that are a Haswell, not on newer ones, which then get the SSE2 default).
#if defined(__x86_64__) && !defined(__clang__)
#define FX_EPILOGUE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FX_EPILOGUE_CLONES
#endif

constexpr int64_t kBlock = 4096;  // floats per block: all ops run on it while in L1

// One op over one block; each case is a plain loop the compiler vectorizes.
FX_EPILOGUE_CLONES
void apply_op(const EpilogueOp& op, float* __restrict y, const float* __restrict r, int64_t n) {
  const float a = op.alpha, b = op.beta;
  switch (op.kind) {
    case EpilogueOp::Relu:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.f ? a * y[i] : y[i];
      break;
    case EpilogueOp::Clip:
      for (int64_t i = 0; i < n; ++i) {
        float v = y[i] < a ? a : y[i];
        y[i] = v > b ? b : v;
      }
      break;
    case EpilogueOp::Logistic:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_sigmoid(y[i]);
      break;
    case EpilogueOp::Swish:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] * fast_sigmoid(a * y[i]);
      break;
    case EpilogueOp::Tanh:
      for (int64_t i = 0; i < n; ++i) y[i] = fast_tanh(y[i]);
      break;
    case EpilogueOp::HardSwish:
      for (int64_t i = 0; i < n; ++i) {
        float g = y[i] * (1.f / 6.f) + 0.5f;
        g = g < 0.f ? 0.f : g;
        g = g > 1.f ? 1.f : g;
        y[i] = y[i] * g;
      }
      break;
    case EpilogueOp::Elu:
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0.f ? y[i] : a * (fast_exp(y[i]) - 1.f);
      break;
    case EpilogueOp::GeluErf:
      for (int64_t i = 0; i < n; ++i)
        y[i] = 0.5f * y[i] * (1.f + fast_erf(y[i] * 0.70710678118654752f));
      break;
    case EpilogueOp::AddResidual:
      for (int64_t i = 0; i < n; ++i) y[i] += r[i];
      break;
  }
}

FX_EPILOGUE_CLONES
void add_scalar(float* __restrict y, float b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += b;
}

}  // namespace

void ConvEpilogue::apply(float* y, int64_t n, int64_t c, int64_t spatial, const float* bias,
                         const std::vector<const float*>& residuals, int threads) const {
  if ((ops_.empty() && !bias) || n * c * spatial <= 0) return;
  (void)threads;  // the runtime's pool, sized by the executor (parallel.h)
  // Work items: blocks of one (n, c) plane, so that the bias is one value per block.
  const int64_t per_plane = (spatial + kBlock - 1) / kBlock, items = n * c * per_plane;
  const int64_t cost = kBlock * static_cast<int64_t>(ops_.size() + 1);
  parallel_for(items, cost, [&](int64_t b, int64_t e) {
    for (int64_t it = b; it < e; ++it) {
      const int64_t plane = it / per_plane, j0 = (it % per_plane) * kBlock;
      const int64_t i0 = plane * spatial + j0, len = std::min(kBlock, spatial - j0);
      if (bias) add_scalar(y + i0, bias[plane % c], len);
      std::size_t k = 0;
      for (const EpilogueOp& op : ops_) {
        const float* r = op.kind == EpilogueOp::AddResidual ? residuals[k++] + i0 : nullptr;
        apply_op(op, y + i0, r, len);
      }
    }
  });
}

void ConvEpilogue::apply_span(float* y, int64_t len, const float* const* residuals) const {
  for (int64_t i0 = 0; i0 < len; i0 += kBlock) {
    const int64_t m = std::min(kBlock, len - i0);
    std::size_t k = 0;
    for (const EpilogueOp& op : ops_) {
      const float* r = op.kind == EpilogueOp::AddResidual ? residuals[k++] + i0 : nullptr;
      apply_op(op, y + i0, r, m);
    }
  }
}

}  // namespace fx
