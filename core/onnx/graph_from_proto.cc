// SPDX-License-Identifier: Apache-2.0
#include "onnx/graph_from_proto.h"

#include <algorithm>

#include "util/error.h"

namespace fx {

Shape shape_from_type(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return {};
  std::vector<Dim> dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (d.has_dim_value())
      dims.push_back(Dim::fixed(d.dim_value()));
    else if (d.has_dim_param())
      dims.push_back(Dim::named(d.dim_param()));
    else
      dims.push_back(Dim{});
  }
  return Shape(std::move(dims));
}

ValueKind kind_from_type(const onnx::TypeProto& type) {
  if (type.has_sequence_type()) return ValueKind::Sequence;
  if (type.has_optional_type()) return ValueKind::Optional;
  return ValueKind::Tensor;
}

DType dtype_from_type(const onnx::TypeProto& type) {
  if (type.has_sequence_type()) return dtype_from_type(type.sequence_type().elem_type());
  if (type.has_optional_type()) return dtype_from_type(type.optional_type().elem_type());
  if (!type.has_tensor_type()) return DType::Undefined;
  const int t = type.tensor_type().elem_type();
  return t != 0 && dtype_is_valid(t) ? static_cast<DType>(t) : DType::Undefined;
}

namespace {

void apply_type(Value& v, const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) {
    v.kind = kind_from_type(type);
    if (DType d = dtype_from_type(type); d != DType::Undefined) v.dtype = d;
    return;
  }
  if (DType d = dtype_from_type(type); d != DType::Undefined) v.dtype = d;
  Shape s = shape_from_type(type);
  if (s.rank_known()) v.shape = std::move(s);
}

int64_t count_nodes(const onnx::GraphProto& g) {
  int64_t n = g.node_size();
  for (const auto& node : g.node())
    for (const auto& a : node.attribute()) {
      if (a.has_g()) n += count_nodes(a.g());
      for (const auto& sg : a.graphs()) n += count_nodes(sg);
    }
  return n;
}

SubgraphRef import_subgraph(const onnx::GraphProto& gp, const GraphImportContext& ctx) {
  GraphImportContext sub;
  sub.path = ctx.path;
  sub.file = ctx.file;
  sub.external = ctx.external;
  sub.subgraph = true;  // its initializers were left in the proto: no regions
  return SubgraphRef{gp.name(), count_nodes(gp),
                     std::make_shared<const Graph>(graph_from_proto(gp, sub))};
}

AttributeValue convert_attribute(const onnx::AttributeProto& a, const GraphImportContext& ctx) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT: return a.i();
    case A::FLOAT: return a.f();
    case A::STRING: return a.s();
    case A::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case A::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
    case A::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case A::TENSOR: return tensor_from_proto(a.t(), ctx.path, ctx.external);
    case A::GRAPH: return import_subgraph(a.g(), ctx);
    case A::GRAPHS: {
      int64_t n = 0;
      for (const auto& g : a.graphs()) n += count_nodes(g);
      return SubgraphRef{a.name(), n, nullptr};
    }
    default:
      // Older files omit `type`; infer it from whichever field is set.
      if (a.has_t()) return tensor_from_proto(a.t(), ctx.path, ctx.external);
      if (a.has_g()) return import_subgraph(a.g(), ctx);
      if (a.ints_size()) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
      if (a.floats_size()) return std::vector<float>(a.floats().begin(), a.floats().end());
      if (a.strings_size()) return std::vector<std::string>(a.strings().begin(), a.strings().end());
      if (a.has_s()) return a.s();
      if (a.has_f()) return a.f();
      return a.i();
  }
}

}  // namespace

