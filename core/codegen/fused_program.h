// SPDX-License-Identifier: Apache-2.0
#pragma once
// From a fusion plan to something the runtime executes: one Step per accepted group,
// the others as make_steps() built them.
//
//   FusedProgram p = build_fused_program(graph, plan, {});
//   Executor fused(graph, p.steps);
//
// Per group, in order of preference:
//   dnnl_post_ops  Conv (+BN folded) or MatMul + expressible epilogue -> one oneDNN
//                  primitive (fused_kernels/fused_conv_kernel.h, fused_kernels/matmul_post_ops.h)
//   compiled       generated C++ (elementwise chain / row kernel); a MatMul with
//                  constant weights in parts, each part's rows followed by the generated
//                  epilogue (codegen/matmul_epilogue.h); or another anchor's runtime
//                  kernel followed by a generated epilogue
//   excluded       not fused at all: the members run as their own unfused steps (a
//                  node is missing, groups overlap, an op has no kernel, the group's
//                  ops could not be emitted or the shapes are not static enough, no
//                  compiler, the compile failed, or the equivalence check failed);
//                  `detail` says why
//   runtime        no longer produced (the members' runtime kernels inside one step
//                  cost more than they saved); kept for readers of older results
// All generated groups of a model go into one translation unit, compiled once (cached).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/fusion_plan.h"
#include "codegen/kernel_compiler.h"
#include "runtime/executor.h"

namespace fx {

struct CodegenOptions {
  bool compile = true;        // false: never run a compiler (such groups run as `runtime`)
  bool dnnl_post_ops = true;  // false: Conv epilogues go through generated code too
  // A group that cannot be generated as a whole: generate its runs of consecutive
  // members that can, as extra groups "<id>.1", "<id>.2", ... (outcome compiled; the
  // group itself is excluded and its detail lists them).
  bool split = true;
  bool emit_cuda = false;  // also emit the generated groups as CUDA (FusedProgram::cuda_source)
  CompilerOptions compiler;
  std::string stem = "model";  // file name stem of the generated source in the cache
  // Threads the program will run on (0: every hardware thread, the executor's default):
  // a MatMul group whose fused kernel would re-read its weights on each of them more
  // than fusion saves is left unfused (matmul_fusion_loss, fused_kernels/matmul_post_ops.h).
  int threads = 0;
  int64_t opset = 0;  // the model's default-domain opset
};

enum class GroupOutcome { DnnlPostOps, Compiled, Runtime, Excluded };
std::string_view group_outcome_name(GroupOutcome o);  // "dnnl_post_ops", ...

struct GroupBuild {
  std::string id;
  std::vector<std::string> nodes;
  std::string pattern;
  GroupOutcome outcome = GroupOutcome::Excluded;
  std::string detail;        // what it became, or why not
  std::string entry;         // C entry point, when generated code runs
  std::optional<Step> step;  // the fused step (absent when excluded)
};

struct FusedProgram {
  std::vector<Step> steps;
  std::vector<GroupBuild> groups;
  std::string source;       // the generated translation unit ("" when none)
  std::string cuda_source;  // the same groups as CUDA C++ (CodegenOptions::emit_cuda)
  std::string source_path;  // in the kernel cache, when compiled
  std::string library_path;
  bool cache_hit = false;
  std::string compiler;  // path, "" when none was found
  std::string flags;
  std::string note;  // user-facing remark (no compiler, compile error)

  int count(GroupOutcome o) const;
  const GroupBuild* find(const std::string& id) const;
  // Excludes a group (e.g. after a failed equivalence check) and rebuilds `steps`.
  void exclude(const Graph& g, const std::string& id, const std::string& why, int64_t opset = 0);
  // Several at once (id -> why), rebuilding `steps` once.
  void exclude(const Graph& g, const std::map<std::string, std::string>& why_by_id,
               int64_t opset = 0);
};

FusedProgram build_fused_program(const Graph& g, const FusionPlan& plan,
                                 const CodegenOptions& options = {});
// The same for an explicit list of groups (accepted or not).
FusedProgram build_fused_program(const Graph& g, const std::vector<const FusionGroup*>& groups,
                                 const CodegenOptions& options = {});

// Readable C++ for one group (what `fxc codegen` prints and the GUI's Generate view
// shows): the generated row kernel, or for a Conv group the oneDNN post-op plan as a
// comment. Never compiles; the text says why when a group cannot be emitted.
std::string generate_group_source(const Graph& g, const FusionGroup& group);

// The graph's node ids of a group's members, in topological order; throws fx::Error
// naming a member the graph lacks.
std::vector<NodeId> resolve_group_nodes(const Graph& g, const FusionGroup& group);

}  // namespace fx
