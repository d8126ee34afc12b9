#include "codegen/fused_program.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <unordered_map>

#include "codegen/cpp_emitter.h"
#include "codegen/cuda_emitter.h"
#include "codegen/fused_conv_kernel.h"
#include "codegen/generated_kernel.h"
#include "codegen/kernel_ir.h"
#include "codegen/matmul_epilogue.h"
#include "codegen/matmul_post_ops.h"
#include "codegen/pointwise_depthwise_kernel.h"
#include "runtime/dead_steps.h"
#include "runtime/kernel_registry.h"
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

bool is_anchor(const std::string& op) {
  return op == "Conv" || op == "MatMul" || op == "Gemm" || op == "ConvTranspose";
}

std::string joined_ops(const Graph& g, const std::vector<NodeId>& nodes) {
  std::string s;
  for (NodeId n : nodes) s += (s.empty() ? "" : "+") + g.node(n).op_type;
  return s;
}

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

struct Pending {
  std::size_t index;
  std::vector<NodeId> nodes;
  NodeId anchor = kNoNode;  // runs through its runtime kernel before the generated part
  // Bool masks computed from values outside the group (masks_from_outside), run through
  // their runtime kernels before the generated part (after the anchor).
  std::vector<NodeId> masks;
  LoweredGroup lowered;
};

// Members that compute a bool mask from values outside the group only, GPT-2's causal
// mask LessOrEqual(positions, positions) [S, S] grouped with its Where and Softmax: the
// generated code computes in float and reads a mask as bytes (KInput::mask), so the
// comparison runs first through its runtime kernel (a tiny tensor) and the rest of the
// group is still generated as one kernel.
std::vector<NodeId> masks_from_outside(const Graph& g, const std::vector<NodeId>& nodes) {
  std::vector<NodeId> out;
  for (NodeId n : nodes) {
    const Node& node = g.node(n);
    if (node.outputs.size() != 1 || node.outputs[0] == kNoValue ||
        g.value(node.outputs[0]).dtype != DType::Bool)
      continue;
    bool outside = true;
    for (ValueId v : node.inputs)
      if (v != kNoValue &&
          std::find(nodes.begin(), nodes.end(), g.value(v).producer) != nodes.end())
        outside = false;
    if (outside) out.push_back(n);
  }
  return out;
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
  // Fused Conv steps that feed each other keep their tensors NHWC (the steps of `p`
  // only: each group's own step stays NCHW, as checked alone).
  plan_conv_layouts(g, p.steps);
}

// `nodes` as one generated kernel (an anchor first runs through its runtime kernel),
// or nullopt with `reason`.
std::optional<Pending> lower_pending(const Graph& g, const std::vector<NodeId>& nodes,
                                     const std::string& id, std::size_t index,
                                     std::string* reason) {
  Pending pd{index, nodes, kNoNode, {}, {}};
  std::vector<NodeId> body = nodes;
  if (is_anchor(g.node(nodes[0]).op_type)) {
    pd.anchor = nodes[0];
    body.erase(body.begin());
  }
  pd.masks = masks_from_outside(g, body);
  if (!pd.masks.empty() && pd.masks.size() < body.size())
    std::erase_if(body, [&](NodeId n) {
      return std::find(pd.masks.begin(), pd.masks.end(), n) != pd.masks.end();
    });
  else
    pd.masks.clear();
  bool other_anchor =
      std::any_of(body.begin(), body.end(), [&](NodeId n) { return is_anchor(g.node(n).op_type); });
  LowerResult lr;
  if (body.empty())
    lr.reason = "an anchor alone has nothing to fuse";
  else if (other_anchor)
    lr.reason = "the anchor is not the group's first node";
  else
    lr = lower_group(g, body, id, c_identifier(id));
  if (lr.group) {
    pd.lowered = std::move(*lr.group);
    try {
      emit_cpp_function(pd.lowered);  // schedules; throws when it cannot
      return pd;
    } catch (const Error& e) {
      lr.reason = e.what();
    }
  }
  if (reason) *reason = lr.reason;
  return std::nullopt;
}

// A group that cannot be generated as a whole, cut into runs of consecutive members
// (in topological order, so each run is convex like the group) that can: each run is
// grown while it still lowers, and kept when it has two nodes or more. Part k is
// named "<id>.k".
std::vector<Pending> generated_parts(const Graph& g, const std::vector<NodeId>& nodes,
                                     const std::string& id) {
  std::vector<Pending> out;
  std::size_t i = 0;
  while (i < nodes.size()) {
    std::optional<Pending> best;
    std::size_t end = i;
    const std::string pid = id + "." + std::to_string(out.size() + 1);
    for (std::size_t j = i + 1; j < nodes.size(); ++j) {
      std::vector<NodeId> run(nodes.begin() + static_cast<std::ptrdiff_t>(i),
                              nodes.begin() + static_cast<std::ptrdiff_t>(j) + 1);
      auto pd = lower_pending(g, run, pid, 0, nullptr);
      if (!pd) break;
      best = std::move(pd);
      end = j;
    }
    if (best) {
      out.push_back(std::move(*best));
      i = end + 1;
    } else {
      ++i;
    }
  }
  return out;
}

