// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which GPU kernel runs each node or fusion group of a graph, in execution order: the
// host half of the CUDA executor (cuda_runtime/), pure arithmetic over the graph, so
// that the choice is tested on machines without a GPU.
//
//   LaunchPlan unfused = build_launch_plan(graph, {});              // one kernel per node
//   LaunchPlan fused   = build_launch_plan(graph, plan.accepted());  // the plan's groups
//
// Kernel per op:
//   Conv                               cuDNN convolution (2-D, float32)
//   MaxPool/AveragePool/Global*Pool    cuDNN pooling
//   BatchNormalization (inference)     cuDNN batch normalization
//   MatMul, Gemm                       cuBLASLt
//   Transpose/Slice/Concat/Split/Expand  strided copies (copy_plan.h)
//   Gather                             the gather kernel (copy_plan.h)
//   Less/LessOrEqual/Greater/GreaterOrEqual/Equal  the comparison kernel (copy_plan.h)
//   Reshape/Flatten/Squeeze/Unsqueeze/Identity/Dropout  views: no kernel
//   elementwise, broadcast, reductions generated CUDA (cuda_emitter.h), one per node
// An op with none of these is an error naming the op and the node: never a silent CPU
// fallback, which would make the GPU timings a fiction.
//
// A fused group becomes: an anchor (Conv, MatMul, Gemm) whose whole rest is a bias Add
// and/or Relu (and for Conv a residual Add) -> one cuDNN / cuBLASLt launch with that
// epilogue; otherwise the anchor's launch plus one generated kernel for the rest
// (codegen/group_lowering.h, as on the CPU). A group that cannot be generated is cut into
// parts that can (generated_parts); members left over run one kernel each ("fallback").

#include <string>
#include <vector>

#include "analysis/analysis_result.h"
#include "codegen/kernel_ir.h"
#include "ir/graph.h"
#include "runtime/memory_plan.h"

namespace fx::cuda {

enum class LaunchKind { View, Conv, Pool, BatchNorm, Matmul, Generated, Copy, Gather, Compare };
const char* launch_kind_name(LaunchKind k);  // "view", "cudnn-conv", "cublaslt", ...

// What a cuDNN / cuBLASLt launch folds into its output.
struct Epilogue {
  ValueId bias = kNoValue;      // a constant per output channel (Conv) / column (MatMul)
  ValueId residual = kNoValue;  // Conv only: a tensor of the output's shape, added
  bool relu = false;
  bool empty() const { return bias == kNoValue && residual == kNoValue && !relu; }
  std::string str() const;  // "bias+relu", "" when empty
};

struct Launch {
  LaunchKind kind = LaunchKind::Generated;
  std::string name;           // the node's name, the group's id, or "<id>.k" for a group's part
  std::vector<NodeId> nodes;  // the ONNX nodes it computes
  std::vector<std::string> op_types;
  NodeId anchor = kNoNode;      // Conv/Pool/Matmul/Copy/Gather/View: the node it runs
  std::vector<ValueId> inputs;  // read on the device (generated: the kernel's ABI order)
  std::vector<ValueId> outputs;
  int group = -1;      // index into the groups given to build_launch_plan; -1: none
  int generated = -1;  // Generated: index into LaunchPlan::generated
  Epilogue epilogue;   // Conv / Matmul
};

// What became of a fusion group.
struct GroupPlacement {
  std::string id, pattern;
  std::string status;   // fused | fallback
  std::string backend;  // e.g. "cublaslt+bias+relu", "cudnn-conv+generated-cuda", "generated-cuda"
  std::string reason;   // fallback: why
  int launches = 0;     // kernels it runs as (0 when fallback)
};

struct LaunchPlan {
  std::vector<Launch> launches;  // execution order (one stream)
  // One per generated launch; kernels identical but for names share the first one's
  // entry (unique_generated() lists each entry once: what is compiled).
  std::vector<LoweredGroup> generated;
  std::vector<GroupPlacement> groups;  // one per group given, same order

  // Launches that run a kernel (views do not).
  int kernel_count() const;
  int count(LaunchKind k) const;
  // The launch that computes `node` (-1: none, e.g. a Constant).
  int launch_of(NodeId node) const;
  std::vector<const LoweredGroup*> unique_generated() const;
  // The memory plan's steps (runtime/memory_plan.h): one per launch; views alias.
  std::vector<PlanStep> plan_steps() const;
};

// Throws fx::Error naming the op and node when some node has no GPU kernel.
LaunchPlan build_launch_plan(const Graph& graph, const std::vector<const FusionGroup*>& groups);

}  // namespace fx::cuda
