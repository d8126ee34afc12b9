// SPDX-License-Identifier: Apache-2.0
#include "cuda_plan/device_memory_plan.h"

#include "ir/graph_queries.h"
#include "runtime/memory_plan.h"
#include "util/error.h"

namespace fx::cuda {

namespace {

int64_t aligned(int64_t bytes) {
  const int64_t a = DeviceMemoryPlan::kAlignment;
  return (bytes + a - 1) / a * a;
}

int64_t static_bytes(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  auto b = val.byte_size();
  if (!b)
    throw Error("CUDA memory plan: value '" + val.name + "' has no static shape (" +
                val.shape.str() + "); fix its dims with --dim NAME=VALUE");
  return *b;
}

}  // namespace

DeviceMemoryPlan DeviceMemoryPlan::build(const Graph& graph, const LaunchPlan& plan) {
  DeviceMemoryPlan d;
  d.buffer_of_value.assign(graph.value_count(), {});
  const MemoryPlan mp = MemoryPlan::build(graph, plan.plan_steps());
  // Arena: the slots one after another; a slot is as large as its largest value.
  std::vector<int64_t> slot_bytes(static_cast<std::size_t>(mp.slot_count()), 0);
  for (std::size_t v = 0; v < graph.value_count(); ++v) {
    const int s = mp.slot_of_value[v];
    if (s < 0) continue;
    const int64_t b = static_bytes(graph, static_cast<ValueId>(v));
    slot_bytes[static_cast<std::size_t>(s)] = std::max(slot_bytes[static_cast<std::size_t>(s)], b);
    d.unshared_bytes += b;
  }
  std::vector<int64_t> slot_offset(slot_bytes.size(), 0);
  for (std::size_t s = 0; s < slot_bytes.size(); ++s) {
    slot_offset[s] = d.arena_bytes;
    d.arena_bytes += aligned(std::max<int64_t>(slot_bytes[s], 1));
  }
  d.slot_count = mp.slot_count();
  for (std::size_t v = 0; v < graph.value_count(); ++v) {
    const int s = mp.slot_of_value[v];
    if (s < 0) continue;
    d.buffer_of_value[v] = {Region::Arena, slot_offset[static_cast<std::size_t>(s)],
                            static_bytes(graph, static_cast<ValueId>(v))};
  }
  // Constants and graph inputs the launches read (directly or through a view).
  auto place = [&](ValueId root) {
    DeviceBuffer& b = d.buffer_of_value[static_cast<std::size_t>(root)];
    if (b.region != Region::None) return;
    const Value& val = graph.value(root);
    if (constant_data(graph, root)) {
      b = {Region::Weights, d.weight_bytes, static_bytes(graph, root)};
      d.weight_bytes += aligned(std::max<int64_t>(b.bytes, 1));
    } else if (val.is_graph_input) {
      b = {Region::Inputs, d.input_bytes, static_bytes(graph, root)};
      d.input_bytes += aligned(std::max<int64_t>(b.bytes, 1));
    } else if (val.producer == kNoNode) {
      throw Error("CUDA memory plan: value '" + val.name + "' is read but never produced");
    }
  };
  for (const auto& l : plan.launches)
    for (ValueId v : l.inputs) place(mp.alias_root[static_cast<std::size_t>(v)]);
  for (ValueId v : graph.outputs()) place(mp.alias_root[static_cast<std::size_t>(v)]);
  // Views: their root's memory (a Reshape keeps the byte order).
  for (std::size_t v = 0; v < graph.value_count(); ++v) {
    const ValueId root = mp.alias_root[v];
    if (root == static_cast<ValueId>(v)) continue;
    const DeviceBuffer& rb = d.buffer_of_value[static_cast<std::size_t>(root)];
    if (rb.region == Region::None) continue;
    d.buffer_of_value[v] = {rb.region, rb.offset, static_bytes(graph, static_cast<ValueId>(v))};
  }
  return d;
}

}  // namespace fx::cuda
