// SPDX-License-Identifier: Apache-2.0
#include "codegen/group_lowering.h"

#include <algorithm>

#include "codegen/cpp_emitter.h"
#include "util/error.h"

namespace fx {

namespace {

bool is_anchor(const std::string& op) {
  return op == "Conv" || op == "MatMul" || op == "Gemm" || op == "ConvTranspose";
}

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

}  // namespace

std::string joined_ops(const Graph& g, const std::vector<NodeId>& nodes) {
  std::string s;
  for (NodeId n : nodes) s += (s.empty() ? "" : "+") + g.node(n).op_type;
  return s;
}

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

}  // namespace fx