// A MatMul group whose epilogue oneDNN can apply (codegen/matmul_post_ops.h) as one
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
  for (auto& b : groups) {
    if (b.id != id) continue;
    b.outcome = GroupOutcome::Excluded;
    b.detail = why;
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
  FusedProgram p;
  std::vector<Pending> pending;
  std::vector<std::pair<GroupBuild, Pending>> parts;
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<std::vector<NodeId>> group_nodes(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const FusionGroup& fg = *groups[i];
    GroupBuild b;
    b.id = fg.id;
    b.nodes = fg.nodes;
    b.pattern = fg.pattern;
    p.groups.push_back(b);
    GroupBuild& gb = p.groups.back();
    try {
      group_nodes[i] = resolve_group_nodes(g, fg);
    } catch (const Error& e) {
      gb.detail = e.what();
      continue;
    }
    const auto& nodes = group_nodes[i];
    std::string why;
    if (options.dnnl_post_ops && g.node(nodes[0]).op_type == "Conv") {
      if (auto pd = plan_pointwise_depthwise(g, nodes, nullptr)) {
        try {
          gb.step =
              make_group_step(g, gb, nodes, {pd->x},
                              make_pointwise_depthwise_kernel(prepare_pointwise_depthwise(g, *pd)));
          gb.outcome = GroupOutcome::DnnlPostOps;
          gb.detail =
              "oneDNN 1x1 convolution into row bands consumed by the depthwise loop "
              "(codegen/pointwise_depthwise_kernel.h); the expanded tensor stays in cache";
          continue;
        } catch (const Error& e) {
          why = e.what();
        }
      }
      if (auto cp = plan_conv_post_ops(g, nodes, &why)) {
        try {
          gb.step = make_group_step(g, gb, nodes, cp->step_inputs, make_fused_conv_kernel(g, *cp));
          gb.outcome = GroupOutcome::DnnlPostOps;
          gb.detail = "oneDNN convolution with " + std::to_string(cp->post_ops.size()) +
                      " post-op(s)" + (cp->bn != kNoNode ? ", BatchNormalization folded" : "");
          continue;
        } catch (const Error& e) {
          why = e.what();
        }
      }
    }
    if (std::string loss = matmul_fusion_loss(g, nodes, threads); !loss.empty()) {
      gb.detail = loss;  // excluded: its members run as unfused steps
      continue;
    }
    if (options.dnnl_post_ops && try_matmul_post_ops(g, nodes, gb, &why)) continue;
    std::string reason;
    if (auto pd = lower_pending(g, nodes, fg.id, i, &reason)) {
      pending.push_back(std::move(*pd));
      continue;
    }
    gb.outcome = GroupOutcome::Runtime;
    gb.detail = (why.empty() ? "" : why + "; ") + "no generated code: " + reason;
    // The parts that can be generated become groups of their own ("<id>.1", ...).
    if (!options.split) continue;
    auto segs = generated_parts(g, nodes, fg.id);
    if (segs.empty()) continue;
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
  for (auto& [part, pd] : parts) {
    p.groups.push_back(std::move(part));
    // A part with a MatMul is held to the same rule as a whole group: ViT-B/16's
    // attention in-projections ([Identity of the bias, MatMul, Add] groups, whose
    // MatMul + Add part read the bias as a tensor) ran 0.2-0.3 ms slower each fused.
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

  // One translation unit for all generated groups.
  std::shared_ptr<CompiledLibrary> lib;
  std::string compile_problem;
  if (!pending.empty()) {
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
      compile_problem = "compilation disabled";
    } else if (!cc.compiler()) {
      compile_problem = cc.why_unavailable();
    } else {
      try {
        lib = cc.build(p.source, options.stem);
        p.source_path = lib->source_path();
        p.library_path = lib->so_path();
        p.cache_hit = lib->cache_hit();
      } catch (const Error& e) {
        compile_problem = e.what();
      }
    }
    if (!compile_problem.empty()) {
      p.note = compile_problem;
      spdlog::warn("codegen: {}", compile_problem);
    }
  }
  for (auto& pd : pending) {
    GroupBuild& gb = p.groups[pd.index];
    if (!lib) {
      gb.outcome = GroupOutcome::Runtime;
      gb.detail = "generated code not compiled: " + compile_problem;
      continue;
    }
    auto gen = std::make_shared<GeneratedKernel>(pd.lowered, lib);
    gb.entry = pd.lowered.entry;
    gb.outcome = GroupOutcome::Compiled;
    if (pd.anchor == kNoNode && pd.masks.empty()) {
      std::vector<ValueId> ins;
      for (const auto& in : pd.lowered.inputs) ins.push_back(in.value);
      gb.step = make_group_step(g, gb, pd.nodes, ins, gen);
      gb.detail = pd.lowered.has_reduction ? "generated row kernel" : "generated elementwise loop";
      continue;
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
      continue;
    }
    subs.push_back({gen, gen_in, gen_out, gb.id});
    auto ins = group_external_inputs(g, pd.nodes);
    auto outs = group_external_outputs(g, pd.nodes);
    if (pd.anchor == kNoNode) {
      gb.step = make_group_step(g, gb, pd.nodes, ins,
                                std::make_shared<CompositeKernel>(std::move(subs), ins, outs));
      gb.detail = "runtime kernel of the mask + generated row kernel";
      continue;
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
      continue;
    }
    gb.step = make_group_step(g, gb, pd.nodes, ins,
                              std::make_shared<CompositeKernel>(std::move(subs), ins, outs));
    gb.detail = a.op_type + " runtime kernel + generated epilogue" +
                (a.op_type == "MatMul" ? " (" + why + ")" : "");
  }
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

std::string generate_group_source(const Graph& g, const FusionGroup& group) {
  std::vector<NodeId> nodes;
  try {
    nodes = resolve_group_nodes(g, group);
  } catch (const Error& e) {
    return std::string("// ") + e.what() + "\n";
  }
  std::string head =
      "// group " + group.id + " (" + group.pattern + "): " + joined_ops(g, nodes) + "\n";
  std::string why;
  if (g.node(nodes[0]).op_type == "Conv") {
    if (auto pd = plan_pointwise_depthwise(g, nodes, nullptr)) {
      std::string s = head + "// Runs as one kernel in row bands (no generated code):\n";
      s += "//   oneDNN 1x1 convolution " + g.node(pd->pw).name + " writes a band of rows\n";
      s += "//   depthwise loop " + g.node(pd->dw).name + " reads it while it is in cache\n";
      for (NodeId a : {pd->pw_act, pd->dw_act})
        if (a != kNoNode) s += "//   clamp " + g.node(a).name + " applied in registers\n";
      return s;
    }
    if (auto cp = plan_conv_post_ops(g, nodes, &why)) {
      std::string s = head + "// Runs as one oneDNN convolution (no generated code):\n";
      s += "//   conv  " + g.node(cp->conv).name + "\n";
      if (cp->bn != kNoNode)
        s += "//   BatchNormalization " + g.node(cp->bn).name + " folded into weights and bias\n";
      for (const auto& po : cp->post_ops) s += "//   post-op " + po.alg + "  <- " + po.node + "\n";
      return s;
    }
  }
  std::string prefix = head;
  if (!why.empty()) prefix += "// No oneDNN post-op form: " + why + "\n";
  auto anchor_note = [&](const Pending& pd) {
    std::string s;
    for (NodeId m : pd.masks)
      s += "// Mask " + g.node(m).name + " (" + g.node(m).op_type +
           ") runs through the runtime kernel first; the kernel below reads it as bytes.\n";
    if (pd.anchor == kNoNode) return s;
    const Node& a = g.node(pd.anchor);
    return s + "// Anchor " + a.name + " (" + a.op_type +
           ") runs through the runtime kernel; the epilogue below reads its output.\n";
  };
  std::string reason;
  try {
    // The same decisions as build_fused_program: the whole group as one kernel, else
    // the parts that can be generated, so that what is shown is what runs.
    if (auto pd = lower_pending(g, nodes, group.id, 0, &reason))
      return prefix + anchor_note(*pd) + emit_cpp_prelude() + emit_cpp_function(pd->lowered);
    auto parts = generated_parts(g, nodes, group.id);
    if (parts.empty())
      return prefix + "// Not generated; the members run through runtime kernels: " + reason + "\n";
    std::vector<bool> covered(nodes.size(), false);
    std::string body;
    for (const Pending& pd : parts) {
      body += "\n// part " + pd.lowered.group_id + ": " + joined_ops(g, pd.nodes) + "\n";
      body += anchor_note(pd) + emit_cpp_function(pd.lowered);
      for (NodeId n : pd.nodes)
        covered[std::size_t(std::find(nodes.begin(), nodes.end(), n) - nodes.begin())] = true;
    }
    std::string rest;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (!covered[i])
        rest += "//   " + g.node(nodes[i]).name + " (" + g.node(nodes[i]).op_type + ")\n";
    prefix += "// Not generated as one kernel: " + reason + "\n// Generated in " +
              std::to_string(parts.size()) + " part(s)" +
              (rest.empty() ? std::string(".\n")
                            : "; these members run through runtime kernels:\n" + rest);
    return prefix + emit_cpp_prelude() + body;
  } catch (const Error& e) {
    return prefix + "// Not generated: " + e.what() + "\n";
  }
}

}  // namespace fx
