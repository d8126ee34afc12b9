// SPDX-License-Identifier: Apache-2.0
#include "onnx/model_loader.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <map>
#include <set>

#include "onnx/graph_from_proto.h"
#include "onnx/onnx_source.h"
#include "onnx/range_shape.h"
#include "onnx/tensor_proto.h"
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

// Unbound symbolic dims of the graph's inputs (initializers excluded) get values by
// the default rule; a dim with neither a value nor a name is named "<input>_dim<axis>"
// first so that it can be bound like the others.
std::vector<transforms::AssumedDim> assume_unbound_dims(
    onnx::GraphProto& g, const std::map<std::string, int64_t>& bound) {
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  std::vector<transforms::InputSignature> sigs;
  for (auto& in : *g.mutable_input()) {
    if (initializers.count(in.name()) || !in.type().has_tensor_type() ||
        !in.type().tensor_type().has_shape())
      continue;
    auto* dims = in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
    for (int axis = 0; axis < dims->size(); ++axis) {
      auto& d = (*dims)[axis];
      if (!d.has_dim_value() && d.dim_param().empty())
        d.set_dim_param(in.name() + "_dim" + std::to_string(axis));
    }
    sigs.push_back({in.name(), dtype_from_type(in.type()), shape_from_type(in.type())});
  }
  return transforms::assume_dims(sigs, bound);
}

// Values a kernel reads or writes whose shape is not all numbers (what the estimates miss).
int count_not_static(const Graph& g) {
  int n = 0;
  for (const auto& v : g.values()) n += !v.is_constant() && !v.shape.is_static();
  return n;
}

// Adds what a later canonicalization round did to the first round's record.
void merge_record(transforms::CanonicalRecord& into, const transforms::CanonicalRecord& more) {
  for (std::size_t i = 0; i < into.passes.size() && i < more.passes.size(); ++i) {
    auto& a = into.passes[i];
    const auto& b = more.passes[i];
    a.nodes_removed += b.nodes_removed;
    for (const auto& [op, n] : b.removed_ops) a.removed_ops[op] += n;
    a.weights.insert(a.weights.end(), b.weights.begin(), b.weights.end());
    a.weight_bytes += b.weight_bytes;
    a.merged += b.merged;
    a.folded_into.insert(b.folded_into.begin(), b.folded_into.end());
    if (b.ran) {
      a.ran = true;
      a.skipped_because.clear();
    } else if (!a.ran) {
      a.skipped_because = b.skipped_because;  // the last round says why it did not run
    }
  }
  into.nodes_after = more.nodes_after;
  into.ms += more.ms;
}

