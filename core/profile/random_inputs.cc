// SPDX-License-Identifier: Apache-2.0
#include "profile/random_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/half.h"
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

// Ops that pass their input 0 on with the same values (only the shape or the type
// changes): an index that flows through them still indexes what they feed.
bool passes_values(const std::string& op) {
  return op == "Cast" || op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
         op == "Unsqueeze" || op == "Identity" || op == "Expand";
}

// The static size of `data`'s `axis`, or 0 when unknown.
int64_t axis_size(const Graph& g, ValueId data, int64_t axis) {
  const Shape& s = g.value(data).shape;
  if (!s.rank_known()) return 0;
  const auto r = static_cast<int64_t>(s.rank());
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  const Dim& d = s[static_cast<std::size_t>(axis)];
  return d.is_static() && d.value > 0 ? d.value : 0;
}

// The smallest size of an axis that `id` indexes, following value-preserving ops
// (Gather/GatherElements/ScatterElements indices, OneHot with a constant depth).
int64_t indexed_size(const Graph& g, ValueId id, int depth = 0) {
  int64_t bound = 0;
  auto take = [&](int64_t b) {
    if (b > 0) bound = bound == 0 ? b : std::min(bound, b);
  };
  for (NodeId n : g.value(id).consumers) {
    const Node& node = g.node(n);
    const auto& in = node.inputs;
    const std::string& op = node.op_type;
    if ((op == "Gather" || op == "GatherElements") && in.size() >= 2 && in[1] == id) {
      take(axis_size(g, in[0], node.attrs.get_int("axis", 0)));
    } else if ((op == "ScatterElements" || op == "Scatter") && in.size() >= 2 && in[1] == id) {
      take(axis_size(g, in[0], node.attrs.get_int("axis", 0)));
    } else if (op == "OneHot" && in.size() >= 2 && in[0] == id && g.value(in[1]).is_constant()) {
      const auto& data = g.value(in[1]).data;
      if (data && (data->dtype() == DType::Int64 || data->dtype() == DType::Int32)) {
        auto bytes = data->bytes();
        int64_t v = 0;
        if (data->dtype() == DType::Int64 && bytes.size() >= 8) std::memcpy(&v, bytes.data(), 8);
        if (data->dtype() == DType::Int32 && bytes.size() >= 4) {
          int32_t w;
          std::memcpy(&w, bytes.data(), 4);
          v = w;
        }
        take(v);
      }
    } else if (passes_values(op) && !in.empty() && in[0] == id && depth < 8) {
      for (ValueId o : node.outputs) take(indexed_size(g, o, depth + 1));
    }
  }
  return bound;
}

template <class T>
void fill_ints(Tensor& t, SplitMix64& rng, uint64_t bound) {
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(rng.next() % bound);
}

}  // namespace

int64_t random_int_bound(const Graph& graph, ValueId input) {
  const int64_t b = indexed_size(graph, input);
  return b > 0 ? b : kRandomIntRange;
}

std::map<std::string, Tensor> random_inputs(const Graph& graph, uint64_t seed) {
  std::map<std::string, Tensor> inputs;
  SplitMix64 rng{seed};
  for (ValueId id : graph.runtime_inputs()) {
    const Value& v = graph.value(id);
    const std::string need = "; pass it with --input " + v.name + "=FILE.pb";
    if (!v.shape.rank_known())
      throw Error("input '" + v.name + "' has an unknown rank; cannot generate random data" + need);
    for (const Dim& d : v.shape.dims())
      if (!d.is_static())
        throw Error("input '" + v.name + "' has symbolic dim '" +
                    (d.symbol.empty() ? std::string("?") : d.symbol) + "': bind it with --dim " +
                    (d.symbol.empty() ? std::string("NAME") : d.symbol) + "=N");
    const DType dt = v.dtype;
    const bool supported = dt == DType::Float32 || dt == DType::Float64 || dtype_is_half(dt) ||
                           dt == DType::Bool || dt == DType::Int8 || dt == DType::UInt8 ||
                           dt == DType::Int16 || dt == DType::UInt16 || dt == DType::Int32 ||
                           dt == DType::UInt32 || dt == DType::Int64 || dt == DType::UInt64;
    if (!supported) {
      throw Error("input '" + v.name + "' has type " +
                  std::string(dt == DType::Undefined ? "undeclared" : dtype_name(dt)) +
                  ", for which no random data can be invented" + need);
    }
    Tensor t(dt, v.shape.static_dims());
    const int64_t n = t.numel();
    const auto bound = static_cast<uint64_t>(random_int_bound(graph, id));
    switch (dt) {
      case DType::Float32: {
        float* p = t.data<float>();
        for (int64_t i = 0; i < n; ++i) p[i] = rng.unit() * 2.0f - 1.0f;
        break;
      }
      case DType::Float64: {
        double* p = t.data<double>();
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<double>(rng.unit()) * 2.0 - 1.0;
        break;
      }
      case DType::Float16:
      case DType::BFloat16: {
        auto* p = t.data<uint16_t>();
        // As many random bits as the type's significand holds (11, 8), so that every
        // value is exact and none rounds up to 1.
        const int bits = dt == DType::Float16 ? 11 : 8;
        const float step = std::ldexp(1.0f, -bits);
        for (int64_t i = 0; i < n; ++i) {
          const float f = static_cast<float>(rng.next() >> (64 - bits)) * step * 2.0f - 1.0f;
          p[i] = dt == DType::Float16 ? float_to_half(f) : float_to_bfloat16(f);
        }
        break;
      }
      case DType::Bool: {
        auto* p = t.data<uint8_t>();
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng.next() & 1);
        break;
      }
      case DType::Int8: fill_ints<int8_t>(t, rng, std::min<uint64_t>(bound, 128)); break;
      case DType::UInt8: fill_ints<uint8_t>(t, rng, std::min<uint64_t>(bound, 256)); break;
      case DType::Int16: fill_ints<int16_t>(t, rng, std::min<uint64_t>(bound, 32768)); break;
      case DType::UInt16: fill_ints<uint16_t>(t, rng, std::min<uint64_t>(bound, 65536)); break;
      case DType::Int32: fill_ints<int32_t>(t, rng, bound); break;
      case DType::UInt32: fill_ints<uint32_t>(t, rng, bound); break;
      case DType::Int64: fill_ints<int64_t>(t, rng, bound); break;
      case DType::UInt64: fill_ints<uint64_t>(t, rng, bound); break;
      default: break;
    }
    inputs.emplace(v.name, std::move(t));
  }
  return inputs;
}

}  // namespace fx
