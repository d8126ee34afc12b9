// SPDX-License-Identifier: Apache-2.0
#include "codegen/group_kernels.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "fused_kernels/matmul_post_ops.h"
#include "util/error.h"

namespace fx {

GroupKernels plan_group_kernels(const Graph& g, const std::vector<NodeId>& nodes,
                                const std::string& id) {
  GroupKernels k;
  if (nodes.empty()) return k;
  // The runtime builds a QDQ group as one int8 primitive before anything else
  // (codegen/fused_program.cc), so the analysis credits it the same way.
  if ((k.qdq = plan_qdq_int8(g, nodes, nullptr))) {
    k.form = GroupKernels::Form::QdqInt8;
    k.kernels = {nodes};
    return k;
  }
  if (g.node(nodes[0]).op_type == "Conv") {
    if ((k.pointwise_depthwise = plan_pointwise_depthwise(g, nodes, nullptr))) {
      k.form = GroupKernels::Form::PointwiseDepthwise;
      k.kernels = {nodes};
      return k;
    }
    if ((k.conv = plan_conv_post_ops(g, nodes, &k.no_post_ops))) {
      k.form = GroupKernels::Form::ConvPostOps;
      k.kernels = {nodes};
      return k;
    }
  }
  try {
    if ((k.whole = lower_pending(g, nodes, id, 0, &k.reason))) {
      k.form = GroupKernels::Form::Generated;
      // Masks run first through their runtime kernels; the rest is one kernel.
      std::vector<NodeId> rest;
      for (NodeId n : nodes) {
        if (std::find(k.whole->masks.begin(), k.whole->masks.end(), n) != k.whole->masks.end())
          k.kernels.push_back({n});
        else
          rest.push_back(n);
      }
      k.kernels.push_back(std::move(rest));
      return k;
    }
    k.parts = generated_parts(g, nodes, id);
  } catch (const Error& e) {
    k.reason = e.what();
    k.parts.clear();
  }
  k.form = k.parts.empty() ? GroupKernels::Form::Runtime : GroupKernels::Form::Parts;
  // Parts and the members outside them, in the group's order.
  std::vector<int> part_of(nodes.size(), -1);
  for (std::size_t p = 0; p < k.parts.size(); ++p)
    for (NodeId n : k.parts[p].nodes)
      part_of[std::size_t(std::find(nodes.begin(), nodes.end(), n) - nodes.begin())] = int(p);
  std::vector<bool> emitted(k.parts.size(), false);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const int p = part_of[i];
    if (p < 0) {
      k.kernels.push_back({nodes[i]});
    } else if (!emitted[std::size_t(p)]) {
      emitted[std::size_t(p)] = true;
      k.kernels.push_back(k.parts[std::size_t(p)].nodes);
    }
  }
  return k;
}

