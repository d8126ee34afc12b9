// SPDX-License-Identifier: Apache-2.0
#include "fused_kernels/pool_pad_fold.h"

#include <algorithm>

#include "fused_kernels/nhwc_batch_norm.h"
#include "ir/graph_queries.h"
#include "runtime/kernel_registry.h"
#include "util/error.h"

namespace fx {

namespace {

// The spatial pads [top, left, bottom, right] of a Pad node that pads a rank-4 float32
// tensor with zeros on its last two axes only; nullopt for any other Pad.
std::optional<std::vector<int64_t>> zero_spatial_pads(const Graph& g, const Node& pad) {
  if (pad.op_type != "Pad" || !pad.domain.empty() || pad.inputs.empty() || pad.outputs.size() != 1)
    return std::nullopt;
  if (pad.attrs.get_string("mode", "constant") != "constant") return std::nullopt;
  const Value& x = g.value(pad.inputs[0]);
  if (x.dtype != DType::Float32 || x.shape.rank() != 4) return std::nullopt;
  if (pad.inputs.size() > 3 && pad.inputs[3] != kNoValue) return std::nullopt;  // axes
  std::vector<int64_t> pads;
  if (pad.attrs.has("pads")) {  // opset < 11: pads and value are attributes
    pads = pad.attrs.get_ints("pads");
    if (pad.attrs.get_float("value", 0.0f) != 0.0f) return std::nullopt;
  } else {
    if (pad.inputs.size() < 2 || pad.inputs[1] == kNoValue) return std::nullopt;
    auto data = constant_data(g, pad.inputs[1]);
    if (!data || data->dtype() != DType::Int64) return std::nullopt;
    pads = data->to_int64s();
    if (pad.inputs.size() > 2 && pad.inputs[2] != kNoValue) {
      auto value = constant_data(g, pad.inputs[2]);
      if (!value || value->numel() != 1 || value->dtype() != DType::Float32 ||
          value->to_floats()[0] != 0.0f)
        return std::nullopt;
    }
  }
  if (pads.size() != 8 || pads[0] || pads[1] || pads[4] || pads[5]) return std::nullopt;
  const std::vector<int64_t> spatial{pads[2], pads[3], pads[6], pads[7]};
  if (std::any_of(spatial.begin(), spatial.end(), [](int64_t p) { return p < 0; }))
    return std::nullopt;
  return spatial;
}

// The pool node with the Pad's pads merged, when the two compute the same together.
std::optional<Node> merge(const Graph& g, const Node& pad, const Node& pool) {
  if (pool.op_type != "AveragePool" || !pool.domain.empty() || pool.inputs.size() != 1 ||
      pool.inputs[0] != pad.outputs[0] || pool.outputs.size() != 1)
    return std::nullopt;
  const auto add = zero_spatial_pads(g, pad);
  if (!add) return std::nullopt;
  const Value& padded = g.value(pad.outputs[0]);
  if (padded.is_graph_output || padded.consumers.size() != 1) return std::nullopt;
  if (pool.attrs.get_ints("kernel_shape").size() != 2 ||
      pool.attrs.get_string("auto_pad", "NOTSET") != "NOTSET")
    return std::nullopt;
  for (int64_t d : pool.attrs.get_ints("dilations"))
    if (d != 1) return std::nullopt;
  Node merged = pool;
  merged.inputs = {pad.inputs[0]};
  const bool pads_something = std::any_of(add->begin(), add->end(), [](int64_t p) { return p; });
  if (!pads_something) return merged;
  // The Pad's zeros count in the divisor; the pool's own pads must count too, and
  // ceil_mode's last window would see the padding differently.
  std::vector<int64_t> own = pool.attrs.get_ints("pads");
  if (own.empty()) own.assign(4, 0);
  const bool own_pads = std::any_of(own.begin(), own.end(), [](int64_t p) { return p; });
  if (own.size() != 4 || pool.attrs.get_int("ceil_mode", 0) != 0 ||
      (own_pads && pool.attrs.get_int("count_include_pad", 0) == 0))
    return std::nullopt;
  for (std::size_t i = 0; i < 4; ++i) own[i] += (*add)[i];
  merged.attrs.set("pads", own);
  merged.attrs.set("count_include_pad", int64_t{1});
  return merged;
}

}  // namespace

std::optional<Node> folded_average_pool(const Graph& g, const Step& s) {
  if (s.outputs.size() != 1) return std::nullopt;
  if (s.nodes.size() == 1) {
    const Node& n = g.node(s.nodes[0]);
    if (n.op_type != "AveragePool" || !n.domain.empty()) return std::nullopt;
    return n;
  }
  if (s.nodes.size() != 2) return std::nullopt;
  const Node& a = g.node(s.nodes[0]);
  const Node& b = g.node(s.nodes[1]);
  return a.op_type == "Pad" ? merge(g, a, b) : merge(g, b, a);
}

int fold_pads_into_pools(const Graph& g, std::vector<Step>& steps, int64_t opset) {
  std::vector<Step> fused;
  for (const Step& s : steps) {
    if (s.nodes.size() != 1 || s.outputs.size() != 1) continue;
    const Node& pad = g.node(s.nodes[0]);
    if (pad.op_type != "Pad" || g.value(pad.outputs[0]).consumers.size() != 1) continue;
    const NodeId pool_id = g.value(pad.outputs[0]).consumers[0];
    // The pool must be a lone step of its own (not in a fusion group).
    const bool lone = std::any_of(steps.begin(), steps.end(), [&](const Step& t) {
      return t.nodes.size() == 1 && t.nodes[0] == pool_id;
    });
    if (!lone) continue;
    auto merged = merge(g, pad, g.node(pool_id));
    if (!merged) continue;
    Step f;
    f.name = g.node(pool_id).name;
    f.op_type = "Pad+AveragePool";
    f.nodes = {s.nodes[0], pool_id};
    f.inputs = merged->inputs;
    f.outputs = merged->outputs;
    f.kernel = make_kernel(g, *merged, opset);
    fused.push_back(std::move(f));
  }
  for (Step& f : fused) substitute_step(steps, std::move(f));
  return static_cast<int>(fused.size());
}

std::shared_ptr<Kernel> make_runtime_step_kernel(const Graph& g, const Step& s, int64_t opset) {
  if (auto pool = folded_average_pool(g, s)) return make_kernel(g, *pool, opset);
  if (is_nhwc_batch_norm_candidate(g, s)) return make_batch_norm_kernel(g, s, /*nhwc=*/false);
  NodeId own = s.nodes.at(0);
  for (NodeId id : s.nodes)
    if (g.node(id).op_type == "MaxPool") own = id;
  return make_kernel(g, g.node(own), opset);
}

}  // namespace fx
