// SPDX-License-Identifier: Apache-2.0
#include "onnx/model_loader.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <map>

#include "onnx/graph_from_proto.h"
#include "onnx/onnx_source.h"
#include "onnx/range_shape.h"
#include "onnx/wire_format.h"
#include "util/error.h"
#include "util/stopwatch.h"

namespace fx {
namespace {

// Replaces dim_param NAME with the user's value in the graph's inputs (shape
// inference then carries the value through the graph).
void bind_dims(onnx::GraphProto& g, const std::map<std::string, int64_t>& dims,
               const std::string& path) {
  if (dims.empty()) return;
  std::map<std::string, bool> used;
  for (auto& [name, _] : dims) used[name] = false;
  auto bind = [&](onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!d.has_dim_param()) continue;
      auto it = dims.find(d.dim_param());
      if (it == dims.end()) continue;
      used[it->first] = true;
      d.set_dim_value(it->second);
    }
  };
  for (auto& in : *g.mutable_input()) bind(in);
  for (auto& out : *g.mutable_output()) bind(out);
  g.clear_value_info();  // stale symbolic shapes would conflict with the bound ones
  for (auto& [name, was_used] : used)
    if (!was_used)
      spdlog::warn("{}: --dim {}: no graph input has a dimension named '{}'", path, name, name);
}

void infer_shapes(onnx::ModelProto& m, const std::string& path) {
  onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/0,
                                   /*data_propagation=*/true);
  try {
    ShapeData data;
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts, &data);
    // A second pass carries the Range lengths found from the propagated values on.
    if (set_range_lengths(*m.mutable_graph(), data) > 0)
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    // Inference failing on one node must not refuse the model: keep what we have.
    spdlog::warn("{}: shape inference stopped early: {}", path, e.what());
  }
}

}  // namespace

void parse_dim_binding(const std::string& text, LoadOptions& options) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error("--dim expects NAME=N, got '" + text + "'");
  std::string name = text.substr(0, eq);
  try {
    std::size_t used = 0;
    long long v = std::stoll(text.substr(eq + 1), &used);
    if (used != text.size() - eq - 1 || v < 0) throw std::invalid_argument("bad");
    options.dims[name] = v;
  } catch (const std::exception&) {
    throw Error("--dim " + name + ": '" + text.substr(eq + 1) + "' is not a non-negative integer");
  }
}

LoadedModel load_onnx(const std::string& path, const LoadOptions& options) {
  Stopwatch clock;
  if (!std::filesystem::exists(path)) throw FileError(path, "no such file");
  auto file = MappedFile::open(path);
  if (file->size() == 0) throw FileError(path, "file is empty");

  onnx_wire::StrippedModel stripped;
  try {
    stripped = onnx_wire::strip_large_raw_data(file->bytes(), options.lazy_threshold_bytes);
  } catch (const std::runtime_error& e) {
    throw FileError(path, std::string("not a valid ONNX model (") + e.what() + ")");
  }

  auto source = std::make_shared<OnnxSource>();
  source->file = file;
  source->directory = std::filesystem::path(path).parent_path().string();
  if (!source->proto.ParseFromString(stripped.bytes))
    throw FileError(path, "not a valid ONNX model (protobuf parse failed)");
  onnx::ModelProto& m = source->proto;
  if (!m.has_graph() || (m.graph().node_size() == 0 && m.graph().output_size() == 0))
    throw FileError(path, "not an ONNX model: it holds no graph");
  if (m.ir_version() <= 0) throw FileError(path, "not an ONNX model: ir_version is missing");

  LoadedModel out;
  out.info.path = path;
  out.info.producer_name = m.producer_name();
  out.info.producer_version = m.producer_version();
  out.info.ir_version = m.ir_version();
  for (const auto& op : m.opset_import())
    out.info.opsets.emplace_back(op.domain().empty() ? "ai.onnx" : op.domain(), op.version());
  out.info.load_ms = clock.elapsed_ms();

  bind_dims(*m.mutable_graph(), options.dims, path);
  clock.restart();
  if (options.infer_shapes) infer_shapes(m, path);
  out.info.shape_inference_ms = clock.elapsed_ms();
  clock.restart();

  std::map<std::string, std::shared_ptr<const MappedFile>> external_files;
  GraphImportContext ctx;
  ctx.path = path;
  ctx.file = file;
  ctx.initializer_data = std::move(stripped.initializer_data);
  ctx.external = [&](const std::string& location) {
    auto it = external_files.find(location);
    if (it != external_files.end()) return it->second;
    std::filesystem::path p = std::filesystem::path(source->directory) / location;
    if (!std::filesystem::exists(p))
      throw FileError(
          path, "external data file '" + location + "' not found (looked for " + p.string() + ")");
    auto mapped = MappedFile::open(p.string());
    external_files.emplace(location, mapped);
    return mapped;
  };
  out.graph = graph_from_proto(m.graph(), ctx);
  try {
    out.graph.validate();
  } catch (const FileError&) {
    throw;
  } catch (const Error& e) {
    throw FileError(path, e.what());
  }
  out.graph.derive_scopes();
  for (const auto& n : out.graph.nodes())
    if (n.shape_unknown) ++out.info.unknown_shape_nodes;
  out.info.load_ms += clock.elapsed_ms();
  out.source = std::move(source);
  spdlog::debug("{}: {} nodes, {} values, loaded in {:.1f} ms (+{:.1f} ms shape inference)", path,
                out.graph.node_count(), out.graph.value_count(), out.info.load_ms,
                out.info.shape_inference_ms);
  return out;
}

InferredTypes infer_value_types(LoadedModel& model) {
  Stopwatch clock;
  InferredTypes out;
  if (!model.source) return out;
  onnx::ModelProto& m = model.source->proto;
  infer_shapes(m, model.info.path);
  const onnx::GraphProto& g = m.graph();
  out.entries.reserve(std::size_t(g.value_info_size() + g.output_size()));
  // As graph_from_proto: value_info, then the declared outputs over them.
  auto take = [&](const onnx::ValueInfoProto& vi) {
    const ValueId id = model.graph.find_value(vi.name());
    if (id == kNoValue) return;  // a value no node uses: load_onnx would keep it unused
    InferredTypes::Entry e{id, dtype_from_type(vi.type()), shape_from_type(vi.type())};
    if (e.dtype != DType::Undefined || e.shape.rank_known()) out.entries.push_back(std::move(e));
  };
  for (const auto& vi : g.value_info()) take(vi);
  for (const auto& vi : g.output()) take(vi);
  out.ms = clock.elapsed_ms();
  return out;
}

void apply_value_types(LoadedModel& model, InferredTypes&& types) {
  Graph& g = model.graph;
  for (auto& e : types.entries) {
    Value& v = g.value(e.value);
    if (e.dtype != DType::Undefined) v.dtype = e.dtype;
    if (e.shape.rank_known()) v.shape = std::move(e.shape);
  }
  int unknown = 0;
  for (std::size_t i = 0; i < g.node_count(); ++i) {
    Node& n = g.node(NodeId(i));
    n.shape_unknown = false;
    for (ValueId out : n.outputs)
      if (out != kNoValue && !g.value(out).shape.rank_known()) n.shape_unknown = true;
    unknown += n.shape_unknown;
  }
  model.info.unknown_shape_nodes = unknown;
  model.info.shape_inference_ms = types.ms;
}

}  // namespace fx
