// SPDX-License-Identifier: Apache-2.0
// The readable source of one group (fused_program.h: generate_group_source): the
// generated row kernel, or for a Conv group the oneDNN form it runs as.

#include <algorithm>

#include "codegen/cpp_emitter.h"
#include "codegen/fused_program.h"
#include "codegen/group_kernels.h"
#include "codegen/group_lowering.h"
#include "util/error.h"

namespace fx {

std::string generate_group_source(const Graph& g, const FusionGroup& group) {
  std::vector<NodeId> nodes;
  try {
    nodes = resolve_group_nodes(g, group);
  } catch (const Error& e) {
    return std::string("// ") + e.what() + "\n";
  }
  std::string head =
      "// group " + group.id + " (" + group.pattern + "): " + joined_ops(g, nodes) + "\n";
  // The decisions are plan_group_kernels' (group_kernels.h), the same the analysis
  // counts launches with, so that what is shown is what is credited.
  GroupKernels k;
  try {
    k = plan_group_kernels(g, nodes, group.id);
  } catch (const Error& e) {
    return head + "// Not generated: " + e.what() + "\n";
  }
  if (const auto& q = k.qdq) {
    const std::string& op = g.node(q->anchor).op_type;
    std::string s = head + "// Runs as one int8 kernel (no generated code):\n";
    s += "//   " + op + " " + g.node(q->anchor).name +
         (op == "Add"       ? " dequantizes and adds its two 8-bit operands element by element\n"
          : op == "MaxPool" ? " pools the 8-bit values (one scale and zero point on both sides)\n"
                            : " reads the 8-bit input and weights, accumulates in int32\n");
    if (q->relu != kNoNode)
      s += "//   Relu " + g.node(q->relu).name + " applied before requantizing\n";
    s += "//   QuantizeLinear " + g.node(q->q).name + " writes the 8-bit output\n";
    return s;
  }
  if (const auto& pd = k.pointwise_depthwise) {
    std::string s = head + "// Runs as one kernel in row bands (no generated code):\n";
    s += "//   oneDNN 1x1 convolution " + g.node(pd->pw).name + " writes a band of rows\n";
    s += "//   depthwise loop " + g.node(pd->dw).name + " reads it while it is in cache\n";
    for (NodeId a : {pd->pw_act, pd->dw_act})
      if (a != kNoNode) s += "//   clamp " + g.node(a).name + " applied in registers\n";
    return s;
  }
  if (const auto& cp = k.conv) {
    std::string s = head + "// Runs as one oneDNN convolution (no generated code):\n";
    s += "//   conv  " + g.node(cp->conv).name + "\n";
    if (cp->bn != kNoNode)
      s += "//   BatchNormalization " + g.node(cp->bn).name + " folded into weights and bias\n";
    for (const auto& po : cp->post_ops) s += "//   post-op " + po.alg + "  <- " + po.node + "\n";
    return s;
  }
  std::string prefix = head;
  if (!k.no_post_ops.empty()) prefix += "// No oneDNN post-op form: " + k.no_post_ops + "\n";
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
  try {
    if (k.whole)
      return prefix + anchor_note(*k.whole) + emit_cpp_prelude() +
             emit_cpp_function(k.whole->lowered);
    if (k.parts.empty())
      return prefix + "// Not generated; the members run through runtime kernels: " + k.reason +
             "\n";
    std::vector<bool> covered(nodes.size(), false);
    std::string body;
    for (const Pending& pd : k.parts) {
      body += "\n// part " + pd.lowered.group_id + ": " + joined_ops(g, pd.nodes) + "\n";
      body += anchor_note(pd) + emit_cpp_function(pd.lowered);
      for (NodeId n : pd.nodes)
        covered[std::size_t(std::find(nodes.begin(), nodes.end(), n) - nodes.begin())] = true;
    }
    std::string rest;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (!covered[i])
        rest += "//   " + g.node(nodes[i]).name + " (" + g.node(nodes[i]).op_type + ")\n";
    prefix += "// Not generated as one kernel: " + k.reason + "\n// Generated in " +
              std::to_string(k.parts.size()) + " part(s)" +
              (rest.empty() ? std::string(".\n")
                            : "; these members run through runtime kernels:\n" + rest) +
              "// " + std::to_string(k.kernels.size()) + " kernel launches where the members ran " +
              std::to_string(nodes.size()) + ".\n";
    return prefix + emit_cpp_prelude() + body;
  } catch (const Error& e) {
    return prefix + "// Not generated: " + e.what() + "\n";
  }
}

}  // namespace fx
