// SPDX-License-Identifier: Apache-2.0
#include "codegen/fused_program.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <unordered_map>

#include "codegen/cpp_emitter.h"
#include "codegen/cuda_emitter.h"
#include "codegen/generated_kernel.h"
#include "codegen/group_lowering.h"
#include "codegen/kernel_ir.h"
#include "codegen/matmul_epilogue.h"
#include "fused_kernels/conv_layout_plan.h"
#include "fused_kernels/fused_conv_kernel.h"
#include "fused_kernels/matmul_post_ops.h"
#include "fused_kernels/nhwc_batch_norm.h"
#include "fused_kernels/pointwise_depthwise_kernel.h"
#include "fused_kernels/pool_pad_fold.h"
#include "fused_kernels/qdq_int8_kernel.h"
#include "runtime/dead_steps.h"
#include "runtime/kernel_registry.h"
#include "runtime/thread_pool.h"
#include "util/error.h"

namespace fx {

std::string_view group_outcome_name(GroupOutcome o) {
  switch (o) {
    case GroupOutcome::DnnlPostOps: return "dnnl_post_ops";
    case GroupOutcome::Compiled: return "compiled";
    case GroupOutcome::Runtime: return "runtime";
    case GroupOutcome::Excluded: return "excluded";
  }
  return "?";
}

int FusedProgram::count(GroupOutcome o) const {
  return static_cast<int>(std::count_if(groups.begin(), groups.end(),
                                        [&](const GroupBuild& b) { return b.outcome == o; }));
}

const GroupBuild* FusedProgram::find(const std::string& id) const {
  for (const auto& b : groups)
    if (b.id == id) return &b;
  return nullptr;
}

namespace {

Step make_group_step(const Graph& g, const GroupBuild& b, const std::vector<NodeId>& nodes,
                     std::vector<ValueId> inputs, std::shared_ptr<Kernel> k) {
  Step s;
  s.name = b.id;
  s.op_type = joined_ops(g, nodes);
  s.nodes = nodes;
  s.inputs = std::move(inputs);
  s.outputs = group_external_outputs(g, nodes);
  s.kernel = std::move(k);
  return s;
}

void rebuild_steps(const Graph& g, FusedProgram& p, int64_t opset) {
  p.steps = make_steps(g, opset);
  for (auto& b : p.groups) {
    if (!b.step) continue;
    b.step->group_id = static_cast<int>(&b - p.groups.data());  // its index in p.groups
    try {
      substitute_step(p.steps, *b.step);
    } catch (const Error& e) {
      b.outcome = GroupOutcome::Excluded;
      b.detail = e.what();
      b.step.reset();
    }
  }
  // Constants that only fused steps had read (they took them at build time) are no
  // longer computed each run.
  if (const int dead = remove_dead_steps(g, p.steps))
    spdlog::debug("fused program: {} steps whose outputs nothing reads removed", dead);
  // A zero Pad before an AveragePool becomes the pool's own padding (one pass, and one
  // that runs on NHWC too).
  if (const int folded = fold_pads_into_pools(g, p.steps, opset))
    spdlog::debug("fused program: {} Pads folded into their AveragePools", folded);
  // So does a Relu after a BatchNormalization that no Conv takes (pre-activation).
  if (const int folded = fold_relus_into_batch_norms(g, p.steps))
    spdlog::debug("fused program: {} Relus folded into their BatchNormalizations", folded);
  // Fused Conv steps that feed each other keep their tensors NHWC (the steps of `p`
  // only: each group's own step stays NCHW, as checked alone).
  const int nhwc = plan_conv_layouts(g, p.steps);
  spdlog::debug("fused program: {} values kept NHWC", nhwc);
}

// A MatMul group whose epilogue oneDNN can apply (fused_kernels/matmul_post_ops.h) as one
// matmul primitive with post-ops; false (with `why`) when it is not expressible.
bool try_matmul_post_ops(const Graph& g, const std::vector<NodeId>& nodes, GroupBuild& gb,
                         std::string* why) {
  if (nodes.empty() || g.node(nodes[0]).op_type != "MatMul") return false;
  auto mp = plan_matmul_post_ops(g, nodes, why);
  if (!mp) return false;
  try {
    gb.step = make_group_step(g, gb, nodes, mp->step_inputs, make_matmul_post_op_kernel(g, *mp));
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
  gb.outcome = GroupOutcome::DnnlPostOps;
  gb.detail = "oneDNN matmul with " + std::to_string(mp->post_ops.size()) + " post-op(s)" +
              (mp->bias != kNoValue ? " and its bias" : "");
  return true;
}

// A QDQ int8 group (analysis/qdq_pattern.cc) as one oneDNN int8 convolution or matmul
// (fused_kernels/qdq_int8_kernel.h); false (with `why`) when the group is not one.
bool try_qdq_int8(const Graph& g, const std::vector<NodeId>& nodes, GroupBuild& gb,
                  std::string* why) {
  auto qp = plan_qdq_int8(g, nodes, why);
  if (!qp) return false;
  try {
    gb.step = make_group_step(g, gb, nodes, qp->inputs(), make_qdq_int8_kernel(g, *qp));
  } catch (const Error& e) {
    *why = e.what();
    return false;
  }
  const std::string& op = g.node(qp->anchor).op_type;
  gb.outcome = GroupOutcome::DnnlPostOps;
  gb.detail = (op == "Add" || op == "MaxPool"
                   ? "int8 " + op
                   : "oneDNN int8 " + std::string(op == "Conv" ? "convolution" : "matmul")) +
              " reading and writing 8-bit tensors (fused_kernels/qdq_int8_kernel.h)";
  return true;
}

// A Conv group as a oneDNN form: a 1x1 expansion into row bands consumed by the
// depthwise loop, or a convolution with post-ops. False (with `why`) when neither
// applies.
bool try_conv_kernels(const Graph& g, const std::vector<NodeId>& nodes, GroupBuild& gb,
                      std::string* why) {
  if (auto pd = plan_pointwise_depthwise(g, nodes, nullptr)) {
    try {
      gb.step =
          make_group_step(g, gb, nodes, {pd->x},
                          make_pointwise_depthwise_kernel(prepare_pointwise_depthwise(g, *pd)));
      gb.outcome = GroupOutcome::DnnlPostOps;
      gb.detail =
          "oneDNN 1x1 convolution into row bands consumed by the depthwise loop "
          "(fused_kernels/pointwise_depthwise_kernel.h); the expanded tensor stays in cache";
      return true;
    } catch (const Error& e) {
      *why = e.what();
    }
  }
  if (auto cp = plan_conv_post_ops(g, nodes, why)) {
    try {
      gb.step = make_group_step(g, gb, nodes, cp->step_inputs, make_fused_conv_kernel(g, *cp));
      gb.outcome = GroupOutcome::DnnlPostOps;
      gb.detail = "oneDNN convolution with " + std::to_string(cp->post_ops.size()) + " post-op(s)" +
                  (cp->bn != kNoNode ? ", BatchNormalization folded" : "");
      return true;
    } catch (const Error& e) {
      *why = e.what();
    }
  }
  return false;
}

// Group i (`gb`, its build record): a oneDNN form, else generated code (`pending`),
// else its runs that can be generated become groups of their own ("<id>.1", ...:
// `parts`).
void plan_group(const Graph& g, const FusionGroup& fg, std::size_t i, const CodegenOptions& options,
                int threads, GroupBuild& gb, std::vector<Pending>& pending,
                std::vector<std::pair<GroupBuild, Pending>>& parts) {
  std::vector<NodeId> nodes;
  try {
    nodes = resolve_group_nodes(g, fg);
  } catch (const Error& e) {
    gb.detail = e.what();
    return;
  }
  std::string why;
  if (options.dnnl_post_ops && fg.pattern.rfind("qdq_", 0) == 0 && try_qdq_int8(g, nodes, gb, &why))
    return;
  if (options.dnnl_post_ops && g.node(nodes[0]).op_type == "Conv" &&
      try_conv_kernels(g, nodes, gb, &why))
    return;
  if (std::string loss = matmul_fusion_loss(g, nodes, threads); !loss.empty()) {
    gb.detail = loss;  // excluded: its members run as unfused steps
    return;
  }
  if (options.dnnl_post_ops && try_matmul_post_ops(g, nodes, gb, &why)) return;
  std::string reason;
  if (auto pd = lower_pending(g, nodes, fg.id, i, &reason)) {
    pending.push_back(std::move(*pd));
    return;
  }
  gb.outcome = GroupOutcome::Runtime;
  gb.detail = (why.empty() ? "" : why + "; ") + "no generated code: " + reason;
  if (!options.split) return;
  auto segs = generated_parts(g, nodes, fg.id);
  if (segs.empty()) return;
  gb.detail += "; generated in " + std::to_string(segs.size()) + " part(s):";
  for (auto& seg : segs) {
    GroupBuild part;
    part.id = seg.lowered.group_id;
    for (NodeId n : seg.nodes) part.nodes.push_back(g.node(n).name);
    part.pattern = fg.pattern + " (part)";
    gb.detail += " " + part.id;
    parts.emplace_back(std::move(part), std::move(seg));
  }
}

// The parts of groups that were split, appended to the program's groups: a oneDNN
// matmul with post-ops where one applies, else generated code (`pending`).
void plan_parts(const Graph& g, const CodegenOptions& options, int threads,
                std::vector<std::pair<GroupBuild, Pending>> parts, FusedProgram& p,
                std::vector<Pending>& pending) {
  for (auto& [part, pd] : parts) {
    p.groups.push_back(std::move(part));
    // A part with a MatMul is held to the same rule as a whole group: ViT-B/16's
    // attention in-projections ([Identity of the bias, MatMul, Add] groups, whose
    // MatMul + Add part read the bias as a tensor) ran slower fused.
    if (std::string loss = matmul_fusion_loss(g, pd.nodes, threads); !loss.empty()) {
      p.groups.back().detail = loss;  // excluded: its members run as unfused steps
      continue;
    }
    std::string why;
    if (options.dnnl_post_ops && try_matmul_post_ops(g, pd.nodes, p.groups.back(), &why)) continue;
    if (!why.empty())
      spdlog::debug("codegen: part {}: no oneDNN post-ops: {}", p.groups.back().id, why);
    pd.index = p.groups.size() - 1;
    pending.push_back(std::move(pd));
  }
}

// One translation unit for all generated groups, compiled (or found in the cache); null
// with `problem` (and the program's note) set when it is not.
std::shared_ptr<CompiledLibrary> compile_pending(const std::vector<Pending>& pending,
                                                 const CodegenOptions& options, FusedProgram& p,
                                                 std::string* problem) {
  if (pending.empty()) return nullptr;
  std::shared_ptr<CompiledLibrary> lib;
  std::vector<LoweredGroup> lowered;
  for (const auto& pd : pending) lowered.push_back(pd.lowered);
  p.source = emit_cpp_source(lowered);
  if (options.emit_cuda) {
    try {
      p.cuda_source = emit_cuda_source(lowered);
    } catch (const Error& e) {
      p.cuda_source = std::string("// CUDA emission failed: ") + e.what() + "\n";
    }
  }
  KernelCompiler cc(options.compiler);
  p.compiler = cc.compiler().value_or("");
  p.flags = cc.flags_string();
  if (!options.compile) {
    *problem = "compilation disabled";
  } else if (!cc.compiler()) {
    *problem = cc.why_unavailable();
  } else {
    try {
      lib = cc.build(p.source, options.stem);
      p.source_path = lib->source_path();
      p.library_path = lib->so_path();
      p.cache_hit = lib->cache_hit();
    } catch (const Error& e) {
      *problem = e.what();
    }
  }
  if (!problem->empty()) {
    p.note = *problem;
    spdlog::warn("codegen: {}", *problem);
  }
  return lib;
}

// The step of a generated group: its kernel alone, or after the runtime kernels of its
// masks and anchor (a MatMul anchor in parts, each followed by the epilogue, where it
// can); a group whose code was not compiled runs on the runtime (outcome Runtime).
void attach_generated(const Graph& g, const Pending& pd, std::shared_ptr<CompiledLibrary> lib,
                      const std::string& compile_problem, const CodegenOptions& options,
                      GroupBuild& gb) {
  if (!lib) {
    gb.outcome = GroupOutcome::Runtime;
    gb.detail = "generated code not compiled: " + compile_problem;
    return;
  }
  auto gen = std::make_shared<GeneratedKernel>(pd.lowered, lib);
  gb.entry = pd.lowered.entry;
  gb.outcome = GroupOutcome::Compiled;
  if (pd.anchor == kNoNode && pd.masks.empty()) {
    std::vector<ValueId> ins;
    for (const auto& in : pd.lowered.inputs) ins.push_back(in.value);
    gb.step = make_group_step(g, gb, pd.nodes, ins, gen);
    gb.detail = pd.lowered.has_reduction ? "generated row kernel" : "generated elementwise loop";
    return;
  }
  std::vector<SubStep> subs;
  std::vector<ValueId> gen_in, gen_out;
  for (const auto& in : pd.lowered.inputs) gen_in.push_back(in.value);
  for (const auto& o : pd.lowered.outputs) gen_out.push_back(o.value);
  std::vector<NodeId> before = pd.masks;
  if (pd.anchor != kNoNode) before.insert(before.begin(), pd.anchor);
  try {
    for (NodeId n : before) {
      const Node& a = g.node(n);
      subs.push_back({make_kernel(g, a, options.opset), a.inputs, a.outputs, a.name});
    }
  } catch (const Error& e) {
    gb.outcome = GroupOutcome::Excluded;
    gb.detail = e.what();
    return;
  }
  subs.push_back({gen, gen_in, gen_out, gb.id});
  auto ins = group_external_inputs(g, pd.nodes);
  auto outs = group_external_outputs(g, pd.nodes);
  if (pd.anchor == kNoNode) {
    gb.step = make_group_step(g, gb, pd.nodes, ins,
                              std::make_shared<CompositeKernel>(std::move(subs), ins, outs));
    gb.detail = "runtime kernel of the mask + generated row kernel";
    return;
  }
  const Node& a = g.node(pd.anchor);
  std::string why;
  std::shared_ptr<Kernel> k;
  if (pd.masks.empty())
    k = make_matmul_epilogue_kernel(g, pd.anchor, pd.lowered, gen, ins, outs, &why);
  else
    why = "a mask runs before the epilogue";
  if (k) {
    gb.step = make_group_step(g, gb, pd.nodes, ins, k);
    gb.detail = "MatMul in parts, each followed by the generated epilogue";
    return;
  }
  gb.step = make_group_step(g, gb, pd.nodes, ins,
                            std::make_shared<CompositeKernel>(std::move(subs), ins, outs));
  gb.detail = a.op_type + " runtime kernel + generated epilogue" +
              (a.op_type == "MatMul" ? " (" + why + ")" : "");
}

}  // namespace

std::vector<NodeId> resolve_group_nodes(const Graph& g, const FusionGroup& group) {
  std::vector<NodeId> ids;
  for (const auto& name : group.nodes) {
    NodeId n = g.find_node(name);
    if (n == kNoNode)
      throw Error("group " + group.id + ": node '" + name + "' is not in the model");
    ids.push_back(n);
  }
  std::unordered_map<NodeId, std::size_t> pos;
  auto order = g.topological_order();
  for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  std::sort(ids.begin(), ids.end(), [&](NodeId a, NodeId b) { return pos[a] < pos[b]; });
  return ids;
}

void FusedProgram::exclude(const Graph& g, const std::string& id, const std::string& why,
                           int64_t opset) {
  exclude(g, std::map<std::string, std::string>{{id, why}}, opset);
}

void FusedProgram::exclude(const Graph& g, const std::map<std::string, std::string>& why_by_id,
                           int64_t opset) {
  for (auto& b : groups) {
    auto it = why_by_id.find(b.id);
    if (it == why_by_id.end()) continue;
    b.outcome = GroupOutcome::Excluded;
    b.detail = it->second;
    b.step.reset();
  }
  rebuild_steps(g, *this, opset);
}

FusedProgram build_fused_program(const Graph& g, const FusionPlan& plan,
                                 const CodegenOptions& options) {
  return build_fused_program(g, plan.accepted(), options);
}

FusedProgram build_fused_program(const Graph& g, const std::vector<const FusionGroup*>& groups,
                                 const CodegenOptions& options) {
  // oneDNN primitives of fused kernels are made as they run, on one OpenMP thread:
  // some (gemm-based matmul with post-ops) size their own OpenMP regions by the thread
  // count they were made under, and a primitive made for two threads but run on one
  // per part spawns a team inside every part (tens of times slower on a busy machine).
  OneOmpThread one_omp;
  FusedProgram p;
  std::vector<Pending> pending;
  std::vector<std::pair<GroupBuild, Pending>> parts;
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const FusionGroup& fg = *groups[i];
    GroupBuild b;
    b.id = fg.id;
    b.nodes = fg.nodes;
    b.pattern = fg.pattern;
    p.groups.push_back(b);
    plan_group(g, fg, i, options, threads, p.groups.back(), pending, parts);
  }
  plan_parts(g, options, threads, std::move(parts), p, pending);
  std::string compile_problem;
  std::shared_ptr<CompiledLibrary> lib = compile_pending(pending, options, p, &compile_problem);
  for (auto& pd : pending)
    attach_generated(g, pd, lib, compile_problem, options, p.groups[pd.index]);
  // Groups that could not be generated are not fused: their members stay the unfused
  // steps they were. (Running them inside one composite step saved nothing and cost
  // time: its internal values do not share the executor's arena.)
  for (auto& gb : p.groups) {
    if (gb.outcome != GroupOutcome::Runtime) continue;
    gb.outcome = GroupOutcome::Excluded;
    gb.step.reset();
    gb.detail += "; the members run as unfused steps";
  }
  rebuild_steps(g, p, options.opset);
  return p;
}

}  // namespace fx
