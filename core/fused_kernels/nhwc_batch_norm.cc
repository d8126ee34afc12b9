// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/nhwc_batch_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ir/graph_queries.h"
#include "runtime/parallel.h"
#include "util/error.h"

namespace fx {

namespace {

// Clones by instruction set (see fused_kernels/depthwise_nhwc.cc).
#if defined(__x86_64__) && !defined(__clang__)
#define FX_BN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FX_BN_CLONES
#endif

FX_BN_CLONES void affine_pixels(const float* x, const float* a, const float* b, float* y,
                                int64_t p0, int64_t p1, int64_t c) {
  for (int64_t p = p0; p < p1; ++p) {
    const float* __restrict xi = x + p * c;
    float* __restrict yi = y + p * c;
    for (int64_t k = 0; k < c; ++k) yi[k] = xi[k] * a[k] + b[k];
  }
}

class NhwcBatchNormKernel final : public Kernel {
 public:
  NhwcBatchNormKernel(std::vector<float> a, std::vector<float> b)
      : a_(std::move(a)), b_(std::move(b)) {}
  void run(KernelContext& ctx) override {
    const Tensor& x = ctx.in(0);
    const int64_t c = static_cast<int64_t>(a_.size());
    if (x.dtype() != DType::Float32 || x.rank() != 4 || x.dims()[1] != c)
      throw Error("BatchNormalization step " + ctx.step_name() + ": unsupported input " + x.str() +
                  " for " + std::to_string(c) + " channels");
    Tensor& y = ctx.output(0, DType::Float32, x.dims());
    if (y.numel() == 0) return;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    parallel_for(x.numel() / c, c, [&](int64_t r0, int64_t r1) {
      affine_pixels(xp, a_.data(), b_.data(), yp, r0, r1, c);
    });
  }

 private:
  std::vector<float> a_, b_;
};

// The four parameters of a candidate step, each C floats.
std::vector<std::vector<float>> parameters(const Graph& g, const Node& n, int64_t c) {
  std::vector<std::vector<float>> p;
  for (std::size_t i = 1; i < 5; ++i) {
    auto data =
        i < n.inputs.size() && n.inputs[i] != kNoValue ? constant_data(g, n.inputs[i]) : nullptr;
    if (!data || data->dtype() != DType::Float32 || data->numel() != c) return {};
    p.push_back(data->to_floats());
  }
  return p;
}

}  // namespace

bool is_nhwc_batch_norm_candidate(const Graph& g, const Step& s) {
  if (s.nodes.size() != 1 || s.outputs.size() != 1 || s.inputs.empty() || s.inputs[0] == kNoValue)
    return false;
  const Node& n = g.node(s.nodes[0]);
  if (n.op_type != "BatchNormalization" || !n.domain.empty() || n.outputs.size() != 1 ||
      n.attrs.get_int("training_mode", 0) != 0)
    return false;
  const Value& x = g.value(s.inputs[0]);
  if (x.dtype != DType::Float32 || !x.shape.is_static() || x.shape.rank() != 4) return false;
  return !parameters(g, n, x.shape.static_dims()[1]).empty();
}

std::shared_ptr<Kernel> make_nhwc_batch_norm_kernel(const Graph& g, const Step& s) {
  if (!is_nhwc_batch_norm_candidate(g, s))
    throw Error("make_nhwc_batch_norm_kernel: step " + s.name + " is not one");
  const Node& n = g.node(s.nodes[0]);
  const int64_t c = g.value(s.inputs[0]).shape.static_dims()[1];
  const auto p = parameters(g, n, c);
  const float eps = n.attrs.get_float("epsilon", 1e-5f);
  std::vector<float> a(static_cast<std::size_t>(c)), b(a.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    // As the runtime's BatchNormalization: scale / sqrt(var + eps), bias - mean * that.
    a[k] = p[0][k] / std::sqrt(p[3][k] + eps);
    b[k] = p[1][k] - p[2][k] * a[k];
  }
  return std::make_shared<NhwcBatchNormKernel>(std::move(a), std::move(b));
}

bool is_nhwc_batch_norm_kernel(const Kernel* k) {
  return dynamic_cast<const NhwcBatchNormKernel*>(k) != nullptr;
}

}  // namespace fx