namespace {

// What plan_group_kernels' answer depends on, without the node names: the members' op
// types and attributes in order, where each input comes from (a member's output, or
// outside with its type, shape and, for a scalar or axes constant, its value), and each
// output's type, shape and whether it leaves the group. The repeated
// blocks of a model (a transformer's layers, a ResNet's stages) give the same key, and
// their groups are lowered once. Empty: not cached (a tensor or graph attribute).
std::string structural_key(const Graph& g, const std::vector<NodeId>& nodes) {
  constexpr std::size_t kAxesBytes = 256;
  std::string key;
  auto member_index = [&](NodeId n) {
    const auto it = std::find(nodes.begin(), nodes.end(), n);
    return it == nodes.end() ? -1 : int(it - nodes.begin());
  };
  for (NodeId n : nodes) {
    const Node& node = g.node(n);
    key += node.domain + "::" + node.op_type + "{";
    for (const auto& [name, value] : node.attrs.all()) {
      if (std::holds_alternative<SubgraphRef>(value) ||
          std::holds_alternative<std::shared_ptr<TensorData>>(value))
        return {};
      key += name + "=" + attribute_to_string(value) + ";";
    }
    key += "}(";
    for (ValueId v : node.inputs) {
      if (v == kNoValue) {
        key += "-,";
        continue;
      }
      const Value& val = g.value(v);
      if (const int m = member_index(val.producer); m >= 0) {
        int k = 0;
        while (g.node(val.producer).outputs[std::size_t(k)] != v) ++k;
        key += "m" + std::to_string(m) + "." + std::to_string(k) + ",";
        continue;
      }
      key += std::string(dtype_name(val.dtype)) + val.shape.str();
      if (val.is_constant()) {
        key += "c";
        // Values the lowering reads: scalars (inlined as literals, Clip bounds) and small
        // integer tensors (axes). Other constants (weights, per-channel parameters) are
        // read by the kernel; only their type and shape decide how it runs.
        const TensorData& d = *val.data;
        if (d.numel() == 1 || (!dtype_is_float(d.dtype()) && d.byte_size() <= kAxesBytes)) {
          const auto bytes = d.bytes();
          key.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        }
      }
      key += ",";
    }
    key += ")->(";
    for (ValueId v : node.outputs) {
      if (v == kNoValue) {
        key += "-,";
        continue;
      }
      const Value& val = g.value(v);
      bool leaves = val.is_graph_output;
      for (NodeId c : val.consumers) leaves = leaves || member_index(c) < 0;
      key += std::string(dtype_name(val.dtype)) + val.shape.str() + (leaves ? "!" : "") + ",";
    }
    key += ")\n";
  }
  return key;
}

// A group's kernels by member position, and why it is not one kernel.
struct CachedLaunches {
  std::vector<std::vector<std::size_t>> kernels;
  std::string why_split;
  std::vector<std::string> names;  // the members' names the reason was written with
  bool anchor_runtime = false;
};

// The reason of another group with the same structure, in this group's names.
std::string renamed(std::string why, const std::vector<std::string>& from, const Graph& g,
                    const std::vector<NodeId>& to) {
  for (std::size_t i = 0; i < from.size() && i < to.size(); ++i) {
    const std::string& a = from[i];
    const std::string& b = g.node(to[i]).name;
    if (a.empty() || a == b) continue;
    for (std::size_t at = why.find(a); at != std::string::npos; at = why.find(a, at + b.size()))
      why.replace(at, a.size(), b);
  }
  return why;
}

}  // namespace

void use_generated_kernels(FusionOptions& options) {
  struct Cache {
    std::mutex mutex;
    std::unordered_map<std::string, CachedLaunches> entries;
  };
  auto cache = std::make_shared<Cache>();
  options.kernels_of = [cache](const Graph& g, const std::vector<NodeId>& members) {
    const std::string key = structural_key(g, members);
    if (!key.empty()) {
      std::lock_guard lock(cache->mutex);
      if (const auto it = cache->entries.find(key); it != cache->entries.end()) {
        GroupLaunches out;
        for (const auto& kernel : it->second.kernels) {
          out.kernels.emplace_back();
          for (std::size_t i : kernel) out.kernels.back().push_back(members[i]);
        }
        out.why_split = renamed(it->second.why_split, it->second.names, g, members);
        out.anchor_runtime = it->second.anchor_runtime;
        return out;
      }
    }
    GroupKernels k = plan_group_kernels(g, members, "fg");
    // The generated form runs an anchor through its runtime kernel first
    // (codegen/fused_program.cc: attach_generated), unless the group is a MatMul that
    // oneDNN takes with post-ops before any code is generated (try_matmul_post_ops).
    bool anchor_runtime =
        k.form == GroupKernels::Form::Generated && k.whole && k.whole->anchor != kNoNode;
    if (anchor_runtime && g.node(members.front()).op_type == "MatMul") {
      std::string why;
      anchor_runtime = !plan_matmul_post_ops(g, members, &why);
    }
    if (!key.empty()) {
      CachedLaunches c;
      for (const auto& kernel : k.kernels) {
        c.kernels.emplace_back();
        for (NodeId n : kernel)
          c.kernels.back().push_back(
              std::size_t(std::find(members.begin(), members.end(), n) - members.begin()));
      }
      c.why_split = k.reason;
      c.anchor_runtime = anchor_runtime;
      for (NodeId n : members) c.names.push_back(g.node(n).name);
      std::lock_guard lock(cache->mutex);
      cache->entries.emplace(key, std::move(c));
    }
    return GroupLaunches{std::move(k.kernels), std::move(k.reason), anchor_runtime};
  };
}

}  // namespace fx