Graph graph_from_proto(const onnx::GraphProto& gp, const GraphImportContext& ctx) {
  Graph g;
  // Values: initializers, inputs and (about) one output per node.
  g.reserve(std::size_t(gp.node_size()),
            std::size_t(gp.initializer_size() + gp.input_size() + gp.node_size()) + 16);
  // Initializers first: constants with data.
  for (int i = 0; i < gp.initializer_size(); ++i) {
    const auto& t = gp.initializer(i);
    std::shared_ptr<TensorData> data;
    const auto* region = static_cast<std::size_t>(i) < ctx.initializer_data.size() &&
                                 ctx.initializer_data[static_cast<std::size_t>(i)]
                             ? &*ctx.initializer_data[static_cast<std::size_t>(i)]
                             : nullptr;
    if (region) {
      // raw_data left in the mapped file: reference it, after the same checks.
      std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
      if (!dtype_is_valid(t.data_type()))
        throw FileError(ctx.path, "tensor '" + t.name() + "' has unknown data type " +
                                      std::to_string(t.data_type()));
      auto dtype = static_cast<DType>(t.data_type());
      int64_t numel = checked_numel(dims, ctx.path, "tensor '" + t.name() + "'");
      check_data_size(numel, dtype, region->length, ctx.path, "tensor '" + t.name() + "'");
      data = TensorData::in_file(dtype, std::move(dims), ctx.file, region->offset, region->length);
    } else {
      data = tensor_from_proto(t, ctx.path, ctx.external);
    }
    if (g.find_value(t.name()) != kNoValue)
      throw FileError(ctx.path, "initializer '" + t.name() + "' is defined twice");
    Value v;
    v.name = t.name();
    v.dtype = data->dtype();
    v.shape = Shape::of(data->dims());
    v.data = std::move(data);
    g.add_value(std::move(v));
  }
  for (const auto& in : gp.input()) {
    if (in.name().empty()) throw FileError(ctx.path, "a graph input has no name");
    ValueId id = g.value_by_name_or_add(in.name());
    Value& v = g.value(id);
    if (!v.is_constant()) apply_type(v, in.type());
    if (!v.is_graph_input) g.add_input(id);
  }
  for (const auto& vi : gp.value_info()) {
    ValueId id = g.value_by_name_or_add(vi.name());
    apply_type(g.value(id), vi.type());
  }
  std::vector<ValueId> outputs;
  for (const auto& out : gp.output()) {
    if (out.name().empty())
      throw FileError(ctx.path, "graph output #" + std::to_string(outputs.size()) + " has no name");
    ValueId id = g.value_by_name_or_add(out.name());
    apply_type(g.value(id), out.type());
    outputs.push_back(id);
  }

  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& np = gp.node(i);
    Node n;
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.name = np.name().empty() ? np.op_type() + "_" + std::to_string(i) : np.name();
    // Names must be unique for stable plan ids; disambiguate duplicates.
    if (g.find_node(n.name) != kNoNode) n.name += "#" + std::to_string(i);
    for (const auto& in : np.input())
      n.inputs.push_back(in.empty() ? kNoValue : g.value_by_name_or_add(in));
    for (const auto& out : np.output()) {
      if (out.empty()) {
        n.outputs.push_back(kNoValue);
        continue;
      }
      ValueId id = g.value_by_name_or_add(out);
      if (g.value(id).producer != kNoNode)
        throw FileError(ctx.path,
                        "tensor '" + out + "' is produced twice (again by node '" + n.name + "')");
      n.outputs.push_back(id);
    }
    for (const auto& a : np.attribute()) n.attrs.set(a.name(), convert_attribute(a, ctx));
    // What the node's subgraphs read from this graph becomes its implicit inputs.
    for (const auto& [name, attr] : n.attrs.all()) {
      const auto* ref = std::get_if<SubgraphRef>(&attr);
      if (!ref || !ref->graph) continue;
      for (ValueId outer : ref->graph->outer_refs()) {
        ValueId id = g.value_by_name_or_add(ref->graph->value(outer).name);
        auto implicit_begin = n.inputs.end() - n.implicit_inputs;
        if (std::find(implicit_begin, n.inputs.end(), id) != n.inputs.end()) continue;
        n.inputs.push_back(id);
        ++n.implicit_inputs;
      }
    }
    for (ValueId out : n.outputs)
      if (out != kNoValue && !g.value(out).shape.rank_known()) n.shape_unknown = true;
    g.add_node(std::move(n));
  }
  for (ValueId id : outputs) g.add_output(id);
  if (ctx.subgraph) {
    for (std::size_t i = 0; i < g.value_count(); ++i) {
      const Value& v = g.value(ValueId(i));
      if (v.producer == kNoNode && !v.is_graph_input && !v.is_constant() &&
          (!v.consumers.empty() || v.is_graph_output))
        g.add_outer_ref(ValueId(i));
    }
  }
  return g;
}

}  // namespace fx
