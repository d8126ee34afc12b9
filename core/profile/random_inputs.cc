// SPDX-License-Identifier: Apache-2.0
#include "profile/random_inputs.h"

#include <algorithm>

#include "util/error.h"

namespace fx {
namespace {

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 bits, exact in float.
  float unit() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
};

// Exclusive upper bound for an integer input: the size of the axis it indexes when
// it feeds Gather's indices, else 2.
int64_t index_bound(const Graph& g, ValueId id) {
  int64_t bound = 0;
  for (NodeId n : g.value(id).consumers) {
    const Node& node = g.node(n);
    if (node.op_type != "Gather" || node.inputs.size() < 2 || node.inputs[1] != id) continue;
    const Shape& data = g.value(node.inputs[0]).shape;
    int64_t axis = node.attrs.get_int("axis", 0);
    if (!data.rank_known()) continue;
    if (axis < 0) axis += static_cast<int64_t>(data.rank());
    if (axis < 0 || axis >= static_cast<int64_t>(data.rank())) continue;
    const Dim& d = data[static_cast<std::size_t>(axis)];
    if (d.is_static() && d.value > 0) bound = bound == 0 ? d.value : std::min(bound, d.value);
  }
  return bound > 0 ? bound : 2;
}

}  // namespace

std::map<std::string, Tensor> random_inputs(const Graph& graph, uint64_t seed) {
  std::map<std::string, Tensor> inputs;
  SplitMix64 rng{seed};
  for (ValueId id : graph.runtime_inputs()) {
    const Value& v = graph.value(id);
    if (!v.shape.rank_known())
      throw Error("input '" + v.name + "' has an unknown rank; cannot generate random data");
    for (const Dim& d : v.shape.dims())
      if (!d.is_static())
        throw Error("input '" + v.name + "' has symbolic dim '" +
                    (d.symbol.empty() ? std::string("?") : d.symbol) + "': bind it with --dim " +
                    (d.symbol.empty() ? std::string("NAME") : d.symbol) + "=N");
    Tensor t(v.dtype, v.shape.static_dims());
    const int64_t n = t.numel();
    switch (v.dtype) {
      case DType::Float32: {
        float* p = t.data<float>();
        for (int64_t i = 0; i < n; ++i) p[i] = rng.unit() * 2.0f - 1.0f;
        break;
      }
      case DType::Int64: {
        const auto bound = static_cast<uint64_t>(index_bound(graph, id));
        int64_t* p = t.data<int64_t>();
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(rng.next() % bound);
        break;
      }
      case DType::Int32: {
        const auto bound = static_cast<uint64_t>(index_bound(graph, id));
        int32_t* p = t.data<int32_t>();
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(rng.next() % bound);
        break;
      }
      case DType::Bool: {
        auto* p = t.data<uint8_t>();
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng.next() & 1);
        break;
      }
      default:
        throw Error("input '" + v.name + "' has type " + std::string(dtype_name(v.dtype)) +
                    ", for which no random data can be generated (float32, int64, int32, bool)");
    }
    inputs.emplace(v.name, std::move(t));
  }
  return inputs;
}

}  // namespace fx
