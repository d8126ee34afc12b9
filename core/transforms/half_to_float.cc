// SPDX-License-Identifier: Apache-2.0
// half-to-float: a model that computes in float16 behind a float32 interface is computed
// in float32, as ONNX Runtime's CPU provider does (its InsertCastTransformer runs each
// node without a float16 kernel on float32 and lets adjacent such nodes share the
// float32 tensor, so that only the model's boundary converts). The runtime's kernels
// compute half types in float32 anyway (runtime/half_adapter.h): keeping the tensors
// between them in float16 only adds a conversion on each side of every kernel, and hides
// the float32 graph from the fusion patterns and layout planning that expect it.
//
// Every float16 value becomes float32 (initializers widened), a Cast to float16 becomes
// a Cast to float32, and a Cast that is then float32 to float32 becomes an Identity for
// identity-elimination to remove. Results differ from float16 arithmetic by its rounding
// (they are the more precise ones). The pass leaves the graph alone when float16 is part
// of its interface (a graph input or output: the caller gives and expects 2-byte
// values), when a node creates float16 from an attribute (ConstantOfShape's value, a
// dtype of RandomNormal or EyeLike: its kernel would still write 2-byte values), and when
// the graph has subgraphs (their bodies keep their own types).

#include <cstring>

#include "ir/half_bits.h"
#include "transforms/canonical.h"
#include "transforms/canonical_passes.h"

namespace fx::transforms {
namespace {

constexpr int64_t kOnnxFloat = 1, kOnnxFloat16 = 10;

std::shared_ptr<TensorData> widened(const TensorData& d) {
  auto half = d.as<uint16_t>();
  std::vector<std::byte> bytes(half.size() * sizeof(float));
  for (std::size_t i = 0; i < half.size(); ++i) {
    const float f = fx::half_to_float(half[i]);
    std::memcpy(bytes.data() + i * sizeof(float), &f, sizeof(float));
  }
  return TensorData::owned(DType::Float32, d.dims(), std::move(bytes));
}

// Why the pass must leave `g` alone; empty when it may widen it.
std::string why_not(const Graph& g) {
  for (ValueId v : g.inputs())
    if (g.value(v).dtype == DType::Float16 && !g.value(v).is_constant())
      return "float16 graph input";
  for (ValueId v : g.outputs())
    if (g.value(v).dtype == DType::Float16) return "float16 graph output";
  for (const Node& n : g.nodes()) {
    if (has_subgraph(n)) return "graph has subgraphs";
    for (const auto& [name, value] : n.attrs.all()) {
      if (const auto* t = std::get_if<std::shared_ptr<TensorData>>(&value);
          t && *t && (*t)->dtype() == DType::Float16)
        return n.op_type + " makes float16 from an attribute";
      const auto* i = std::get_if<int64_t>(&value);
      if (i && *i == kOnnxFloat16 &&
          (name == "dtype" || name == "output_dtype" || (name == "to" && n.op_type != "Cast")))
        return n.op_type + " makes float16 from an attribute";
    }
  }
  return {};
}

}  // namespace

Graph half_to_float(const Graph& g, PassRecord& record) {
  bool any = false;
  for (const Value& v : g.values()) any = any || v.dtype == DType::Float16;
  if (!any) return g;
  if (std::string why = why_not(g); !why.empty()) {
    record.skipped_because = why;
    return g;
  }
  Graph out = g;
  for (std::size_t i = 0; i < out.value_count(); ++i) {
    Value& v = out.value(static_cast<ValueId>(i));
    if (v.dtype != DType::Float16 && !(v.data && v.data->dtype() == DType::Float16)) continue;
    if (v.data) v.data = widened(*v.data);
    v.dtype = DType::Float32;
    ++record.widened;
  }
  for (std::size_t i = 0; i < out.node_count(); ++i) {
    Node& n = out.node(static_cast<NodeId>(i));
    if (n.op_type != "Cast" || !(n.domain.empty() || n.domain == "ai.onnx") || n.inputs.empty() ||
        n.inputs[0] == kNoValue)
      continue;
    if (n.attrs.get_int("to", 0) == kOnnxFloat16) n.attrs.set("to", int64_t{kOnnxFloat});
    if (n.attrs.get_int("to", 0) == kOnnxFloat && out.value(n.inputs[0]).dtype == DType::Float32) {
      n.op_type = "Identity";
      n.attrs = Attributes();
      ++record.casts_to_identity;  // identity-elimination then removes it
    }
  }
  return out;
}

}  // namespace fx::transforms
