// SPDX-License-Identifier: Apache-2.0
#pragma once
// Opens an ONNX model file into the IR.
//
//   load_onnx(path, options) -> LoadedModel { graph, info, source }
//
// Steps: map the file; strip large weights (they stay in the mapping, see
// wire_format.h); parse the structure with libprotobuf; bind the symbolic dims the
// user named; run ONNX shape inference (nodes it cannot infer stay, marked
// shape_unknown); convert to Graph; validate. Every failure is a FileError naming
// the file and the cause.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace fx {

struct OnnxSource;

struct LoadOptions {
  std::map<std::string, int64_t> dims;  // symbolic dim name -> value ("batch" -> 1)
  bool infer_shapes = true;
  // raw_data at least this large is referenced in the file instead of parsed.
  std::size_t lazy_threshold_bytes = 1024;
};

struct LoadedModel {
  Graph graph;
  ModelInfo info;
  std::shared_ptr<OnnxSource> source;
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
