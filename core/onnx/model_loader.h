// SPDX-License-Identifier: Apache-2.0
#pragma once
// Opens an ONNX model file into the IR.
//
//   load_onnx(path, options) -> LoadedModel { graph, info, source }
//
// Steps: map the file; strip large weights (they stay in the mapping, see
// wire_format.h); parse the structure with libprotobuf; bind the symbolic dims the
// user named and, with assume_dims, give the others assumed values
// (transforms/dim_defaults.h); run ONNX shape inference (nodes it cannot infer stay, marked
// shape_unknown); convert to Graph; validate; with canonical.enabled, rewrite it to
// the canonical form (transforms/canonical.h). Every failure is a FileError naming
// the file and the cause.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "transforms/canonical.h"
#include "transforms/dim_defaults.h"

namespace fx {

struct OnnxSource;

struct LoadOptions {
  std::map<std::string, int64_t> dims;  // symbolic dim name -> value ("batch" -> 1)
  bool infer_shapes = true;
  // raw_data at least this large is referenced in the file instead of parsed.
  std::size_t lazy_threshold_bytes = 1024;
  // Unbound symbolic input dims get assumed values (the commands and the explorer set
  // this; a library caller that wants them symbolic leaves it off).
  bool assume_dims = false;
  // The canonical passes (off by default for the same reason: the commands turn it on).
  transforms::CanonicalOptions canonical{.enabled = false, .disabled = {}};
};

// What the commands and the explorer load with: assumed dims on, canonical form on
// (unless no_canonicalize), the named passes disabled. Throws Error for an unknown pass.
LoadOptions command_load_options(const std::vector<std::string>& dim_bindings,
                                 const std::vector<std::string>& disabled_passes,
                                 bool no_canonicalize);

struct LoadedModel {
  Graph graph;
  ModelInfo info;
  std::shared_ptr<OnnxSource> source;
  std::vector<transforms::AssumedDim> assumed_dims;  // dims bound by the default rule
  transforms::CanonicalRecord canonical;             // what canonicalization folded
};

LoadedModel load_onnx(const std::string& path, const LoadOptions& options = {});

// Shapes in a second step, for the explorer, which paints the graph before they are
// known: load_onnx with infer_shapes = false; then, in a worker, infer_value_types runs
// ONNX shape inference on model.source's proto and collects the dtypes and shapes
// load_onnx would have set (it writes the proto, only reads the graph); then
// apply_value_types, when no other thread reads the graph, sets them, the nodes'
// shape_unknown flags and info.unknown_shape_nodes / shape_inference_ms.
struct InferredTypes {
  struct Entry {
    ValueId value = kNoValue;
    DType dtype = DType::Undefined;  // Undefined: unchanged
    Shape shape;                     // rank unknown: unchanged
  };
  std::vector<Entry> entries;  // in the order load_onnx applies them
  double ms = 0;
};
InferredTypes infer_value_types(LoadedModel& model);
void apply_value_types(LoadedModel& model, InferredTypes&& types);

// Parses "NAME=N" into options.dims; throws Error on bad syntax.
void parse_dim_binding(const std::string& text, LoadOptions& options);

}  // namespace fx
