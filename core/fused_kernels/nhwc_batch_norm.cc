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

// Rows [r0, r1) of `c` channels each (NHWC pixels).
FX_BN_CLONES void affine_pixels(const float* x, const float* a, const float* b, float* y,
                                int64_t r0, int64_t r1, int64_t c, bool relu) {
  for (int64_t p = r0; p < r1; ++p) {
    const float* __restrict xi = x + p * c;
    float* __restrict yi = y + p * c;
    if (relu)
      for (int64_t k = 0; k < c; ++k) yi[k] = std::max(xi[k] * a[k] + b[k], 0.0f);
    else
      for (int64_t k = 0; k < c; ++k) yi[k] = xi[k] * a[k] + b[k];
  }
}

// One NCHW plane of `len` floats, all of one channel.
FX_BN_CLONES void affine_plane(const float* x, float a, float b, float* y, int64_t len, bool relu) {
  if (relu)
    for (int64_t i = 0; i < len; ++i) y[i] = std::max(x[i] * a + b, 0.0f);
  else
    for (int64_t i = 0; i < len; ++i) y[i] = x[i] * a + b;
}

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(std::vector<float> a, std::vector<float> b, bool relu, bool nhwc)
      : a_(std::move(a)), b_(std::move(b)), relu_(relu), nhwc_(nhwc) {}
  bool nhwc() const { return nhwc_; }
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
    if (nhwc_) {
      parallel_for(x.numel() / c, c, [&](int64_t r0, int64_t r1) {
        affine_pixels(xp, a_.data(), b_.data(), yp, r0, r1, c, relu_);
      });
      return;
    }
    const int64_t plane = x.dims()[2] * x.dims()[3];
    parallel_for(x.dims()[0] * c, plane, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const std::size_t k = static_cast<std::size_t>(p % c);
        affine_plane(xp + p * plane, a_[k], b_[k], yp + p * plane, plane, relu_);
      }
    });
  }

 private:
  std::vector<float> a_, b_;
  bool relu_, nhwc_;
};

// The four parameters of a BatchNormalization node, each C floats; empty if any is not
// such a constant.
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

bool lone_batch_norm(const Graph& g, const Node& n) {
  if (n.op_type != "BatchNormalization" || !n.domain.empty() || n.outputs.size() != 1 ||
      n.inputs.empty() || n.inputs[0] == kNoValue || n.attrs.get_int("training_mode", 0) != 0)
    return false;
  const Value& x = g.value(n.inputs[0]);
  if (x.dtype != DType::Float32 || !x.shape.is_static() || x.shape.rank() != 4) return false;
  return !parameters(g, n, x.shape.static_dims()[1]).empty();
}

bool is_relu_of(const Graph& g, const Node& relu, const Node& bn) {
  return relu.op_type == "Relu" && relu.domain.empty() && relu.inputs.size() == 1 &&
         relu.inputs[0] == bn.outputs[0] && relu.outputs.size() == 1 &&
         g.value(relu.outputs[0]).dtype == DType::Float32;
}

}  // namespace

bool is_nhwc_batch_norm_candidate(const Graph& g, const Step& s) {
  if (s.outputs.size() != 1 || s.inputs.empty() || s.nodes.empty() || s.nodes.size() > 2)
    return false;
  const Node& bn = g.node(s.nodes[0]);
  if (!lone_batch_norm(g, bn) || s.inputs[0] != bn.inputs[0]) return false;
  return s.nodes.size() == 1 || is_relu_of(g, g.node(s.nodes[1]), bn);
}

std::shared_ptr<Kernel> make_batch_norm_kernel(const Graph& g, const Step& s, bool nhwc) {
  if (!is_nhwc_batch_norm_candidate(g, s))
    throw Error("BatchNormalization kernel: step '" + s.name + "' is not one");
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
  return std::make_shared<BatchNormKernel>(std::move(a), std::move(b), s.nodes.size() == 2, nhwc);
}

bool is_nhwc_batch_norm_kernel(const Kernel* k) {
  auto* bn = dynamic_cast<const BatchNormKernel*>(k);
  return bn && bn->nhwc();
}

int fold_relus_into_batch_norms(const Graph& g, std::vector<Step>& steps) {
  std::vector<Step> fused;
  for (const Step& s : steps) {
    if (s.nodes.size() != 1 || !is_nhwc_batch_norm_candidate(g, s)) continue;
    const Node& bn = g.node(s.nodes[0]);
    const Value& out = g.value(bn.outputs[0]);
    if (out.is_graph_output || out.consumers.size() != 1) continue;
    const NodeId relu = out.consumers[0];
    const bool lone = std::any_of(steps.begin(), steps.end(), [&](const Step& t) {
      return t.nodes.size() == 1 && t.nodes[0] == relu;
    });
    if (!lone || !is_relu_of(g, g.node(relu), bn)) continue;
    Step f;
    f.name = s.name;
    f.op_type = "BatchNormalization+Relu";
    f.nodes = {s.nodes[0], relu};
    f.inputs = s.inputs;
    f.outputs = g.node(relu).outputs;
    f.kernel = make_batch_norm_kernel(g, f, /*nhwc=*/false);
    fused.push_back(std::move(f));
  }
  for (Step& f : fused) substitute_step(steps, std::move(f));
  return static_cast<int>(fused.size());
}

}  // namespace fx
