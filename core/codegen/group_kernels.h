// SPDX-License-Identifier: Apache-2.0
#pragma once
// How one fusion group's members run once the group is generated: the single answer
// that the Generate view's text (generate_group_source) and the analysis' launch count
// (use_generated_kernels) both take, so that a group is never credited with launches its
// code does not remove. In order of preference, as generate_group_source shows it:
//
//   qdq int8             DequantizeLinear -> Conv/MatMul/Gemm [-> Relu] -> QuantizeLinear
//                        as one oneDNN int8 primitive, and the Add [-> Relu] or MaxPool
//                        between such groups on the 8-bit tensors
//                        (fused_kernels/qdq_int8_kernel.h)
//   pointwise-depthwise  a 1x1 Conv + depthwise Conv chain run in row bands (one kernel)
//   conv post-ops        a Conv (+BN folded) with an expressible epilogue (one kernel)
//   generated            the whole group as one generated kernel (an anchor first runs
//                        its runtime kernel with the rest as its epilogue; bool masks
//                        from outside run first, one kernel each)
//   parts                runs of members generated as kernels of their own
//                        (generated_parts), the other members through their runtime
//                        kernels
//   runtime              nothing generated: every member runs its own kernel

#include <optional>
#include <string>
#include <vector>

#include "analysis/fusion_finder.h"
#include "codegen/group_lowering.h"
#include "fused_kernels/conv_post_op_plan.h"
#include "fused_kernels/pointwise_depthwise_kernel.h"
#include "fused_kernels/qdq_int8_kernel.h"

namespace fx {

struct GroupKernels {
  enum class Form { QdqInt8, PointwiseDepthwise, ConvPostOps, Generated, Parts, Runtime };
  Form form = Form::Runtime;
  std::optional<QdqInt8Plan> qdq;
  std::optional<PointwiseDepthwise> pointwise_depthwise;
  std::optional<ConvPostOpPlan> conv;
  std::string no_post_ops;       // why a Conv group has no oneDNN post-op form
  std::optional<Pending> whole;  // Generated
  std::vector<Pending> parts;    // Parts
  std::string reason;            // why the group is not one generated kernel
  // The members of each kernel launch, in order.
  std::vector<std::vector<NodeId>> kernels;

  bool one_kernel() const { return kernels.size() == 1; }
};

// `nodes`: the group's members in topological order; `id` names generated functions.
GroupKernels plan_group_kernels(const Graph& g, const std::vector<NodeId>& nodes,
                                const std::string& id);

// Sets options.kernels_of so that the analysis counts a group's launches, traffic and
// time after fusion as plan_group_kernels() runs it (on the analysed graph, and on each
// control-flow body with the body's graph).
void use_generated_kernels(FusionOptions& options);

}  // namespace fx