// ONNX data propagation does not follow every shape computation (opset 11's Unsqueeze,
// for one), so shapes past such a computation stay unknown at import; once folding made
// it a constant they are known. Shape inference runs again on a copy of the model whose
// folded nodes are replaced by their (small) constants; the shapes it finds go into the
// canonical graph, and the passes run again (Shape nodes of now-known shapes fold).
// Rounds repeat while the unknown shapes shrink.
void infer_again_after_folding(LoadedModel& out, const onnx::ModelProto& m,
                               const transforms::CanonicalOptions& options,
                               const std::string& path) {
  constexpr std::size_t kSmallConstantBytes = 1 << 16;  // shape-like values, not weights
  // Each round reaches one more shape computation (a transformer layer, typically): the
  // rounds go on while they make progress, bounded for a pathological chain.
  for (int round = 0; round < 64; ++round) {
    const int unknown = count_not_static(out.graph);
    if (unknown == 0) return;
    onnx::ModelProto copy = m;
    onnx::GraphProto& g = *copy.mutable_graph();
    std::set<std::string> initializers;
    for (const auto& t : g.initializer()) initializers.insert(t.name());
    std::set<std::string> folded;
    for (const auto& v : out.graph.values())
      if (v.is_constant() && !initializers.count(v.name) &&
          v.data->byte_size() <= kSmallConstantBytes && dtype_size(v.data->dtype()) > 0)
        folded.insert(v.name);
    if (folded.empty()) return;
    auto* nodes = g.mutable_node();
    for (int i = nodes->size() - 1; i >= 0; --i) {
      bool all = (*nodes)[i].output_size() > 0;
      for (const auto& o : (*nodes)[i].output()) all = all && (o.empty() || folded.count(o));
      if (all) nodes->DeleteSubrange(i, 1);
    }
    std::set<std::string> produced;
    for (const auto& n : g.node())
      for (const auto& o : n.output()) produced.insert(o);
    for (const auto& name : folded)
      if (!produced.count(name))
        tensor_to_proto(*out.graph.value(out.graph.find_value(name)).data, name,
                        *g.add_initializer());
    g.clear_value_info();
    infer_shapes(copy, path);
    Graph& graph = out.graph;
    auto take = [&](const onnx::ValueInfoProto& vi) {
      const ValueId id = graph.find_value(vi.name());
      if (id == kNoValue || graph.value(id).shape.is_static()) return;
      const Shape s = shape_from_type(vi.type());
      if (!s.is_static() && (!s.rank_known() || graph.value(id).shape.rank_known())) return;
      graph.value(id).shape = s;
      if (graph.value(id).dtype == DType::Undefined)
        graph.value(id).dtype = dtype_from_type(vi.type());
    };
    for (const auto& vi : g.value_info()) take(vi);
    for (std::size_t i = 0; i < graph.node_count(); ++i) {
      Node& n = graph.node(NodeId(i));
      n.shape_unknown = false;
      for (ValueId v : n.outputs)
        if (v != kNoValue && !graph.value(v).shape.rank_known()) n.shape_unknown = true;
    }
    spdlog::debug("{}: shape inference after folding (round {}): {} -> {} values of unknown shape",
                  path, round + 1, unknown, count_not_static(graph));
    transforms::CanonicalRecord more;
    out.graph = transforms::canonicalize(out.graph, options, &more);
    merge_record(out.canonical, more);
    if (count_not_static(out.graph) >= unknown) return;
  }
}

}  // namespace

LoadOptions command_load_options(const std::vector<std::string>& dim_bindings,
                                 const std::vector<std::string>& disabled_passes,
                                 bool no_canonicalize) {
  LoadOptions lo;
  for (const auto& d : dim_bindings) parse_dim_binding(d, lo);
  lo.assume_dims = true;
  lo.canonical.enabled = !no_canonicalize;
  lo.canonical.disabled.insert(disabled_passes.begin(), disabled_passes.end());
  transforms::check_pass_names(lo.canonical);
  return lo;
}

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

  std::map<std::string, int64_t> dims = options.dims;
  if (options.assume_dims) {
    out.assumed_dims = assume_unbound_dims(*m.mutable_graph(), options.dims);
    for (const auto& a : out.assumed_dims) dims[a.symbol] = a.value;
    if (!out.assumed_dims.empty())
      spdlog::debug("{}: {}", path, transforms::assumed_dims_text(out.assumed_dims));
  }
  bind_dims(*m.mutable_graph(), dims, path);
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
  if (options.canonical.enabled) {
    // Merged duplicates would hide folded shape values from the inference rounds (they
    // look them up by name): merging waits for the last round.
    transforms::CanonicalOptions rounds = options.canonical;
    if (options.infer_shapes) rounds.disabled.insert("duplicate-initializers");
    out.graph = transforms::canonicalize(out.graph, rounds, &out.canonical);
    if (options.infer_shapes && out.canonical.enabled) {
      infer_again_after_folding(out, m, rounds, path);
      transforms::CanonicalRecord last;
      out.graph = transforms::canonicalize(out.graph, options.canonical, &last);
      merge_record(out.canonical, last);
    }
  }
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
