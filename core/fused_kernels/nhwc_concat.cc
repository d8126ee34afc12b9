// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/nhwc_concat.h"

#include <cstring>
#include <vector>

#include "runtime/parallel.h"
#include "util/error.h"

namespace fx {

namespace {

class NhwcConcatKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) override {
    const int k = ctx.num_inputs();
    if (k == 0) throw Error("Concat step " + ctx.step_name() + ": no inputs");
    const Tensor& x0 = ctx.in(0);
    if (x0.dtype() != DType::Float32 || x0.rank() != 4)
      throw Error("Concat step " + ctx.step_name() + ": unsupported input " + x0.str());
    const int64_t n = x0.dims()[0], h = x0.dims()[2], w = x0.dims()[3];
    std::vector<const float*> src(static_cast<std::size_t>(k));
    std::vector<int64_t> ch(static_cast<std::size_t>(k));
    int64_t c = 0;
    for (int i = 0; i < k; ++i) {
      const Tensor& x = ctx.in(i);
      if (x.dtype() != DType::Float32 || x.rank() != 4 || x.dims()[0] != n || x.dims()[2] != h ||
          x.dims()[3] != w)
        throw Error("Concat step " + ctx.step_name() + ": input " + std::to_string(i) + " " +
                    x.str() + " does not match " + x0.str() + " but for its channels");
      src[static_cast<std::size_t>(i)] = x.data<float>();
      ch[static_cast<std::size_t>(i)] = x.dims()[1];
      c += x.dims()[1];
    }
    Tensor& y = ctx.output(0, DType::Float32, {n, c, h, w});
    float* yp = y.data<float>();
    // Each pixel's output channels are one run, its inputs' runs laid side by side.
    parallel_for(n * h * w, c, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        float* o = yp + p * c;
        for (std::size_t i = 0; i < src.size(); ++i) {
          std::memcpy(o, src[i] + p * ch[i], static_cast<std::size_t>(ch[i]) * sizeof(float));
          o += ch[i];
        }
      }
    });
  }
};

}  // namespace

bool is_nhwc_concat_candidate(const Graph& g, const Step& s) {
  if (s.nodes.size() != 1 || s.outputs.size() != 1 || s.inputs.empty()) return false;
  const Node& n = g.node(s.nodes[0]);
  if (n.op_type != "Concat" || n.outputs.size() != 1) return false;
  const int64_t axis = n.attrs.get_int("axis", 0);
  if (axis != 1 && axis != -3) return false;
  for (ValueId v : s.inputs) {
    if (v == kNoValue) return false;
    const Value& val = g.value(v);
    if (val.dtype != DType::Float32 || !val.shape.rank_known() || val.shape.rank() != 4)
      return false;
  }
  return true;
}

std::shared_ptr<Kernel> make_nhwc_concat_kernel() {
  return std::make_shared<NhwcConcatKernel>();
}

bool is_nhwc_concat_kernel(const Kernel* k) {
  return dynamic_cast<const NhwcConcatKernel*>(k) != nullptr;
}

}  // namespace fx
